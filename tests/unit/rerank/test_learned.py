"""The learned ranker on a toy corpus where BM25 alone ranks the wrong law first and the law prior (learned
from training qrels) fixes it: cross-validated by query, saved/loaded as LightGBM text + JSON, used through
the search pipeline."""

from __future__ import annotations

import json

import numpy as np
import pytest

from legalrag.errors import IndexError_, InputError
from legalrag.evaluation.metrics import evaluate_rankings
from legalrag.rerank.base import Reranker
from legalrag.rerank.features import FeatureExtractor, Prior
from legalrag.rerank.learned import (LearnedRanker, build_training_set, cross_validate, cross_validate_for_index,
                                     folds, from_index, train_for_index)
from legalrag.wiring import Root
from legalrag.types import Document, Hit, Query

TOPICS = ["租金", "工资", "押金", "借款", "房屋", "车辆", "保险", "利息", "违约金", "定金", "赠与", "继承",
          "抚养", "赡养", "遗嘱", "担保", "抵押", "质押", "留置", "侵权"]
SMALL = {"min_data_in_leaf": 2, "min_data_in_bin": 1}


def corpus() -> list[Document]:
    docs = []
    for i, t in enumerate(TOPICS):
        # gold articles live in 甲法 and mention the topic once; 乙法 decoys mention it three times
        docs.append(Document(id=f"a{i}", text=f"关于{t}的规定，依照本法处理。", title=f"甲法第{i + 1}条",
                             metadata={"law": "甲法"}))
        docs.append(Document(id=f"b{i}", text=f"{t}{t}{t}事项另行说明。", title=f"乙法第{i + 1}条",
                             metadata={"law": "乙法"}))
    return docs


def queries() -> list[Query]:
    qs = []
    for rep in range(3):
        for i, t in enumerate(TOPICS):
            qs.append(Query(text=f"{t}问题{'怎么办' if rep else '如何处理'}{rep}", id=f"q{rep}-{i}", gold_ids=(f"a{i}",)))
    return qs


@pytest.fixture
def index(char_hash_hybrid):
    return char_hash_hybrid(corpus())


def test_prior_and_folds():
    law_of = {d.id: d.metadata["law"] for d in corpus()}
    p = Prior.from_queries(queries()[:5], law_of)
    assert p.article == {f"a{i}": 1 for i in range(5)} and p.law == {"甲法": 5}
    f = folds(10, 3)
    assert sorted(i for fold in f for i in fold) == list(range(10)) and len(f) == 3
    with pytest.raises(InputError, match="2 <= k"):
        folds(3, 5)


def test_features_are_exact_and_named(index):
    ex = FeatureExtractor(index.retriever("bm25"), [index.retriever("dense-openai-char-hash")], depth=10)
    hits = index.retriever("hybrid").retrieve("租金问题", k=4)
    m = ex.matrix("租金问题", hits, Prior({"a0": 3}, {"甲法": 7}))
    assert m.shape == (len(hits), len(ex.names))
    row = {n: m[0, j] for j, n in enumerate(ex.names)}
    assert row["fused_rank"] == 1 and row["bm25_rel"] <= 1
    a0 = next(j for j, h in enumerate(hits) if h.id == "a0")
    assert m[a0, ex.names.index("article_prior")] == pytest.approx(np.log1p(3))
    assert m[a0, ex.names.index("law_prior")] == pytest.approx(np.log1p(7))
    bm25_scores = index.retriever("bm25").scores("租金问题")
    pos = [d.id for d in index.documents].index("a0")
    assert m[a0, ex.names.index("bm25_score")] == pytest.approx(bm25_scores[pos], rel=1e-5)


def test_cross_validation_beats_the_candidate_order(index):
    qs = queries()
    ex = FeatureExtractor(index.retriever("bm25"), [index.retriever("dense-openai-char-hash")], depth=10)
    ts = build_training_set(ex, index.retriever("hybrid"), qs, depth=10)
    gold = {q.id: set(q.gold_ids) for q in qs}
    before = evaluate_rankings({q.id: [h.id for h in hs] for q, hs in zip(qs, ts.hits)}, gold)
    law_of = {d.id: d.metadata["law"] for d in index.documents}
    cv = cross_validate(ex, ts, law_of, k=3, params=SMALL, rounds=30)
    after = evaluate_rankings({q: [h.id for h in hs] for q, hs in cv.items()}, gold)
    assert before["mrr@10"] < 0.8 and after["mrr@10"] > 0.95 and after["n_queries"] == len(qs)
    assert all(h.retriever == "learned" and h.sources for hs in cv.values() for h in hs)
    m = cross_validate_for_index(index, qs, k_folds=3, depth=10, rounds=30, params=SMALL)
    assert m["mrr@10"] > 0.95


