"""The Retriever protocol: one required method, ``retrieve``; batch search is built on it."""

from __future__ import annotations

from typing import Callable, Iterable, Protocol, Sequence, runtime_checkable

from legalrag.types import Document, Hit

# A metadata filter: keep a document when it returns True (e.g. restrict to a set of law titles).
DocumentFilter = Callable[[Document], bool]


@runtime_checkable
class Retriever(Protocol):
    name: str

    def retrieve(self, query: str, k: int = 10, filter: DocumentFilter | None = None) -> list[Hit]:
        """Return up to ``k`` hits, best first, ranks starting at 1."""
        ...


def retrieve_many(retriever: Retriever, queries: Sequence[str], k: int = 10,
                  filter: DocumentFilter | None = None, progress: bool = False) -> list[list[Hit]]:
    """Run ``retriever`` over many queries, with an optional progress bar.

    Retrievers with a faster vectorised path may define ``retrieve_batch(queries, k, filter)``; it is used
    when present.
    """
    batch = getattr(retriever, "retrieve_batch", None)
    if batch is not None:
        return batch(list(queries), k=k, filter=filter)
    it: Iterable[str] = queries
    if progress:
        from tqdm import tqdm

        it = tqdm(queries, desc=f"retrieve ({retriever.name})", unit="q")
    return [retriever.retrieve(q, k=k, filter=filter) for q in it]


def law_title_filter(titles: Iterable[str]) -> DocumentFilter:
    """Keep documents whose ``metadata['law']`` is one of ``titles``."""
    wanted = frozenset(titles)
    return lambda doc: doc.metadata.get("law") in wanted
