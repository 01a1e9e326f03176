"""Read judgment files shaped like JuDGE's ``expected.jsonl``: one ``{"id": ..., "document": ...}`` a line."""

from __future__ import annotations

import os

from legalrag.errors import InputError
from legalrag.io import read_jsonl


def load_judgments(path: str | os.PathLike, *, strict: bool = True) -> dict[str, str | None]:
    """Map case id -> judgment text.

    ``strict`` (gold files): every line needs a string ``document``. Otherwise (predictions) a missing or
    non-string document is kept as ``None`` and scored as an empty judgment. Repeated ids are always an error.
    """
    out: dict[str, str | None] = {}
    for lineno, rec in read_jsonl(path):
        if "id" not in rec:
            raise InputError("missing field; every line needs an id and a document", path=str(path),
                             line=lineno, field="id")
        doc_id = str(rec["id"])
        if doc_id in out:
            raise InputError(f"id {doc_id!r} appears twice; ids must be unique", path=str(path), line=lineno,
                             field="id")
        doc = rec.get("document")
        if not isinstance(doc, str):
            if strict:
                raise InputError("missing or non-text field; every line needs a document string",
                                 path=str(path), line=lineno, field="document")
            doc = None
        out[doc_id] = doc
    if not out:
        raise InputError("the file has no judgments", path=str(path))
    return out