def test_train_save_load_and_pipeline(index):
    ranker = train_for_index(index, queries(), depth=10, rounds=30, params=SMALL)
    d = index.path / "ranker"
    assert sorted(p.name for p in d.iterdir()) == ["model.txt", "prior.json", "spec.json"]
    assert (d / "model.txt").read_text().startswith("tree")
    spec = json.loads((d / "spec.json").read_text())
    assert spec["candidates"] == "hybrid" and spec["features"] == ranker.extractor.names
    loaded = from_index(Root().index(index.path))
    assert isinstance(loaded, Reranker)
    hits = Root().index(index.path).retriever("hybrid").retrieve("押金问题怎么办", k=10)
    np.testing.assert_allclose(loaded.score("押金问题怎么办", hits), ranker.score("押金问题怎么办", hits))
    top = Root().build_pipeline(Root().index(index.path), retriever="hybrid", rerank="learned").search("押金问题怎么办", k=3)
    assert top[0].id == "a2" and [h.rank for h in top] == [1, 2, 3]
    plain = Root().build_pipeline(Root().index(index.path), retriever="hybrid", rerank="none").search("押金问题怎么办", k=3)
    assert plain[0].retriever == "hybrid"
    # with no retriever named, the ranker reranks the candidates it was trained on, not the index's default
    default = Root().build_pipeline(Root().index(index.path), rerank="learned")
    assert default.retriever.name == "hybrid"
    # the index's default: the hybrid, since an untrained dense component (char-hash) ranks below it
    assert Root().index(index.path).default == "hybrid"
    assert [h.id for h in default.search("押金问题怎么办", k=3)] == [h.id for h in top]
    assert Root().build_pipeline(Root().index(index.path), rerank="none").retriever.name == "hybrid"


def test_the_ranker_can_rerank_another_component_and_the_pipeline_follows_it(index):
    dense = next(n for n in index.names if n.startswith("dense"))
    train_for_index(index, queries(), depth=10, rounds=30, params=SMALL, candidates=dense)
    assert json.loads((index.path / "ranker" / "spec.json").read_text())["candidates"] == dense
    pipe = Root().build_pipeline(Root().index(index.path), rerank="learned")
    assert pipe.retriever.name.startswith("dense") and pipe.search("押金问题怎么办", k=3)[0].id == "a2"
    with pytest.raises(InputError, match="no component 'nope'; it has bm25"):
        train_for_index(index, queries(), depth=10, rounds=5, candidates="nope")


def test_missing_or_stale_ranker_is_a_clear_error(index):
    with pytest.raises(IndexError_, match="no trained ranker; train one with `legalrag train ranker"):
        from_index(index)
    train_for_index(index, queries()[:20], depth=10, rounds=5, params=SMALL)
    bm25_only = FeatureExtractor(index.retriever("bm25"), [], depth=10)
    with pytest.raises(IndexError_, match="retrain it"):
        LearnedRanker.load(index.path / "ranker", bm25_only)


def test_no_gold_in_candidates_is_an_error(index):
    qs = [Query(text="完全无关", id="x", gold_ids=("missing",))]
    with pytest.raises(InputError, match="no training query has a gold document"):
        train_for_index(index, qs, depth=5, rounds=5)


def test_training_rows_leave_their_own_qrels_out_of_the_priors():
    docs = corpus()
    hits = [Hit(document=d, score=1.0, rank=i) for i, d in enumerate(docs[:2], 1)]  # a0 (甲法), b0 (乙法)
    ex = FeatureExtractor(None, [], depth=10)
    base = np.zeros((2, len(ex.names)), dtype=np.float32)
    prior = Prior({"a0": 3}, {"甲法": 5})
    a, law = ex.names.index("article_prior"), ex.names.index("law_prior")
    test_rows = ex.set_priors(base, hits, prior)
    train_rows = ex.set_priors(base, hits, prior, own_gold=("a0",), own_laws={"甲法": 1})
    assert test_rows[0, a] == pytest.approx(np.log1p(3)) and train_rows[0, a] == pytest.approx(np.log1p(2))
    assert test_rows[0, law] == pytest.approx(np.log1p(5)) and train_rows[0, law] == pytest.approx(np.log1p(4))
    assert train_rows[1, a] == 0 and train_rows[1, law] == 0
