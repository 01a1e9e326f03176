"""A learned ranker: LightGBM lambdarank over the cheap features of ``rerank/features.py``.

Trained on training queries only. Saved in the index directory as ``ranker/``: ``model.txt`` (LightGBM's
text format), ``spec.json`` (feature names, the retrievers the features come from, candidate depth,
LightGBM parameters, corpus sha256), ``prior.json`` (article/law counts from the training qrels) and, when
trained with a neighbour memory, ``neighbours.jsonl`` + ``neighbours.npy`` (``rerank/neighbours.py``). Never
pickle. :func:`cross_validate` reports k-fold figures by query, with priors and the neighbour memory rebuilt
inside each fold, so nothing is tuned on the evaluation split.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from legalrag._optional import require
from legalrag.errors import IndexError_, InputError
from legalrag.io import atomic_dir
from legalrag.rerank.base import reranked
from legalrag.rerank.features import FeatureExtractor, Prior
from legalrag.rerank.neighbours import DocumentLookup, NeighbourMemory, NeighbourSettings
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
    base: list[np.ndarray]  # empty when the extractor has a neighbour memory: rows then depend on the memory
    qvecs: list[np.ndarray] = field(default_factory=list)  # per dense component, (n_queries, dim)


def build_training_set(extractor: FeatureExtractor, candidates: Any, queries: Sequence[Query], depth: int,
                       progress: bool = False) -> TrainingSet:
    """Retrieve ``depth`` candidates per query with ``candidates`` (a retriever or pipeline) and compute features."""
    from legalrag.retrieval.base import retrieve_many

    queries = list(queries)
    texts = [q.text for q in queries]
    runs = retrieve_many(candidates, texts, k=depth, progress=progress)
    qvecs = [d.encode_queries(texts) for d in extractor.dense]
    if extractor.neighbours:
        return TrainingSet(queries, runs, [], qvecs)
    it = _bar(range(len(queries)), progress, "ranker features")
    base = [extractor.base_matrix(texts[i], runs[i], [v[i] for v in qvecs]) for i in it]
    return TrainingSet(queries, runs, base, qvecs)


def _bar(it, progress: bool, desc: str):
    if not progress:
        return it
    from tqdm import tqdm

    return tqdm(it, desc=desc, unit="q")


def neighbour_memory(extractor: FeatureExtractor, ts: TrainingSet, settings: NeighbourSettings) -> NeighbourMemory:
    """The training queries as a memory, with their vectors under the extractor's first dense component."""
    if not extractor.dense:
        raise InputError("the neighbour memory compares questions by a dense encoder; build the index with "
                         "`--retriever dense` (or hybrid) first, or train with -o neighbours=0")
    return NeighbourMemory([q.id for q in ts.queries], [q.gold_ids for q in ts.queries], ts.qvecs[0], settings,
                           encoder=extractor.dense[0].name)


def _rows(extractor: FeatureExtractor, ts: TrainingSet, i: int, memory: NeighbourMemory | None,
          documents: DocumentLookup, own: bool) -> tuple[list[Hit], np.ndarray]:
    """Query ``i``'s candidates and features without priors; with a memory, its votes (the query itself left
    out when ``own``) fill the neighbour columns and add the best-voted articles as candidates."""
    if memory is None:
        return ts.hits[i], ts.base[i]
    q = ts.queries[i]
    vecs = [v[i] for v in ts.qvecs]
    votes = memory.votes(vecs[0], exclude=q.id if own else None)
    hits = memory.expand(ts.hits[i], votes, documents)
    return hits, extractor.set_neighbours(extractor.base_matrix(q.text, hits, vecs), hits, votes)


