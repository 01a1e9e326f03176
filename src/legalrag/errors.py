"""Errors with messages a user can act on. The CLI prints them and exits non-zero."""

from __future__ import annotations


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
