"""Retrieval and set metrics as pure functions.

Ranking metrics take one ranked list of ids and the set of gold ids; :func:`evaluate_rankings` macro-averages
them over queries (every query weighs the same). Conventions:

- Precision@K divides by K (as trec_eval's P_K), even when fewer than K documents were returned.
- nDCG@K uses binary gain and a log2(rank + 1) discount; the ideal DCG puts min(|gold|, K) relevant
  documents first (trec_eval's ndcg_cut_K).
- MRR@K is 1/rank of the first gold document within the top K, else 0; Hit@K is 1 if any is there.
- Queries without gold ids are left out of the averages (as trec_eval does with unjudged queries).

Set metrics (for predicted citation sets): precision = |pred & gold| / |pred|, recall = |pred & gold| / |gold|;
an empty prediction for an empty gold set scores 1 on all three, an empty side otherwise scores 0.
"""

from __future__ import annotations

import math
from typing import Any, Collection, Iterable, Mapping, Sequence

RANKING_METRICS = ("recall", "precision", "f1", "mrr", "ndcg", "hit")


def unique_top(ranked: Sequence[str], k: int) -> list[str]:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    seen: set[str] = set()
    out = []
    for doc_id in ranked:  # a repeated id counts once, at its best rank
        if doc_id not in seen:
            seen.add(doc_id)
            out.append(doc_id)
            if len(out) == k:
                break
    return out


def recall_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    if not gold:
        return 0.0
    return sum(1 for d in unique_top(ranked, k) if d in gold) / len(set(gold))


def precision_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    return sum(1 for d in unique_top(ranked, k) if d in gold) / k


def f1_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    p, r = precision_at_k(ranked, gold, k), recall_at_k(ranked, gold, k)
    return 2 * p * r / (p + r) if p + r else 0.0


def mrr_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    for rank, d in enumerate(unique_top(ranked, k), 1):
        if d in gold:
            return 1.0 / rank
    return 0.0


def hit_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    return 1.0 if any(d in gold for d in unique_top(ranked, k)) else 0.0


def ndcg_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    n_gold = len(set(gold))
    if not n_gold:
        return 0.0
    dcg = sum(1.0 / math.log2(rank + 1) for rank, d in enumerate(unique_top(ranked, k), 1) if d in gold)
    idcg = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(n_gold, k) + 1))
    return dcg / idcg


_FUNCS = {"recall": recall_at_k, "precision": precision_at_k, "f1": f1_at_k, "mrr": mrr_at_k,
          "ndcg": ndcg_at_k, "hit": hit_at_k}


def per_query_metrics(ranked: Sequence[str], gold: Collection[str], ks: Iterable[int] = (10,),
                      metrics: Iterable[str] = RANKING_METRICS) -> dict[str, float]:
    gold = set(gold)
    return {f"{m}@{k}": _FUNCS[m](ranked, gold, k) for k in ks for m in metrics}


def evaluate_rankings(rankings: Mapping[str, Sequence[str]], gold: Mapping[str, Collection[str]],
                      ks: Iterable[int] = (10,), metrics: Iterable[str] = RANKING_METRICS) -> dict[str, float]:
    """Macro-averaged metrics over the queries of ``gold`` that have gold ids; a query missing from
    ``rankings`` counts as an empty ranking. Adds ``n_queries``."""
    ks, metrics = tuple(ks), tuple(metrics)
    unknown = [m for m in metrics if m not in _FUNCS]
    if unknown:
        raise ValueError(f"unknown metrics {unknown}; known: {', '.join(RANKING_METRICS)}")
    totals = {f"{m}@{k}": 0.0 for k in ks for m in metrics}
    n = 0
    for qid, g in gold.items():
        if not g:
            continue
        n += 1
        for key, value in per_query_metrics(rankings.get(qid, ()), g, ks, metrics).items():
            totals[key] += value
    out = {key: (v / n if n else 0.0) for key, v in totals.items()}
    out["n_queries"] = n
    return out


# --- set metrics -----------------------------------------------------------------------------------------

def set_prf(predicted: Collection[str], gold: Collection[str]) -> tuple[float, float, float]:
    """(precision, recall, F1) of a predicted set against a gold set."""
    pred, g = set(predicted), set(gold)
    if not pred and not g:
        return 1.0, 1.0, 1.0
    tp = len(pred & g)
    p = tp / len(pred) if pred else 0.0
    r = tp / len(g) if g else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def macro_prf(predicted: Sequence[Collection[str]], gold: Sequence[Collection[str]]) -> dict[str, float]:
    """Mean over items of per-item precision, recall and F1 (``macro_f1`` is the mean of the F1s)."""
    _check_pairs(predicted, gold)
    rows = [set_prf(p, g) for p, g in zip(predicted, gold)]
    n = len(rows)
    return {"precision": sum(r[0] for r in rows) / n if n else 0.0,
            "recall": sum(r[1] for r in rows) / n if n else 0.0,
            "f1": sum(r[2] for r in rows) / n if n else 0.0, "n": n}


def macro_f1(predicted: Sequence[Collection[str]], gold: Sequence[Collection[str]]) -> float:
    return macro_prf(predicted, gold)["f1"]


def micro_prf(predicted: Sequence[Collection[str]], gold: Sequence[Collection[str]]) -> dict[str, float]:
    """Precision, recall and F1 over the pooled counts of all items."""
    _check_pairs(predicted, gold)
    tp = fp = fn = 0
    for p, g in zip(predicted, gold):
        p, g = set(p), set(g)
        tp += len(p & g)
        fp += len(p - g)
        fn += len(g - p)
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": prec, "recall": rec, "f1": 2 * prec * rec / (prec + rec) if prec + rec else 0.0,
            "n": len(predicted)}


def _check_pairs(predicted: Sequence, gold: Sequence) -> None:
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predictions for {len(gold)} gold sets; they must pair up")


def precision_recall_at(scores: Sequence[float], labels: Sequence[int], threshold: float) -> dict[str, Any]:
    """Binary decisions ``score >= threshold`` against 0/1 ``labels``: precision and recall (None where
    undefined), the false-positive rate, the number of pairs and of positives."""
    tp = sum(p >= threshold and y == 1 for p, y in zip(scores, labels))
    fp = sum(p >= threshold and y == 0 for p, y in zip(scores, labels))
    pos = sum(labels)
    return {"precision": round(tp / (tp + fp), 4) if tp + fp else None, "recall": round(tp / pos, 4) if pos else None,
            "false_positive_rate": round(fp / max(len(labels) - pos, 1), 4), "n": len(labels), "positives": pos}


def threshold_for_precision(scores: Sequence[float], labels: Sequence[int], min_precision: float,
                            default: float = 0.99) -> float:
    """The lowest threshold (of the scores, to 4 decimals) whose precision on these pairs is at least
    ``min_precision``: the most recall at that precision; ``default`` when none reaches it."""
    for t in sorted(set(round(p, 4) for p in scores)):
        m = precision_recall_at(scores, labels, t)
        if m["precision"] is not None and m["precision"] >= min_precision:
            return t
    return default
