"""Fusing ranked lists from several retrievers, keeping for every hit which retrievers found it and where.

- ``reciprocal_rank_fusion``: score(d) = sum_r w_r / (k + rank_r(d)), k = 60 by default (Cormack et al. 2009).
- ``weighted_score_fusion``: each list's scores normalised (min-max or z-score) then summed with weights;
  a document missing from a list gets that list's minimum normalised score (0 for min-max).

Both return ``Hit`` s with ``retriever`` set to the fused name and ``sources`` mapping each input retriever's
name to the rank it gave (inputs' own ``sources`` are merged, so fusing fused lists keeps the trail).
"""

from __future__ import annotations

import enum
from typing import Mapping, Sequence

import numpy as np

from legalrag.errors import InputError
from legalrag.types import Document, Hit


class Fusion(str, enum.Enum):
    """How a hybrid combines its members: reciprocal-rank fusion or weighted min-max score fusion."""

    RRF = "rrf"
    WSF = "wsf"

NORMALISATIONS = ("minmax", "zscore")


def _weights(names: Sequence[str], weights: Mapping[str, float] | Sequence[float] | None) -> list[float]:
    if weights is None:
        return [1.0] * len(names)
    if isinstance(weights, Mapping):
        unknown = set(weights) - set(names)
        if unknown:
            raise InputError(f"fusion weights name retrievers that are not fused: {sorted(unknown)}; "
                             f"fused: {list(names)}")
        return [float(weights.get(n, 1.0)) for n in names]
    w = [float(x) for x in weights]
    if len(w) != len(names):
        raise InputError(f"{len(w)} fusion weights for {len(names)} ranked lists")
    return w


def _names(runs: Sequence[Sequence[Hit]], names: Sequence[str] | None) -> list[str]:
    if names is not None:
        if len(names) != len(runs):
            raise InputError(f"{len(names)} names for {len(runs)} ranked lists")
        return list(names)
    out = []
    for i, run in enumerate(runs):
        out.append(run[0].retriever if run and run[0].retriever else f"run{i}")
    return out


def _fused(scores: dict[str, float], docs: dict[str, Document], sources: dict[str, dict[str, int]],
           name: str, k: int | None) -> list[Hit]:
    order = sorted(scores, key=lambda d: (-scores[d], min(sources[d].values(), default=0), d))
    if k is not None:
        order = order[:k]
    return [Hit(document=docs[d], score=float(scores[d]), rank=i, retriever=name, sources=dict(sources[d]))
            for i, d in enumerate(order, 1)]


def _collect(runs, names):
    docs: dict[str, Document] = {}
    sources: dict[str, dict[str, int]] = {}
    for name, run in zip(names, runs):
        for h in run:
            docs.setdefault(h.id, h.document)
            src = sources.setdefault(h.id, {})
            for sub, rank in h.sources.items():
                src.setdefault(sub, rank)
            src[name] = h.rank
    return docs, sources


def reciprocal_rank_fusion(runs: Sequence[Sequence[Hit]], *, k: int = 60,
                           weights: Mapping[str, float] | Sequence[float] | None = None,
                           names: Sequence[str] | None = None, name: str = "rrf",
                           limit: int | None = None) -> list[Hit]:
    """RRF over ranked lists (each best first, ``Hit.rank`` 1-based)."""
    if k < 0:
        raise InputError(f"RRF k must be >= 0, got {k}")
    names = _names(runs, names)
    w = _weights(names, weights)
    docs, sources = _collect(runs, names)
    scores: dict[str, float] = {d: 0.0 for d in docs}
    for wi, run in zip(w, runs):
        for h in run:
            scores[h.id] += wi / (k + h.rank)
    return _fused(scores, docs, sources, name, limit)


def normalise(scores: np.ndarray, method: str = "minmax") -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64)
    if s.size == 0:
        return s
    if method == "minmax":
        lo, hi = s.min(), s.max()
        return np.ones_like(s) if hi - lo < 1e-12 else (s - lo) / (hi - lo)
    if method == "zscore":
        sd = s.std()
        return np.zeros_like(s) if sd < 1e-12 else (s - s.mean()) / sd
    raise InputError(f"unknown score normalisation {method!r}; use one of {', '.join(NORMALISATIONS)}")


def weighted_score_fusion(runs: Sequence[Sequence[Hit]], *, weights: Mapping[str, float] | Sequence[float] | None = None,
                          normalisation: str = "minmax", names: Sequence[str] | None = None,
                          name: str = "wsf", limit: int | None = None) -> list[Hit]:
    """Sum of per-list normalised scores times weights; absent documents get the list's floor."""
    names = _names(runs, names)
    w = _weights(names, weights)
    docs, sources = _collect(runs, names)
    scores: dict[str, float] = {d: 0.0 for d in docs}
    for wi, run in zip(w, runs):
        if not run:
            continue
        norm = normalise(np.array([h.score for h in run]), normalisation)
        floor = float(norm.min())
        seen = set()
        for h, s in zip(run, norm):
            scores[h.id] += wi * float(s)
            seen.add(h.id)
        for d in docs:
            if d not in seen:
                scores[d] += wi * floor
    return _fused(scores, docs, sources, name, limit)


def fuse(runs: Sequence[Sequence[Hit]], method: str = "rrf", **kw) -> list[Hit]:
    """``method``: ``rrf`` or ``wsf`` (weighted score fusion)."""
    if method == "rrf":
        return reciprocal_rank_fusion(runs, **kw)
    if method in ("wsf", "weighted"):
        return weighted_score_fusion(runs, **kw)
    raise InputError(f"unknown fusion method {method!r}; use rrf or wsf")