def _fit(ts: TrainingSet, idx: Sequence[int], extractor: FeatureExtractor, prior: Prior,
         params: Mapping[str, Any], rounds: int, law_of: Mapping[str, str],
         memory: NeighbourMemory | None = None, documents: DocumentLookup | None = None,
         progress: bool = False):
    lgb = require("lightgbm", "dense")
    xs, ys, groups = [], [], []
    for i in _bar(idx, progress and memory is not None, "ranker features"):
        gold = set(ts.queries[i].gold_ids)
        hits, base = _rows(extractor, ts, i, memory, documents or {}, own=True)
        y = np.array([1.0 if h.id in gold else 0.0 for h in hits])
        if not len(y) or y.sum() == 0:  # nothing to learn from a query whose gold was not retrieved
            continue
        own = ts.queries[i].gold_ids
        own_laws: dict[str, int] = {}
        for g in own:
            if law_of.get(g):
                own_laws[law_of[g]] = own_laws.get(law_of[g], 0) + 1
        xs.append(extractor.set_priors(base, hits, prior, own_gold=own, own_laws=own_laws))
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

    def __init__(self, extractor: FeatureExtractor, booster: Any, prior: Prior, spec: Mapping[str, Any],
                 memory: NeighbourMemory | None = None, documents: DocumentLookup | None = None):
        self.extractor, self.booster, self.prior, self.spec = extractor, booster, prior, dict(spec)
        self.memory = memory  # what similar training questions cited (None: not trained with --neighbours)
        self.documents = documents or {}  # where the memory's extra candidates come from

    @property
    def candidates(self) -> str | None:
        """The index component whose candidates it was trained to rerank (the pipeline's default retriever)."""
        return self.spec.get("candidates")

    def _scored(self, query: str, hits: Sequence[Hit], expand: bool) -> tuple[list[Hit], np.ndarray]:
        if self.memory is None:
            return list(hits), (self.booster.predict(self.extractor.matrix(query, hits, self.prior), num_threads=1)
                                if hits else np.zeros(0))
        qvecs = [d.encode_queries([query])[0] for d in self.extractor.dense]
        votes = self.memory.votes(qvecs[0])
        hits = self.memory.expand(hits, votes, self.documents) if expand else list(hits)
        if not hits:
            return [], np.zeros(0)
        m = self.extractor.set_priors(self.extractor.base_matrix(query, hits, qvecs), hits, self.prior)
        return hits, self.booster.predict(self.extractor.set_neighbours(m, hits, votes), num_threads=1)

    def score(self, query: str, hits: Sequence[Hit]) -> np.ndarray:
        """Scores of exactly these hits (no candidates added)."""
        return self._scored(query, hits, expand=False)[1]

    def rerank(self, query: str, hits: Sequence[Hit], k: int | None = None) -> list[Hit]:
        """The hits, plus (with a neighbour memory) the articles similar training questions cited that the
        first stage missed, best first."""
        hits, scores = self._scored(query, hits, expand=True)
        return reranked(hits, list(scores), self.name, k)

    def save(self, directory: str | Path) -> None:
        """Write ``directory`` atomically (temp dir renamed into place)."""
        with atomic_dir(directory) as tmp:
            self.booster.save_model(str(tmp / "model.txt"))
            (tmp / "spec.json").write_text(json.dumps(self.spec, ensure_ascii=False, indent=2), encoding="utf-8")
            (tmp / "prior.json").write_text(json.dumps(self.prior.to_dict(), ensure_ascii=False), encoding="utf-8")
            if self.memory is not None:
                self.memory.save(tmp)

    @classmethod
    def load(cls, directory: str | Path, extractor: FeatureExtractor,
             documents: DocumentLookup | None = None) -> "LearnedRanker":
        lgb = require("lightgbm", "dense")
        d = Path(directory)
        if not (d / "spec.json").exists() or not (d / "model.txt").exists():
            raise IndexError_(f"no trained ranker at {d}; train one with `legalrag train ranker --index INDEX "
                              "--queries TRAIN.jsonl`")
        spec = json.loads((d / "spec.json").read_text(encoding="utf-8"))
        if spec.get("features") != extractor.names or spec.get("retrievers") != extractor.retriever_names:
            raise IndexError_(f"the ranker at {d} was trained on features of {spec.get('retrievers')} but the index "
                              f"now gives {extractor.retriever_names}; retrain it with `legalrag train ranker`")
        prior = Prior.from_dict(json.loads((d / "prior.json").read_text(encoding="utf-8")))
        memory = None
        if spec.get("neighbours"):
            memory = NeighbourMemory.load(d, spec["neighbours"])
            if memory.encoder != extractor.dense[0].name:
                raise IndexError_(f"the ranker at {d} remembers questions encoded by {memory.encoder} but the "
                                  f"index's dense component is {extractor.dense[0].name}; retrain it")
        return cls(extractor, lgb.Booster(model_file=str(d / "model.txt")), prior, spec, memory, documents)


