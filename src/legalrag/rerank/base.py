"""The Reranker protocol: take a query and candidate hits, return them reordered (possibly fewer)."""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol, Sequence, runtime_checkable

from legalrag.types import Hit


@runtime_checkable
class Reranker(Protocol):
    name: str

    def rerank(self, query: str, hits: Sequence[Hit], k: int | None = None) -> list[Hit]:
        """Return the hits best first with new scores and ranks 1..n, cut to ``k`` when given."""
        ...


def reranked(hits: Sequence[Hit], scores: Sequence[float], name: str, k: int | None = None) -> list[Hit]:
    """Helper for rerankers: order ``hits`` by ``scores`` (ties keep the prior order) and renumber ranks."""
    order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
    if k is not None:
        order = order[:k]
    return [replace(hits[i], score=float(scores[i]), rank=r, retriever=name) for r, i in enumerate(order, 1)]
