"""An index read as of a day: only the versions in force that day answer a retrieval.

An index of the law over time (``national_versions.ensure_versions_index``, or a user's corpus whose documents
carry ``in_force_from`` / ``in_force_until``, see :mod:`legalrag.laws.select`) holds every version. :func:`dated`
gives a view of it whose retrievers drop the documents not in force on the day (``None``: today, read at each
call, so a server running past midnight follows the calendar). Nothing is loaded twice: the view shares the
documents and the loaded components of the index it reads. An index without versions is returned as it is.
"""

from __future__ import annotations

import datetime
from functools import lru_cache
from typing import Any, Callable, Sequence

from legalrag.laws.select import both, has_versions, in_force_filter
from legalrag.retrieval.index import Index


@lru_cache(maxsize=64)
def _keep(day: str) -> Callable[[Any], bool]:
    """One filter object per day, so the retrievers' per-filter masks are computed once."""
    return in_force_filter(day)


def today() -> str:
    return datetime.date.today().isoformat()


class InForce:
    """A retriever of a dated view: the component's results, filtered to the versions in force."""

    def __init__(self, inner: Any, day: Callable[[], str]):
        self.inner = inner
        self._day = day

    def __getattr__(self, name: str) -> Any:  # everything else is the component's own
        return getattr(self.inner, name)

    def _filter(self, filter: Callable[[Any], bool] | None) -> Callable[[Any], bool] | None:
        return both(filter, _keep(self._day()))

    def retrieve(self, query: str, k: int = 10, filter: Callable[[Any], bool] | None = None):
        return self.inner.retrieve(query, k=k, filter=self._filter(filter))

    def retrieve_batch(self, queries: Sequence[str], k: int = 10, filter: Callable[[Any], bool] | None = None,
                       **options: Any):
        return self.inner.retrieve_batch(queries, k=k, filter=self._filter(filter), **options)


class DatedIndex(Index):
    """``base`` read as of ``as_of`` (None: today). Documents, positions and components are the base's."""

    def __init__(self, base: Index, as_of: str | None):
        super().__init__(base.path, base.manifest, base.encoder)
        self.base = base
        self.as_of = as_of

    def __repr__(self) -> str:
        return f"DatedIndex({str(self.path)!r}, as_of={self.day})"

    @property
    def day(self) -> str:
        return self.as_of or today()

    @property
    def documents(self):
        return self.base.documents

    def position(self, doc_id: str) -> int:
        return self.base.position(doc_id)

    def retriever(self, name: str | None = None, **options: Any):
        return InForce(self.base.retriever(name, **options), lambda: self.day)

    def in_force(self, doc: Any) -> bool:
        return _keep(self.day)(doc)


def undated(index: Index) -> Index:
    """The index a dated view reads (the index itself when it is none)."""
    return index.base if isinstance(index, DatedIndex) else index


def dated(index: Index, as_of: str | None = None) -> Index:
    """``index`` read as of ``as_of`` (ISO date; None: today) when its documents carry versions, else ``index``.
    A bad date is an InputError naming ``as_of``."""
    from legalrag.laws.versions import check_day

    if as_of is not None:
        as_of = check_day(as_of)
    base = undated(index)
    if not has_versions(base.documents):
        return base
    return DatedIndex(base, as_of)


def is_versioned(index: Index) -> bool:
    return isinstance(index, DatedIndex)


__all__ = ["DatedIndex", "InForce", "dated", "is_versioned", "today", "undated"]
