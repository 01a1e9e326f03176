"""Reciprocal-rank fusion and weighted score fusion, checked against hand-computed values."""

from __future__ import annotations

import pytest

from legalrag.errors import InputError
from legalrag.retrieval.fusion import fuse, normalise, reciprocal_rank_fusion, weighted_score_fusion
from legalrag.types import Document, Hit


def run(name, ids_scores):
    return [Hit(Document(id=i, text=i), score=s, rank=r, retriever=name)
            for r, (i, s) in enumerate(ids_scores, 1)]


BM25 = run("bm25", [("a", 9.0), ("b", 5.0), ("c", 1.0)])
DENSE = run("dense:e5-small", [("c", 0.9), ("a", 0.8), ("d", 0.1)])


def test_rrf_scores_order_and_sources():
    fused = reciprocal_rank_fusion([BM25, DENSE])
    assert [h.id for h in fused] == ["a", "c", "b", "d"]
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1].score == pytest.approx(1 / 63 + 1 / 61)
    assert [h.rank for h in fused] == [1, 2, 3, 4] and fused[0].retriever == "rrf"
    assert dict(fused[0].sources) == {"bm25": 1, "dense:e5-small": 2}
    assert dict(fused[2].sources) == {"bm25": 2}


def test_rrf_weights_change_the_order():
    fused = reciprocal_rank_fusion([BM25, DENSE], weights={"dense:e5-small": 3.0}, k=1, limit=2)
    # a: 1/2 + 3/3 = 1.5; c: 1/4 + 3/2 = 1.75
    assert [h.id for h in fused] == ["c", "a"]
    assert fused[0].score == pytest.approx(1.75)


def test_fusing_fused_lists_keeps_the_trail():
    first = reciprocal_rank_fusion([BM25, DENSE], name="rrf1")
    again = reciprocal_rank_fusion([first, run("qld", [("d", 3.0)])])
    d = next(h for h in again if h.id == "d")
    assert dict(d.sources) == {"dense:e5-small": 3, "rrf1": 4, "qld": 1}


def test_weighted_minmax_fusion():
    fused = weighted_score_fusion([BM25, DENSE], weights=[1.0, 2.0])
    # minmax bm25: a 1, b .5, c 0 ; dense: c 1, a .875, d 0 ; absent -> 0
    scores = {h.id: h.score for h in fused}
    assert scores == pytest.approx({"a": 1 + 2 * 0.875, "c": 0 + 2 * 1, "b": 0.5, "d": 0.0})
    assert [h.id for h in fused] == ["a", "c", "b", "d"]


def test_zscore_and_degenerate_normalisation():
    z = normalise([1.0, 2.0, 3.0], "zscore")
    assert z.mean() == pytest.approx(0) and z.std() == pytest.approx(1)
    assert list(normalise([2.0, 2.0], "minmax")) == [1.0, 1.0]
    assert list(normalise([2.0, 2.0], "zscore")) == [0.0, 0.0]
    fused = weighted_score_fusion([BM25, DENSE], normalisation="zscore")
    assert {h.id for h in fused} == {"a", "b", "c", "d"}


def test_bad_fusion_arguments():
    with pytest.raises(InputError, match="not fused"):
        reciprocal_rank_fusion([BM25, DENSE], weights={"qld": 1.0})
    with pytest.raises(InputError, match="2 fusion weights for 1"):
        reciprocal_rank_fusion([BM25], weights=[1, 2])
    with pytest.raises(InputError, match="unknown score normalisation"):
        weighted_score_fusion([BM25], normalisation="softmax")
    with pytest.raises(InputError, match="unknown fusion method"):
        fuse([BM25], "borda")
    assert reciprocal_rank_fusion([[], []]) == []