def train_ranker(extractor: FeatureExtractor, ts: TrainingSet, law_of: Mapping[str, str], *,
                 params: Mapping[str, Any] | None = None, rounds: int = DEFAULT_ROUNDS,
                 extra_spec: Mapping[str, Any] | None = None, neighbours: NeighbourSettings | None = None,
                 documents: DocumentLookup | None = None, progress: bool = False) -> LearnedRanker:
    """``neighbours``: also remember the training queries (the extractor must have been made with
    ``neighbours=True``); ``documents``: where the memory's extra candidates come from."""
    p = {**DEFAULT_PARAMS, **(params or {})}
    prior = Prior.from_queries(ts.queries, law_of)
    memory = _memory(extractor, ts, neighbours)
    booster = _fit(ts, range(len(ts.queries)), extractor, prior, p, rounds, law_of, memory, documents, progress)
    spec = {"format": "legalrag-ranker", "version": 1, "features": extractor.names,
            "retrievers": extractor.retriever_names, "depth": extractor.depth, "params": p, "rounds": rounds,
            "n_train_queries": len(ts.queries), **(extra_spec or {})}
    if memory is not None:
        spec["neighbours"] = memory.spec()
    return LearnedRanker(extractor, booster, prior, spec, memory, documents)


def _memory(extractor: FeatureExtractor, ts: TrainingSet,
            neighbours: NeighbourSettings | None) -> NeighbourMemory | None:
    if bool(neighbours) != bool(extractor.neighbours):
        raise InputError("neighbour settings and the extractor disagree: make the extractor with "
                         "neighbours=True exactly when training with a neighbour memory")
    return neighbour_memory(extractor, ts, neighbours) if neighbours else None


def folds(n: int, k: int = 5, seed: int = 13) -> list[list[int]]:
    """Split query positions 0..n-1 into ``k`` shuffled folds."""
    if k < 2 or k > n:
        raise InputError(f"k-fold cross-validation needs 2 <= k <= number of queries ({n}), got {k}")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return [order[i::k] for i in range(k)]


def cross_validate(extractor: FeatureExtractor, ts: TrainingSet, law_of: Mapping[str, str], *, k: int = 5,
                   seed: int = 13, params: Mapping[str, Any] | None = None, rounds: int = DEFAULT_ROUNDS,
                   neighbours: NeighbourSettings | None = None,
                   documents: DocumentLookup | None = None) -> dict[str, list[Hit]]:
    """Rerank every query with a ranker trained (priors and neighbour memory included) on the other folds;
    returns qid -> hits."""
    p = {**DEFAULT_PARAMS, **(params or {})}
    full = _memory(extractor, ts, neighbours)
    out: dict[str, list[Hit]] = {}
    for test in folds(len(ts.queries), k, seed):
        test_set = set(test)
        train_idx = [i for i in range(len(ts.queries)) if i not in test_set]
        prior = Prior.from_queries([ts.queries[i] for i in train_idx], law_of)
        memory = full.subset(train_idx) if full is not None else None
        booster = _fit(ts, train_idx, extractor, prior, p, rounds, law_of, memory, documents)
        for i in test:
            hits, base = _rows(extractor, ts, i, memory, documents or {}, own=False)
            if not hits:
                out[ts.queries[i].id] = []
                continue
            scores = booster.predict(extractor.set_priors(base, hits, prior), num_threads=1)
            out[ts.queries[i].id] = reranked(hits, list(scores), "learned")
    return out


# -- index integration ------------------------------------------------------------------------------------

def extractor_for_index(index: Any, depth: int = 100, cross: Any = None, neighbours: bool = False) -> FeatureExtractor:
    """Features from the index's ``bm25`` component and every ``dense-*`` component (in manifest order), plus
    a cross-encoder's scores when ``cross`` is given."""
    bm25 = index.retriever("bm25") if "bm25" in index.names else None
    dense = [index.retriever(n) for n in index.names if index.manifest["components"][n]["kind"] == "dense"]
    if bm25 is None and not dense:
        raise InputError(f"the index at {index.path} has neither bm25 nor dense components to compute ranker "
                         "features from")
    return FeatureExtractor(bm25, dense, depth, cross=cross, neighbours=neighbours)


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


def _index_spec(index: Any) -> dict[str, Any] | None:
    """``INDEX/ranker/spec.json``, or None when the index has no trained ranker."""
    spec_file = Path(index.path) / RANKER_DIR / "spec.json"
    return json.loads(spec_file.read_text(encoding="utf-8")) if spec_file.exists() else None


def cross_encoder_path(index: Any) -> Path | None:
    """The cross-encoder directory the index's trained ranker needs as a feature (None when it needs none)."""
    where = (_index_spec(index) or {}).get("cross_encoder")
    if not where:
        return None
    p = Path(where)
    return p if p.is_absolute() else Path(index.path) / p


