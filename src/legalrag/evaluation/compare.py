"""Compare saved retrieval runs on the same queries: metrics side by side, paired significance, Recall@K curves.

Every run is re-scored against the same gold (the query file), so runs made at different times or with
different settings compare fairly. A query missing from a run counts as an empty ranking (all metrics 0), as
trec_eval does with ``-c``. Significance is a two-sided paired randomization test (Smucker, Allan and
Carterette 2007) of each run against the first one, per metric, over per-query values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Mapping, Sequence

import numpy as np

from legalrag.evaluation.metrics import per_query_metrics, unique_top

METRICS = ("recall", "mrr", "ndcg", "hit")


@dataclass(frozen=True)
class RunScores:
    name: str
    means: Mapping[str, float]  # "recall@10" -> mean over queries
    p_values: Mapping[str, float]  # same keys; against the first run (empty for the first run)
    missing_queries: int  # queries of the query file with no ranking in this run
    recall_curve: tuple[float, ...]  # mean Recall@K for K = 1..depth


@dataclass(frozen=True)
class Comparison:
    k: int
    n_queries: int
    runs: tuple[RunScores, ...]

    def to_dict(self) -> dict:
        return {"k": self.k, "n_queries": self.n_queries,
                "runs": [{"name": r.name, "means": dict(r.means), "p_values": dict(r.p_values),
                          "missing_queries": r.missing_queries, "recall_curve": list(r.recall_curve)}
                         for r in self.runs]}


def sign_flips(n: int, trials: int = 10_000, seed: int = 0) -> np.ndarray:
    """A (trials, n) matrix of random +1/-1: which pairs each permutation of the randomization test swaps."""
    return np.random.default_rng(seed).choice((-1.0, 1.0), size=(trials, n))


def paired_randomization_test(a: Sequence[float], b: Sequence[float], trials: int = 10_000, seed: int = 0,
                              signs: np.ndarray | None = None) -> float:
    """Two-sided p-value that the mean of ``a - b`` is 0, by randomly swapping each pair's labels.
    ``signs`` (from :func:`sign_flips`) lets many tests on the same queries share one set of permutations."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if diff.size == 0 or not np.any(diff):
        return 1.0
    if signs is None:
        signs = sign_flips(diff.size, trials, seed)
    observed = abs(diff.mean())
    extreme = np.count_nonzero(np.abs(signs @ diff) / diff.size >= observed - 1e-12)
    return float((extreme + 1) / (signs.shape[0] + 1))


def compare_runs(runs: Mapping[str, Mapping[str, Sequence[str]]], gold: Mapping[str, Collection[str]],
                 k: int = 10, depth: int = 100, trials: int = 10_000) -> Comparison:
    """``runs``: name -> query id -> ranked document ids; ``gold``: query id -> relevant ids (the query file).

    The first run is the baseline the others are tested against."""
    if not runs:
        raise ValueError("no runs to compare")
    qids = [q for q, g in gold.items() if g]
    if not qids:
        raise ValueError("no query has gold documents")
    keys = [f"{m}@{k}" for m in METRICS]
    first = next(iter(runs))
    signs = sign_flips(len(qids), trials) if len(runs) > 1 else None
    per_run: dict[str, dict[str, np.ndarray]] = {}
    rows = []
    for name, ranked in runs.items():
        values = {key: np.zeros(len(qids)) for key in keys}
        curve = np.zeros(depth)
        for i, q in enumerate(qids):
            ranking = unique_top(list(ranked.get(q, ())), depth)
            scores = per_query_metrics(ranking, gold[q], (k,))
            for key in keys:
                values[key][i] = scores[key]
            g = set(gold[q])
            curve += np.cumsum([d in g for d in ranking] + [False] * (depth - len(ranking))) / len(g)
        per_run[name] = values
        base = per_run[first]
        p = {} if name == first else {
            key: paired_randomization_test(values[key], base[key], signs=signs) for key in keys}
        rows.append(RunScores(name, {key: float(values[key].mean()) for key in keys}, p,
                              sum(1 for q in qids if q not in ranked), tuple(float(x) for x in curve / len(qids))))
    return Comparison(k, len(qids), tuple(rows))
