"""A learned ranker: LightGBM lambdarank over the cheap features of ``rerank/features.py``.

Trained on training queries only. Saved in the index directory as ``ranker/``: ``model.txt`` (LightGBM's
text format), ``spec.json`` (feature names, the retrievers the features come from, candidate depth,
LightGBM parameters, corpus sha256) and ``prior.json`` (article/law counts from the training qrels). Never
pickle. :func:`cross_validate` reports k-fold figures by query, with priors re-estimated inside each fold,
so nothing is tuned on the evaluation split.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from legalrag._optional import require
from legalrag.errors import IndexError_, InputError
from legalrag.io import atomic_dir
from legalrag.rerank.base import reranked
from legalrag.rerank.features import FeatureExtractor, Prior
from legalrag.types import Hit, Query

RANKER_DIR = "ranker"
DEFAULT_PARAMS: dict[str, Any] = {
    # small trees, strongly regularised: ~1k training queries (STARD) overfit 15-leaf trees in 300 rounds
    "objective": "lambdarank", "metric": "ndcg", "eval_at": [10], "learning_rate": 0.05, "num_leaves": 7,
    "min_data_in_leaf": 50, "feature_fraction": 0.9, "bagging_fraction": 0.8, "bagging_freq": 1,
    "lambdarank_truncation_level": 20, "num_threads": 1, "verbose": -1, "seed": 13,
}
DEFAULT_ROUNDS = 150


@dataclass
class TrainingSet:
    """Candidates and base features of queries, computed once and reused across folds."""

    queries: list[Query]
    hits: list[list[Hit]]
    base: list[np.ndarray]


def build_training_set(extractor: FeatureExtractor, candidates: Any, queries: Sequence[Query], depth: int,
                       progress: bool = False) -> TrainingSet:
    """Retrieve ``depth`` candidates per query with ``candidates`` (a retriever or pipeline) and compute features."""
    from legalrag.retrieval.base import retrieve_many

    queries = list(queries)
    texts = [q.text for q in queries]
    runs = retrieve_many(candidates, texts, k=depth, progress=progress)
    qvecs = [d.encode_queries(texts) for d in extractor.dense]
    it = range(len(queries))
    if progress:
        from tqdm import tqdm

        it = tqdm(it, desc="ranker features", unit="q")
    base = [extractor.base_matrix(texts[i], runs[i], [v[i] for v in qvecs]) for i in it]
    return TrainingSet(queries, runs, base)


def _fit(ts: TrainingSet, idx: Sequence[int], extractor: FeatureExtractor, prior: Prior,
         params: Mapping[str, Any], rounds: int, law_of: Mapping[str, str]):
    lgb = require("lightgbm", "dense")
    xs, ys, groups = [], [], []
    for i in idx:
        gold = set(ts.queries[i].gold_ids)
        y = np.array([1.0 if h.id in gold else 0.0 for h in ts.hits[i]])
        if not len(y) or y.sum() == 0:  # nothing to learn from a query whose gold was not retrieved
            continue
        own = ts.queries[i].gold_ids
        own_laws: dict[str, int] = {}
        for g in own:
            if law_of.get(g):
                own_laws[law_of[g]] = own_laws.get(law_of[g], 0) + 1
        xs.append(extractor.set_priors(ts.base[i], ts.hits[i], prior, own_gold=own, own_laws=own_laws))
        ys.append(y)
        groups.append(len(y))
    if not groups:
        raise InputError("no training query has a gold document among its candidates; check the query file "
                         "and the index (or raise --depth)")
    data = lgb.Dataset(np.vstack(xs), np.concatenate(ys), group=groups, feature_name=extractor.names,
                       free_raw_data=True)
    return lgb.train(dict(params), data, num_boost_round=rounds)


class LearnedRanker:
    """Implements the Reranker protocol: ``rerank(query, hits, k)``."""

    name = "learned"

    def __init__(self, extractor: FeatureExtractor, booster: Any, prior: Prior, spec: Mapping[str, Any]):
        self.extractor, self.booster, self.prior, self.spec = extractor, booster, prior, dict(spec)

    @property
    def candidates(self) -> str | None:
        """The index component whose candidates it was trained to rerank (the pipeline's default retriever)."""
        return self.spec.get("candidates")

    def score(self, query: str, hits: Sequence[Hit]) -> np.ndarray:
        if not hits:
            return np.zeros(0)
        return self.booster.predict(self.extractor.matrix(query, hits, self.prior), num_threads=1)

    def rerank(self, query: str, hits: Sequence[Hit], k: int | None = None) -> list[Hit]:
        return reranked(hits, list(self.score(query, hits)), self.name, k)

    def save(self, directory: str | Path) -> None:
        """Write ``directory`` atomically (temp dir renamed into place)."""
        with atomic_dir(directory) as tmp:
            self.booster.save_model(str(tmp / "model.txt"))
            (tmp / "spec.json").write_text(json.dumps(self.spec, ensure_ascii=False, indent=2), encoding="utf-8")
            (tmp / "prior.json").write_text(json.dumps(self.prior.to_dict(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path, extractor: FeatureExtractor) -> "LearnedRanker":
        lgb = require("lightgbm", "dense")
        d = Path(directory)
        if not (d / "spec.json").exists() or not (d / "model.txt").exists():
            raise IndexError_(f"no trained ranker at {d}; train one with `legalrag ranker train --index INDEX "
                              "--queries TRAIN.jsonl`")
        spec = json.loads((d / "spec.json").read_text(encoding="utf-8"))
        if spec.get("features") != extractor.names or spec.get("retrievers") != extractor.retriever_names:
            raise IndexError_(f"the ranker at {d} was trained on features of {spec.get('retrievers')} but the index "
                              f"now gives {extractor.retriever_names}; retrain it with `legalrag ranker train`")
        prior = Prior.from_dict(json.loads((d / "prior.json").read_text(encoding="utf-8")))
        return cls(extractor, lgb.Booster(model_file=str(d / "model.txt")), prior, spec)


def train(extractor: FeatureExtractor, ts: TrainingSet, law_of: Mapping[str, str], *,
          params: Mapping[str, Any] | None = None, rounds: int = DEFAULT_ROUNDS,
          extra_spec: Mapping[str, Any] | None = None) -> LearnedRanker:
    p = {**DEFAULT_PARAMS, **(params or {})}
    prior = Prior.from_queries(ts.queries, law_of)
    booster = _fit(ts, range(len(ts.queries)), extractor, prior, p, rounds, law_of)
    spec = {"format": "legalrag-ranker", "version": 1, "features": extractor.names,
            "retrievers": extractor.retriever_names, "depth": extractor.depth, "params": p, "rounds": rounds,
            "n_train_queries": len(ts.queries), **(extra_spec or {})}
    return LearnedRanker(extractor, booster, prior, spec)


def folds(n: int, k: int = 5, seed: int = 13) -> list[list[int]]:
    """Split query positions 0..n-1 into ``k`` shuffled folds."""
    if k < 2 or k > n:
        raise InputError(f"k-fold cross-validation needs 2 <= k <= number of queries ({n}), got {k}")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return [order[i::k] for i in range(k)]


def cross_validate(extractor: FeatureExtractor, ts: TrainingSet, law_of: Mapping[str, str], *, k: int = 5,
                   seed: int = 13, params: Mapping[str, Any] | None = None,
                   rounds: int = DEFAULT_ROUNDS) -> dict[str, list[Hit]]:
    """Rerank every query with a ranker trained (priors included) on the other folds; returns qid -> hits."""
    p = {**DEFAULT_PARAMS, **(params or {})}
    out: dict[str, list[Hit]] = {}
    for test in folds(len(ts.queries), k, seed):
        test_set = set(test)
        train_idx = [i for i in range(len(ts.queries)) if i not in test_set]
        prior = Prior.from_queries([ts.queries[i] for i in train_idx], law_of)
        booster = _fit(ts, train_idx, extractor, prior, p, rounds, law_of)
        for i in test:
            hits = ts.hits[i]
            if not hits:
                out[ts.queries[i].id] = []
                continue
            scores = booster.predict(extractor.set_priors(ts.base[i], hits, prior), num_threads=1)
            out[ts.queries[i].id] = reranked(hits, list(scores), "learned")
    return out


# -- index integration ------------------------------------------------------------------------------------

def extractor_for_index(index: Any, depth: int = 100, cross: Any = None) -> FeatureExtractor:
    """Features from the index's ``bm25`` component and every ``dense-*`` component (in manifest order), plus
    a cross-encoder's scores when ``cross`` is given."""
    bm25 = index.retriever("bm25") if "bm25" in index.names else None
    dense = [index.retriever(n) for n in index.names if index.manifest["components"][n]["kind"] == "dense"]
    if bm25 is None and not dense:
        raise InputError(f"the index at {index.path} has neither bm25 nor dense components to compute ranker "
                         "features from")
    return FeatureExtractor(bm25, dense, depth, cross=cross)


def _cross_spec(index: Any, cross: Any) -> dict[str, Any]:
    """Where the ranker's cross-encoder lives: relative to the index when inside it, so the index can move."""
    if cross is None:
        return {}
    path = Path(cross.path).resolve()
    try:
        where = str(path.relative_to(Path(index.path).resolve()))
    except ValueError:
        where = str(path)
    return {"cross_encoder": where}


def cross_encoder_path(index: Any) -> Path | None:
    """The cross-encoder directory the index's trained ranker needs as a feature (None when it needs none)."""
    spec_file = Path(index.path) / RANKER_DIR / "spec.json"
    if not spec_file.exists():
        return None
    where = json.loads(spec_file.read_text(encoding="utf-8")).get("cross_encoder")
    if not where:
        return None
    p = Path(where)
    return p if p.is_absolute() else Path(index.path) / p


def candidate_retriever(index: Any) -> str:
    return "hybrid" if "hybrid" in index.names else index.default


def train_for_index(index: Any, queries: Sequence[Query], *, depth: int = 50, rounds: int = DEFAULT_ROUNDS,
                    params: Mapping[str, Any] | None = None, progress: bool = False,
                    cross: Any = None) -> LearnedRanker:
    """Train on ``queries`` over the index's candidates and save to ``INDEX/ranker`` (atomically).
    ``cross``: a cross-encoder reranker whose scores become features (recorded in the spec)."""
    extractor = extractor_for_index(index, depth, cross)
    name = candidate_retriever(index)
    ts = build_training_set(extractor, index.retriever(name), queries, depth, progress=progress)
    law_of = {d.id: str(d.metadata.get("law", "")) for d in index.documents}
    ranker = train(extractor, ts, law_of, params=params, rounds=rounds,
                   extra_spec={"candidates": name, "corpus_sha256": index.corpus_sha256,
                               **_cross_spec(index, cross)})
    ranker.save(Path(index.path) / RANKER_DIR)
    return ranker


def from_index(index: Any, cross: Any = None) -> LearnedRanker:
    """The ranker trained for this index (``INDEX/ranker``, written by ``legalrag ranker train``); ``cross``
    is the cross-encoder it was trained with, if any (:func:`cross_encoder_path` says where it is)."""
    d = Path(index.path) / RANKER_DIR
    if not (d / "spec.json").exists():
        raise IndexError_(f"the index at {index.path} has no trained ranker; train one with "
                          f"`legalrag ranker train --index {index.path} --queries TRAIN.jsonl`")
    spec = json.loads((d / "spec.json").read_text(encoding="utf-8"))
    if spec.get("corpus_sha256") not in (None, index.corpus_sha256):
        raise IndexError_(f"the ranker at {d} was trained on another corpus; retrain it")
    if spec.get("cross_encoder") and cross is None:
        raise IndexError_(f"the ranker at {d} uses the cross-encoder at {spec['cross_encoder']} as a feature; "
                          "pass it in (the CLI and `wiring.make_reranker` load it from the spec)")
    return LearnedRanker.load(d, extractor_for_index(index, spec.get("depth", 100), cross))


def cross_validate_for_index(index: Any, queries: Sequence[Query], *, k_folds: int = 5, depth: int = 50,
                             rounds: int = DEFAULT_ROUNDS, k: int = 10, params: Mapping[str, Any] | None = None,
                             progress: bool = False, seed: int = 13, cross: Any = None) -> dict[str, float]:
    """K-fold (by query) metrics of the learned ranker over the index's candidates, without saving anything."""
    from legalrag.evaluation.metrics import evaluate_rankings

    extractor = extractor_for_index(index, depth, cross)
    ts = build_training_set(extractor, index.retriever(candidate_retriever(index)), queries, depth, progress)
    law_of = {d.id: str(d.metadata.get("law", "")) for d in index.documents}
    hits = cross_validate(extractor, ts, law_of, k=k_folds, seed=seed, params=params, rounds=rounds)
    return evaluate_rankings({q: [h.id for h in hs] for q, hs in hits.items()},
                             {q.id: set(q.gold_ids) for q in queries}, ks=(k,))
