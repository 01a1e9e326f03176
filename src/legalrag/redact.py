"""Keep secrets out of everything legalrag writes or shows: error messages, traces, logs, caches.

Servers sometimes echo request headers in their error bodies, and error bodies end up in exception messages;
:func:`redact` removes the values of the credentials legalrag knows about (API keys and tokens in the
environment) and anything shaped like a bearer token before such text is kept anywhere.
"""

from __future__ import annotations

import os
import re

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
