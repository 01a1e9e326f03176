"""The learned ranker's neighbour memory: what similar training questions cited becomes features and extra
candidates. Toy corpus: each question's gold article shares no words with it, so the first stage never finds
it; the questions of the same topic cite the same article, so their votes do."""

from __future__ import annotations

import json

import numpy as np
import pytest

from legalrag.errors import IndexError_, InputError
from legalrag.evaluation.metrics import evaluate_rankings
from legalrag.rerank.features import FeatureExtractor
from legalrag.rerank.learned import (build_training_set, cross_validate, from_index, train_for_index)
from legalrag.rerank.neighbours import NEIGHBOUR_FEATURES, NeighbourMemory, NeighbourSettings, settings_or_none
from legalrag.types import Document, Hit, Query
from legalrag.wiring import Root

TOPICS = ["租金", "工资", "押金", "借款", "房屋", "车辆", "保险", "利息", "违约金", "定金", "赠与", "继承"]
SMALL = {"min_data_in_leaf": 2, "min_data_in_bin": 1}
CODES = "甲乙丙丁戊己庚辛壬癸子丑"


def corpus() -> list[Document]:
    docs = []
    for i, t in enumerate(TOPICS):
        docs.append(Document(id=f"a{i}", text=f"{t}{t}事项另行说明。", title=f"乙法第{i + 1}条", metadata={"law": "乙法"}))
        # the gold: no character in common with the questions about it
        docs.append(Document(id=f"g{i}", text=f"第{CODES[i]}号规则", title=f"甲法第{i + 1}条", metadata={"law": "甲法"}))
    return docs


def queries(reps: int = 4) -> list[Query]:
    return [Query(text=f"{t}问题{r}", id=f"q{r}-{i}", gold_ids=(f"g{i}",))
            for r in range(reps) for i, t in enumerate(TOPICS)]


@pytest.fixture
def index(char_hash_hybrid):
    return char_hash_hybrid(corpus())


def memory(k: int = 2, expand: int = 5) -> NeighbourMemory:
    vecs = np.array([[1, 0, 0], [0.8, 0.6, 0], [0, 0, 1]], dtype=np.float32)
    return NeighbourMemory(["x", "y", "z"], [("d1",), ("d1", "d2"), ("d3",)], vecs,
                           NeighbourSettings(k=k, temperature=0.1, expand=expand), encoder="dense-test")


def test_votes_are_weighted_shares_of_the_nearest_questions():
    v = memory().votes(np.array([1.0, 0.0, 0.0]))
    w_x, w_y = 1.0, np.exp((0.8 - 1.0) / 0.1)
    assert v.top_sim == pytest.approx(1.0)
    assert v.by_doc["d1"].share == pytest.approx(1.0) and v.by_doc["d1"].count == 2
    assert v.by_doc["d2"].share == pytest.approx(w_y / (w_x + w_y)) and v.by_doc["d2"].sim == pytest.approx(0.8)
    assert "d3" not in v.by_doc  # z is not among the k = 2 nearest
    assert v.ranked() == ["d1", "d2"]
    own = memory().votes(np.array([1.0, 0.0, 0.0]), exclude="x")  # a training row never votes for itself
    assert own.top_sim == pytest.approx(0.8) and own.by_doc["d1"].count == 1 and "d3" in own.by_doc
    assert memory().subset([2]).votes(np.array([1.0, 0.0, 0.0])).ranked() == ["d3"]


def test_columns_and_expansion():
    docs = {d: Document(id=d, text=d) for d in ("d1", "d2", "d3", "d9")}
    votes = memory().votes(np.array([1.0, 0.0, 0.0]))
    first = [Hit(document=docs["d9"], score=0.5, rank=1, retriever="hybrid"),
             Hit(document=docs["d2"], score=0.4, rank=2, retriever="hybrid")]
    hits = memory(expand=5).expand(first, votes, docs)
    assert [h.id for h in hits] == ["d9", "d2", "d1"] and hits[2].sources == {"neighbours": 1} and hits[2].rank == 3
    assert [h.id for h in memory(expand=0).expand(first, votes, docs)] == ["d9", "d2"]
    cols = NeighbourMemory.columns(hits, votes)
    assert cols.shape == (3, len(NEIGHBOUR_FEATURES))
    np.testing.assert_allclose(cols[0], [0, 0, 1, 0, 1])  # d9: no vote
    np.testing.assert_allclose(cols[2], [1, 1, 0, 2, 1], atol=1e-6)  # d1: both neighbours cite it


def test_bad_settings_and_shapes_are_clear_errors():
    with pytest.raises(InputError, match="-o neighbours must be at least 1"):
        NeighbourSettings(k=0)
    with pytest.raises(InputError, match="-o expand"):
        NeighbourSettings(expand=-1)
    assert settings_or_none(0) is None and settings_or_none(3).k == 3
    with pytest.raises(InputError, match="do not line up"):
        NeighbourMemory(["x"], [("d",), ("e",)], np.zeros((1, 3)), NeighbourSettings(), "e")


