"""Errors with messages a user can act on. The CLI prints them and exits non-zero.

Messages never carry secrets: servers sometimes echo request headers in their error bodies, and error bodies end
up in messages, so :func:`redact` removes the credentials legalrag knows about (API keys and tokens in the
environment, the headers a client sent) and anything shaped like a bearer token before such text is kept.
"""

from __future__ import annotations

import os
import re


class LegalRagError(Exception):
    """Base class. The message should say what went wrong, where (file, line, field) and what to do."""


class InputError(LegalRagError):
    """Bad user input: a malformed file, a missing field, an unknown id."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None, field: str | None = None):
        where = ""
        if path is not None:
            where = str(path)
            if line is not None:
                where += f":{line}"
            if field is not None:
                where += f" (field {field!r})"
            where += ": "
        super().__init__(where + message)
        self.path, self.line, self.field = path, line, field


class IndexError_(LegalRagError):
    """An index directory that is missing, incomplete, or written by an incompatible version."""


class WriteLockError(LegalRagError):
    """Another process is writing the same index, model or cache directory right now."""


class MissingDependencyError(LegalRagError):
    """An optional extra is not installed."""


class ModelError(LegalRagError):
    """A model file is missing or corrupt, or a backend cannot be started."""


class EndpointError(LegalRagError):
    """A remote endpoint is unreachable, refuses the request, or answers in the wrong format."""


class StructuredOutputError(LegalRagError):
    """An LLM reply could not be parsed into the requested shape after all retries; carries the raw replies."""

    def __init__(self, message: str, raw: list[str] | None = None, record: object = None):
        super().__init__(message)
        self.raw = raw or []
        self.record = record  # llm.structured.CallRecord: attempts, usage, errors


# -- keeping secrets out of messages, traces, logs and caches --------------------------------------------

_SECRET_NAME = re.compile(r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)S?$|_AUTH$", re.IGNORECASE)
_SHAPES = re.compile(r"(?i)(\b(?:bearer|token|basic)\s+)[A-Za-z0-9._~+/=-]{8,}|\bsk-[A-Za-z0-9_-]{8,}"
                     r"|(\b(?:api[_-]?key|x-api-key|access[_-]?token|token|key)\b[\"']?\s*[:=]\s*[\"']?)"
                     r"[A-Za-z0-9._~+/-]{8,}")
MASK = "***"


def secret_values() -> list[str]:
    """Values of environment variables whose names say they hold a credential (8 characters or longer)."""
    return sorted({v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8}, key=len,
                  reverse=True)


_AUTH_HEADERS = ("authorization", "x-api-key", "api-key", "x-auth-token", "proxy-authorization")


def header_secrets(headers) -> list[str]:
    """The credential values in request ``headers`` (``Bearer``/``Token`` prefixes removed)."""
    out = []
    for k, v in dict(headers or {}).items():
        if str(k).lower() in _AUTH_HEADERS and v:
            value = str(v).split(" ", 1)[-1] if str(v).lower().startswith(("bearer ", "token ", "basic ")) else str(v)
            out += [value, str(v)]
    return out


def redact(text: str, extra=()) -> str:
    """``text`` with known secret values (the environment's credentials and ``extra``, e.g. the key a client
    was given) and token-shaped strings replaced by ``***``."""
    for value in sorted({*secret_values(), *(e for e in extra if e and len(e) >= 4)}, key=len, reverse=True):
        text = text.replace(value, MASK)
    return _SHAPES.sub(lambda m: (m.group(1) or m.group(2) or "") + MASK, text)
