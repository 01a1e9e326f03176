"""Set selection: turn scored candidates into a predicted set, with the rule calibrated on a development split.

A candidate pool is a mapping provision -> score in [0, 1] (core retrieval predictions score 1). The set is
every provision scoring at or above a threshold; ``calibrate_threshold`` picks the threshold that maximises
micro F1 on development cases, and ``calibrate_top_k`` the size of a ranked list for retrieval alone.
"""

from __future__ import annotations

from typing import Collection, Mapping, Sequence

from legalrag.evaluation.metrics import micro_prf

Pool = Mapping[str, float]


def select(pool: Pool, threshold: float) -> set[str]:
    return {p for p, s in pool.items() if s >= threshold}


def calibrate_threshold(pools: Sequence[Pool], gold: Sequence[Collection[str]],
                        grid: Sequence[float] | None = None) -> tuple[float, float]:
    """(threshold, micro F1) maximising micro F1 over ``pools``; ties go to the higher threshold."""
    if not pools:
        raise ValueError("no development cases to calibrate on")
    if grid is None:
        grid = sorted({round(s, 4) for pool in pools for s in pool.values()} | {1.0})
    best = (1.0, -1.0)
    for t in sorted(grid, reverse=True):
        f1 = micro_prf([select(p, t) for p in pools], gold)["f1"]
        if f1 > best[1] + 1e-12:
            best = (float(t), f1)
    return best


def calibrate_top_k(rankings: Sequence[Sequence[str]], gold: Sequence[Collection[str]],
                    max_k: int = 10) -> tuple[int, float]:
    """(k, micro F1) for the best cut of ranked lists; ties go to the smaller k."""
    best = (1, -1.0)
    for k in range(1, max_k + 1):
        f1 = micro_prf([set(r[:k]) for r in rankings], gold)["f1"]
        if f1 > best[1] + 1e-12:
            best = (k, f1)
    return best