def test_memory_finds_what_the_first_stage_cannot(index):
    qs = queries()
    law_of = {d.id: d.metadata["law"] for d in index.documents}
    docs = {d.id: d for d in index.documents}
    gold = {q.id: set(q.gold_ids) for q in qs}
    dense = index.retriever("dense-openai-char-hash")
    plain_ex = FeatureExtractor(index.retriever("bm25"), [dense], depth=5)
    plain = cross_validate(plain_ex, build_training_set(plain_ex, index.retriever("hybrid"), qs, 5), law_of,
                           k=3, params=SMALL, rounds=30)
    ex = FeatureExtractor(index.retriever("bm25"), [dense], depth=5, neighbours=True)
    ts = build_training_set(ex, index.retriever("hybrid"), qs, 5)
    assert ts.base == [] and ts.qvecs[0].shape == (len(qs), 32)
    nb = cross_validate(ex, ts, law_of, k=3, params=SMALL, rounds=30, neighbours=NeighbourSettings(k=3, expand=5),
                        documents=docs)
    before = evaluate_rankings({q: [h.id for h in hs] for q, hs in plain.items()}, gold)
    after = evaluate_rankings({q: [h.id for h in hs] for q, hs in nb.items()}, gold)
    assert before["recall@10"] < 0.2  # the gold rarely reaches the first stage's top 5
    assert after["recall@10"] > 0.9 and after["mrr@10"] > 0.8, after
    assert any(h.sources == {"neighbours": 1} for hs in nb.values() for h in hs)
    with pytest.raises(InputError, match="disagree"):
        cross_validate(plain_ex, ts, law_of, k=3, neighbours=NeighbourSettings())


def test_trained_memory_is_saved_loaded_and_used_by_the_pipeline(index):
    ranker = train_for_index(index, queries(), depth=5, rounds=30, params=SMALL,
                             neighbours=NeighbourSettings(k=3, expand=5))
    d = index.path / "ranker"
    assert sorted(p.name for p in d.iterdir()) == ["model.txt", "neighbours.jsonl", "neighbours.npy", "prior.json",
                                                   "spec.json"]
    spec = json.loads((d / "spec.json").read_text())
    assert spec["neighbours"] == {"k": 3, "temperature": 0.02, "expand": 5, "encoder": "dense:openai:char-hash",
                                  "n_queries": len(queries())}
    assert spec["features"][-len(NEIGHBOUR_FEATURES):] == list(NEIGHBOUR_FEATURES)
    loaded = from_index(Root().index(index.path))
    assert loaded.memory is not None and len(loaded.memory) == len(queries())
    np.testing.assert_array_equal(loaded.memory.vectors, ranker.memory.vectors)
    question = "押金问题9"  # not a training question
    hits = Root().index(index.path).retriever("hybrid").retrieve(question, k=5)
    assert "g2" not in {h.id for h in hits}
    np.testing.assert_allclose(loaded.score(question, hits), ranker.score(question, hits), rtol=1e-6)
    top = Root().build_pipeline(Root().index(index.path), rerank="learned").search(question, k=3)
    assert top[0].id == "g2" and [h.rank for h in top] == [1, 2, 3]
    (d / "neighbours.npy").unlink()
    with pytest.raises(IndexError_, match="neighbours.npy is missing"):
        from_index(Root().index(index.path))


def test_memory_needs_a_dense_component(index):
    ex = FeatureExtractor(index.retriever("bm25"), [], depth=5, neighbours=True)
    ts = build_training_set(ex, index.retriever("bm25"), queries(1), 5)
    with pytest.raises(InputError, match="compares questions by a dense encoder"):
        cross_validate(ex, ts, {}, k=2, neighbours=NeighbourSettings())


def test_cross_scores_are_memoised_across_folds():
    """With a memory, cross-validation rebuilds each row per fold; the costly cross-encoder reads a pair once."""
    calls: list[int] = []

    class Cross:
        name, max_chars = "cross", 50

        def score(self, query, texts):
            calls.append(len(texts))
            return [float(len(t)) for t in texts]

    docs = corpus()[:4]
    ex = FeatureExtractor(None, [], depth=5, cross=Cross())
    hits = [Hit(document=d, score=1.0, rank=i) for i, d in enumerate(docs, 1)]
    first = ex.base_matrix("押金问题", hits[:3])
    again = ex.base_matrix("押金问题", hits)
    assert calls == [3, 1]
    np.testing.assert_allclose(again[:3, ex.names.index("cross_score")], first[:, ex.names.index("cross_score")])
