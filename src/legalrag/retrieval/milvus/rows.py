"""Documents as the rows of a legalrag Milvus collection: the stored fields, the text the engine's BM25 indexes,
the content hash a sync compares, and the rows made a batch at a time for a streamed build."""

from __future__ import annotations

import hashlib
import itertools
import json
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from legalrag.errors import InputError
from legalrag.types import Document

VARCHAR_MAX = 65535  # bytes, Milvus's largest VARCHAR
INSERT_BATCH = 500


def doc_sha(doc: Document) -> str:
    return hashlib.sha256(json.dumps(doc.to_dict(), ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def _cut_bytes(text: str, limit: int) -> str:
    raw = text.encode("utf-8")
    return text if len(raw) <= limit else raw[:limit].decode("utf-8", errors="ignore")


def content_text(doc: Document) -> str:
    """What the engine's BM25 indexes: the law title and the text (as the local BM25's default title mode)."""
    law = str(doc.metadata.get("law", "") or "")
    return _cut_bytes(f"{law}\n{doc.text}" if law and not doc.text.startswith(law) else doc.text, VARCHAR_MAX)


def size_of(x: Any) -> int | None:
    try:
        return len(x)
    except TypeError:
        return None


def _row(d: Document, vector: np.ndarray | None) -> dict[str, Any]:
    row = {"id": d.id, "law": _cut_bytes(str(d.metadata.get("law", "") or ""), 1024),
           "article": _cut_bytes(str(d.metadata.get("article", "") or ""), 128),
           "title": _cut_bytes(d.title, 4096), "sha": doc_sha(d), "content": content_text(d)}
    if vector is not None:
        row["vec"] = vector.tolist()
    return row


def rows_for(documents: Sequence[Document], vectors: np.ndarray | None) -> list[dict[str, Any]]:
    return [_row(d, None if vectors is None else vectors[i]) for i, d in enumerate(documents)]


def iter_rows(documents: Iterable[Document], vectors: Any = None, *, batch: int | None = None
              ) -> Iterator[dict[str, Any]]:
    """The rows of ``documents`` one at a time, the documents consumed lazily and the vectors (aligned with
    them: an array, a ``np.memmap`` or anything sliced by row ranges) read ``batch`` rows (default
    :data:`INSERT_BATCH`) at a time, so only one batch is ever held as Python lists. A count mismatch between
    documents and vectors is an InputError."""
    it, start, batch = iter(documents), 0, batch or INSERT_BATCH
    while docs := list(itertools.islice(it, batch)):
        vecs = None
        if vectors is not None:
            vecs = np.asarray(vectors[start:start + len(docs)], dtype=np.float32)
            if len(vecs) != len(docs):
                raise InputError(f"{start + len(vecs)} vectors for at least {start + len(docs)} documents")
        for i, d in enumerate(docs):
            yield _row(d, None if vecs is None else vecs[i])
        start += len(docs)
    n = size_of(vectors) if vectors is not None else None
    if n is not None and n != start:
        raise InputError(f"{n} vectors for {start} documents")
