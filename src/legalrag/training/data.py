"""Training data for retrievers: train/dev split by query id, document texts cut short, and hard negatives
mined from retrievers (an index's BM25 and dense components, or the model being trained) with the gold
documents removed and a false-negative guard."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from legalrag.errors import InputError
from legalrag.types import Document, Query

MIN_TRAIN_QUERIES = 8  # below this a contrastive batch has too few in-batch negatives to learn anything


def split_by_id(queries: Sequence[Query], dev_share: float, seed: int) -> tuple[list[Query], list[Query]]:
    """Dev = the queries whose ``sha256(seed:id)`` falls in the lowest ``dev_share`` of the hash range: the split
    depends only on the ids and the seed, not on the order of the file, and is stated by listing the dev ids."""
    if not 0.0 <= dev_share < 1.0:
        raise InputError(f"-o dev_share must be in [0, 1), got {dev_share}", field="dev_share")

    def unit(q: Query) -> float:
        return int(hashlib.sha256(f"{seed}:{q.id}".encode()).hexdigest()[:12], 16) / float(16 ** 12)

    units = {q.id: unit(q) for q in queries}
    dev = [q for q in queries if units[q.id] < dev_share]
    train = [q for q in queries if units[q.id] >= dev_share]
    if len(train) < MIN_TRAIN_QUERIES:
        raise InputError(f"only {len(train)} training queries after holding out {len(dev)} for dev; at least "
                         f"{MIN_TRAIN_QUERIES} are needed (add queries or lower -o dev_share)", field="queries")
    if dev_share > 0 and not dev:
        lowest = min(units.values())
        raise InputError(f"-o dev_share={dev_share} left no dev queries out of {len(queries)}: the lowest hash of "
                         f"seed {seed} and a query id here is {lowest:.3f}. If these queries are the train part of "
                         f"`legalrag train split -o seed={seed}`, its dev took the lowest hashes: hold out an inner dev "
                         f"with another -o seed; otherwise raise -o dev_share above {lowest:.3f}", field="dev_share")
    return train, dev


def training_text(doc: Document, max_chars: int) -> str:
    """The article name plus the start of its text: long articles cost quadratic attention for little gain."""
    body = doc.text[:max_chars] if max_chars > 0 else doc.text
    return f"{doc.title}\n{body}" if doc.title and not doc.text.startswith(doc.title) else body


@dataclass
class Negatives:
    """Per query id, mined negative document ids (best-ranked first), and where they came from."""

    by_query: dict[str, list[str]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    guarded: int = 0  # candidates dropped by the false-negative guard

    def for_query(self, qid: str, n: int) -> list[str]:
        return self.by_query.get(qid, [])[:n]


RankFn = Callable[[Sequence[Query], int], Mapping[str, Sequence[str]]]  # queries, k -> ranked doc ids per qid


def retriever_ranker(retriever) -> RankFn:
    """A ``Retriever`` (BM25, dense, hybrid of an index) as a ranking function."""

    def rank(queries: Sequence[Query], k: int) -> dict[str, list[str]]:
        return {q.id: [h.document.id for h in retriever.retrieve(q.text, k=k)] for q in queries}

    return rank


def mine_negatives(queries: Sequence[Query], rankers: Mapping[str, RankFn], *, depth: int = 30, skip: int = 0,
                   guard: Callable[[Query, list[str]], list[str]] | None = None) -> Negatives:
    """Interleave each ranker's top ``depth`` (gold removed, the first ``skip`` ranks skipped as likely
    unlabelled positives); ``guard`` drops further candidates judged too close to the gold (false negatives)."""
    out = Negatives(sources=list(rankers))
    ranked = {name: fn(queries, depth) for name, fn in rankers.items()}
    for q in queries:
        gold = set(q.gold_ids)
        lists = [[d for d in ranked[name].get(q.id, []) if d not in gold][skip:] for name in rankers]
        merged: list[str] = []
        for rank in range(max((len(x) for x in lists), default=0)):
            for lst in lists:
                if rank < len(lst) and lst[rank] not in merged:
                    merged.append(lst[rank])
        if guard is not None:
            kept = guard(q, merged)
            out.guarded += len(merged) - len(kept)
            merged = kept
        out.by_query[q.id] = merged
    return out


def similarity_guard(query_vecs: Mapping[str, np.ndarray], doc_vecs: Mapping[str, np.ndarray],
                     ratio: float = 0.95) -> Callable[[Query, list[str]], list[str]]:
    """Drop a candidate whose similarity to the query is at least ``ratio`` times the best gold's: a document
    the model already finds as relevant as the gold is more likely an unlabelled positive than a negative."""

    def guard(q: Query, candidates: list[str]) -> list[str]:
        qv = query_vecs[q.id]
        gold_sims = [float(qv @ doc_vecs[g]) for g in q.gold_ids if g in doc_vecs]
        if not gold_sims:
            return candidates
        limit = ratio * max(gold_sims)
        return [d for d in candidates if d not in doc_vecs or float(qv @ doc_vecs[d]) < limit]

    return guard


def dense_ranker(query_vecs: Mapping[str, np.ndarray], doc_ids: Sequence[str], doc_matrix: np.ndarray) -> RankFn:
    """Exact inner-product ranking over a corpus matrix (the model being trained, for re-mining and dev)."""

    def rank(queries: Sequence[Query], k: int) -> dict[str, list[str]]:
        if not queries:
            return {}
        qm = np.stack([query_vecs[q.id] for q in queries])
        scores = qm @ doc_matrix.T
        k = min(k, scores.shape[1])
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        out = {}
        for row, q in enumerate(queries):
            order = top[row][np.argsort(-scores[row, top[row]], kind="stable")]
            out[q.id] = [doc_ids[i] for i in order]
        return out

    return rank


def check_gold_in_corpus(queries: Sequence[Query], doc_ids: set[str], path: str) -> None:
    """``load_queries`` checks gold ids against an index; this checks against the training corpus too."""
    for i, q in enumerate(queries, 1):
        missing = [g for g in q.gold_ids if g not in doc_ids]
        if missing:
            raise InputError(f"query {q.id!r}: gold id {missing[0]!r} is not in the training corpus", path=path,
                             line=i, field="gold_ids")