def candidate_retriever(index: Any, name: str | None = None) -> str:
    """``name`` when given (checked against the index); else the hybrid when there is one, else the default."""
    if name:
        if name not in index.names:
            raise InputError(f"the index at {index.path} has no component {name!r}; it has "
                             f"{', '.join(index.names)} (see `legalrag index info`)", field="candidates")
        return name
    return "hybrid" if "hybrid" in index.names else index.default


def train_for_index(index: Any, queries: Sequence[Query], *, depth: int = 50, rounds: int = DEFAULT_ROUNDS,
                    params: Mapping[str, Any] | None = None, progress: bool = False,
                    cross: Any = None, neighbours: NeighbourSettings | None = None,
                    candidates: str | None = None) -> LearnedRanker:
    """Train on ``queries`` over the index's candidates and save to ``INDEX/ranker`` (atomically).
    ``candidates``: the component whose top ``depth`` it reranks (default: the hybrid, else the default one).
    ``cross``: a cross-encoder reranker whose scores become features (recorded in the spec);
    ``neighbours``: remember the training queries and use what the similar ones cited."""
    extractor = extractor_for_index(index, depth, cross, neighbours=neighbours is not None)
    name = candidate_retriever(index, candidates)
    ts = build_training_set(extractor, index.retriever(name), queries, depth, progress=progress)
    law_of = {d.id: str(d.metadata.get("law", "")) for d in index.documents}
    ranker = train_ranker(extractor, ts, law_of, params=params, rounds=rounds, neighbours=neighbours,
                          documents=index, progress=progress,
                          extra_spec={"candidates": name, "corpus_sha256": index.corpus_sha256,
                                      **_cross_spec(index, cross)})
    ranker.save(Path(index.path) / RANKER_DIR)
    return ranker


def from_index(index: Any, cross: Any = None) -> LearnedRanker:
    """The ranker trained for this index (``INDEX/ranker``, written by ``legalrag train ranker``); ``cross``
    is the cross-encoder it was trained with, if any (:func:`cross_encoder_path` says where it is)."""
    d = Path(index.path) / RANKER_DIR
    spec = _index_spec(index)
    if spec is None:
        raise IndexError_(f"the index at {index.path} has no trained ranker; train one with "
                          f"`legalrag train ranker --index {index.path} --queries TRAIN.jsonl`")
    if spec.get("corpus_sha256") not in (None, index.corpus_sha256):
        raise IndexError_(f"the ranker at {d} was trained on another corpus; retrain it")
    if spec.get("cross_encoder") and cross is None:
        raise IndexError_(f"the ranker at {d} uses the cross-encoder at {spec['cross_encoder']} as a feature; "
                          "pass it in (the CLI and `wiring.make_reranker` load it from the spec)")
    return LearnedRanker.load(d, extractor_for_index(index, spec.get("depth", 100), cross,
                                                     neighbours=bool(spec.get("neighbours"))),
                              documents=index)


def ranker_summary(index: Any) -> dict[str, Any] | None:
    """What ``INDEX/ranker`` holds (from its spec), for `legalrag index info`; None when there is none."""
    spec = _index_spec(index)
    if spec is None:
        return None
    keys = ("n_train_queries", "candidates", "depth", "features", "retrievers", "cross_encoder", "neighbours")
    return {k: spec.get(k) for k in keys}


def cross_validate_for_index(index: Any, queries: Sequence[Query], *, k_folds: int = 5, depth: int = 50,
                             rounds: int = DEFAULT_ROUNDS, k: int = 10, params: Mapping[str, Any] | None = None,
                             progress: bool = False, seed: int = 13, cross: Any = None,
                             neighbours: NeighbourSettings | None = None,
                             candidates: str | None = None) -> dict[str, float]:
    """K-fold (by query) metrics of the learned ranker over the index's candidates, without saving anything."""
    from legalrag.evaluation.metrics import evaluate_rankings

    extractor = extractor_for_index(index, depth, cross, neighbours=neighbours is not None)
    ts = build_training_set(extractor, index.retriever(candidate_retriever(index, candidates)), queries, depth,
                            progress)
    law_of = {d.id: str(d.metadata.get("law", "")) for d in index.documents}
    hits = cross_validate(extractor, ts, law_of, k=k_folds, seed=seed, params=params, rounds=rounds,
                          neighbours=neighbours, documents=index)
    return evaluate_rankings({q: [h.id for h in hs] for q, hs in hits.items()},
                             {q.id: set(q.gold_ids) for q in queries}, ks=(k,))
