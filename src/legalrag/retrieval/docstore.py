"""The documents of an index, read lazily from ``documents.jsonl``.

Opening an index memory-maps the file and finds its line breaks (tens of milliseconds for 55k articles), so
what stays in memory is two offsets a document, not the text; a document is parsed the first time it is asked
for. A search that returns 10 hits parses 10 lines, while a
filter or an id lookup parses everything once. The object behaves like a read-only list of Documents.
"""

from __future__ import annotations

import json
import mmap
from pathlib import Path
from typing import Iterator, Sequence, overload

import numpy as np

from legalrag.errors import IndexError_
from legalrag.types import Document, DocumentKind

_KINDS = {k.value: k for k in DocumentKind}
_SCAN = 1 << 24  # bytes searched for line breaks at a time


def _map(path: Path) -> "mmap.mmap | bytes":
    with path.open("rb") as fh:
        try:
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)  # the mapping outlives the file handle
        except ValueError:  # an empty file cannot be mapped
            return b""


class LazyDocuments(Sequence[Document]):
    def __init__(self, path: str | Path, expected: int | None = None):
        self.path = Path(path)
        self._buf = _map(self.path)
        size = len(self._buf)
        ends = np.concatenate([np.zeros(0, dtype=np.int64)] + [  # line breaks, found a block at a time
            np.flatnonzero(np.frombuffer(self._buf, dtype=np.uint8, count=min(_SCAN, size - off), offset=off) == 10)
            + off for off in range(0, size, _SCAN)])
        if size and self._buf[size - 1:size] != b"\n":
            ends = np.append(ends, size)
        self._ends = ends
        self._starts = np.concatenate(([0], ends[:-1] + 1)) if len(ends) else ends
        self._docs: list[Document | None] = [None] * len(ends)
        if expected is not None and len(ends) != expected:
            raise IndexError_(f"{self.path} has {len(ends)} documents, the manifest says {expected}; the index is "
                              "damaged: rebuild it")

    def __len__(self) -> int:
        return len(self._docs)

    def _parse(self, i: int) -> Document:
        line = self._buf[self._starts[i]:self._ends[i]]
        try:  # lines are Document.to_dict() as written by build_index: no defaults to fill in
            r = json.loads(line)
            doc = Document(r["id"], r["text"], r["title"], _KINDS[r["kind"]], r["source"], r["metadata"])
        except (ValueError, KeyError, TypeError) as exc:
            raise IndexError_(f"{self.path}:{i + 1}: damaged index ({exc}); rebuild it with "
                              "`legalrag index build`") from None
        self._docs[i] = doc
        return doc

    @overload
    def __getitem__(self, i: int) -> Document: ...

    @overload
    def __getitem__(self, i: slice) -> list[Document]: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self._docs)
        if not 0 <= i < len(self._docs):
            raise IndexError(f"document position {i} out of range ({len(self._docs)} documents)")
        doc = self._docs[i]
        return doc if doc is not None else self._parse(i)

    def __iter__(self) -> Iterator[Document]:
        for i in range(len(self._docs)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Sequence[Document]) -> list[Document]:
        return list(self) + list(other)

    def __repr__(self) -> str:
        return f"LazyDocuments({str(self.path)!r}, {len(self)} documents)"
