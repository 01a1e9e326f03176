"""Candidate retrieval for citation prediction: the facts (and, when analysed, the LLM's charges and keywords)
against the statute index, optionally within a law-code filter, with an optional training-citation prior.

The prior adds ``prior_weight * log(1 + n) / log(1 + n_max)`` to the min-max normalised retrieval score,
where ``n`` is how many training decisions cite the provision: provisions courts never cite rarely matter.
``seen_only`` restricts candidates to provisions cited at least once in training (when that keeps any).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Mapping, Sequence

from legalrag.retrieval.base import DocumentFilter, Retriever
from legalrag.types import Hit


def retrieve_candidates(retriever: Retriever, queries: Sequence[str], *, k: int, citation_counts: Mapping[str, int],
                        prior_weight: float = 0.0, seen_only: bool = True,
                        filter: DocumentFilter | None = None) -> list[Hit]:
    """Retrieve ``k`` candidates for each query, fuse (RRF) when there are several, re-score with the prior."""
    from legalrag.retrieval.fusion import reciprocal_rank_fusion

    flt = filter
    if seen_only and citation_counts:
        base = filter
        flt = (lambda d: d.id in citation_counts and base(d)) if base else (lambda d: d.id in citation_counts)
    runs = [retriever.retrieve(q, k=k, filter=flt) for q in queries if q.strip()]
    runs = [r for r in runs if r]
    if not runs:
        return []
    hits = runs[0] if len(runs) == 1 else reciprocal_rank_fusion(runs, names=[f"q{i}" for i in range(len(runs))],
                                                                 name=f"rrf({retriever.name})", limit=k)
    if not prior_weight:
        return list(hits)
    lo, hi = min(h.score for h in hits), max(h.score for h in hits)
    n_max = max(citation_counts.values(), default=0)
    scored = []
    for h in hits:
        norm = (h.score - lo) / (hi - lo) if hi > lo else 1.0
        prior = math.log1p(citation_counts.get(h.id, 0)) / math.log1p(n_max) if n_max else 0.0
        scored.append((norm + prior_weight * prior, h))
    scored.sort(key=lambda x: (-x[0], x[1].rank))
    return [replace(h, score=s, rank=i) for i, (s, h) in enumerate(scored, 1)]
