"""The decisive-article selector, pinned where mutation testing found it unpinned: each signal of a candidate (its
rank and score, support, title and law overlap, clause BM25, priors without the row's own label, co-retrieval, the
neighbour columns), the linear score and the Platt curve at and around their clips, the rank-only probabilities,
which candidates are chosen (the threshold on both sides, ``k``, an empty question, ties in retrieval order), the
index's own vectors, and the model files: every refusal (missing, unreadable, altered, another format, an unknown
scorer) with its path and its fix, read back with every part, LightGBM and neighbour memory included."""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.selector import FixedSupport
from unit.answer.test_select import ARTICLES, HELD_OUT, TRAIN, _doc, _hits

import legalrag
from legalrag.answer import select as sel_mod
from legalrag.answer.select import (CARD_FILE, FEATURES, RANK_ONLY, RESTORE, SPEC_FILE, ArticleSelection,
                                    ArticleSelector, BoosterScorer, ClauseBM25, IndexedSupport, IndexVectors,
                                    LinearScorer, Platt, Priors, SelectorModel, check_files, dense_component,
                                    feature_matrix, law_of, load_selector, read_model, short_law_name,
                                    shipped_selector_dir, write_model)
from legalrag.citecheck.support import BigramIdf, SupportScorer
from legalrag.citecheck.support_features import bigrams
from legalrag.errors import InputError, ModelError
from legalrag.testing import FakeEncoder
from legalrag.types import Document, Hit

N = len(FEATURES)
COL = {name: i for i, name in enumerate(FEATURES)}


def _linear(intercept: float = 0.0, **weights: float) -> LinearScorer:
    """A linear score over the named features (unstandardised: mean 0, scale 1)."""
    return LinearScorer(tuple(float(weights.get(f, 0.0)) for f in FEATURES), intercept, (0.0,) * N, (1.0,) * N)


def _model(scorer=None, *, a: float = 1.0, b: float = 0.0, threshold: float = 0.5, priors: Priors | None = None,
           memory=None, spec=None) -> SelectorModel:
    return SelectorModel(scorer or _linear(), Platt(a, b), threshold, priors or Priors(), spec or {}, memory)


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


class RecordingSupport:
    """A support model that gives each article a fixed probability by id and records what it was asked."""

    def __init__(self, by_id=None, default: float = 0.5, encoder=None):
        self.by_id, self.default, self.encoder, self.calls = dict(by_id or {}), default, encoder, []

    def scores(self, pairs):
        self.calls.append([(q, d.id) for q, d in pairs])
        return [self.by_id.get(d.id, self.default) for _, d in pairs]


@dataclass
class FlatIdf:
    """An idf table: the given weight per bigram (1.0 otherwise), and the average clause length."""

    weights: dict = field(default_factory=dict)
    avg_len: float = 10.0

    def idf(self, term: str) -> float:
        return self.weights.get(term, 1.0)


class FixedLexical:
    """A clause-BM25 stand-in returning a fixed (score, cover) per article text; records the questions."""

    def __init__(self, by_text):
        self.by_text, self.questions = by_text, []

    def best(self, question, article):
        self.questions.append(question)
        return self.by_text.get(article, (0.0, 0.0))


def _hit(i, text="正文。", title="", law=None, score=1.0, sources=None) -> Hit:
    meta = {"law": law} if law is not None else {}
    return Hit(Document(f"d{i}", text, title, metadata=meta), score, i + 1, sources=sources or {})


def _fm(question, hits, *, sup=None, priors=None, lexical=None, **kw) -> np.ndarray:
    return feature_matrix(question, hits, support_scores=sup if sup is not None else [0.0] * len(hits),
                          priors=priors or Priors(), clause_bm25=lexical or FixedLexical({}), **kw)


# -- law names ----------------------------------------------------------------------------------------------------

def test_the_law_of_an_article_is_its_metadata_else_its_title_without_the_article_number():
    assert law_of(Document("a", "", "刑法第五条", metadata={"law": "中华人民共和国刑法"})) == "中华人民共和国刑法"
    assert law_of(Document("a", "", "劳动合同法第八十二条")) == "劳动合同法"
    assert law_of(Document("a", "", "刑法第一百三十三条之一")) == "刑法"
    assert law_of(Document("a", "", "民法典第188条")) == "民法典"
    assert law_of(Document("a", "", " 民法典 第二条", metadata={"law": ""})) == "民法典"
    assert law_of(Document("a", "", "民法典第二条", metadata={"law": None})) == "民法典"
    assert law_of(Document("a", "", "第五条民法典")) == "第五条民法典"  # the number only at the end
    assert law_of(SimpleNamespace(title="刑法第十条")) == "刑法"  # no metadata at all
    assert law_of(SimpleNamespace(title=None, metadata=None)) == ""


def test_a_short_law_name_drops_the_state_prefix_and_the_title_marks():
    assert short_law_name("中华人民共和国民法典") == "民法典"
    assert short_law_name("《民法典》 ") == "民法典"
    assert short_law_name("民法典中华人民共和国") == "民法典中华人民共和国"


# -- priors -------------------------------------------------------------------------------------------------------

def test_the_article_prior_is_the_log_count_without_the_rows_own_label():
    p = Priors({"a": 3}, {})
    assert p.article_prior("a") == math.log1p(3)
    assert p.article_prior("a", 1) == math.log1p(2)
    assert p.article_prior("b") == 0.0 and p.article_prior("b", 1) == 0.0  # never below an unseen article


def test_the_law_prior_is_add_one_smoothed_over_the_laws_seen():
    p = Priors({}, {"A": 3, "B": 1})
    assert p.total == 4
    assert p.law_prior("A") == pytest.approx(math.log(4 / 7))
    assert p.law_prior("A", 1) == pytest.approx(math.log(3 / 6))
    assert p.law_prior("B") == pytest.approx(math.log(2 / 7))
    assert p.law_prior("C") == pytest.approx(math.log(1 / 7))
    assert p.law_prior("A", 10) == pytest.approx(math.log(1 / 3))  # counts never below zero
    assert Priors().law_prior("x") == 0.0 and Priors().total == 0


def test_priors_from_a_dict_convert_their_keys_and_counts_and_tolerate_missing_parts():
    assert Priors.from_dict({"article": {1: "2"}, "law": {"刑法": 3.0}}) == Priors({"1": 2}, {"刑法": 3})
    assert Priors.from_dict({}) == Priors() and Priors.from_dict({"article": None, "law": None}) == Priors()
    assert Priors.from_gold([["a", "b"]], {"a": "刑法"}) == Priors({"a": 1, "b": 1}, {"刑法": 1})


# -- clause BM25 ----------------------------------------------------------------------------------------------------

def _reference(question, clause, idf):
    qb = set(bigrams(question))
    ub = bigrams(clause)
    tf = Counter(b for b in ub if b in qb)
    norm = 1.2 * (1 - 0.75 + 0.75 * len(ub) / idf.avg_len)
    score = sum(idf.idf(b) * n * 2.2 / (n + norm) for b, n in tf.items())
    ideal = sum(idf.idf(b) for b in qb) * 2.2 / (1 + 1.2 * 0.25)
    return min(score / ideal, 1.0), len(tf) / len(qb)


def test_the_clause_bm25_is_normalised_by_a_clause_holding_each_question_bigram_once():
    idf = FlatIdf({"甲乙": 2.0, "乙丙": 1.0}, avg_len=4.0)
    # the question's bigrams: 甲乙, 乙丙, 丙丁 (weights 2, 1, 1); the clause holds 甲乙 once in 3 bigrams
    score, cover = ClauseBM25(idf).best("甲乙丙丁", "甲乙戊己")
    norm = 1.2 * (1 - 0.75 + 0.75 * 3 / 4.0)
    assert score == pytest.approx((2.0 * 2.2 / (1 + norm)) / (4.0 * 2.2 / 1.3))
    assert cover == pytest.approx(1 / 3)
    assert (score, cover) == pytest.approx(_reference("甲乙丙丁", "甲乙戊己", idf))


def test_a_clause_repeating_the_question_scores_at_most_one():
    idf = FlatIdf(avg_len=1e9)
    once = ClauseBM25(idf).best("甲乙", "甲乙")
    assert once[0] == pytest.approx(1.0, abs=1e-6) and once[0] < 1.0 and once[1] == 1.0
    assert ClauseBM25(idf).best("甲乙", "甲乙" * 20) == (1.0, 1.0)  # capped


def test_the_best_score_and_the_best_cover_come_from_any_clause_and_unmatched_clauses_are_skipped():
    idf = FlatIdf({"甲乙": 10.0}, avg_len=6.0)
    q = "甲乙丙丁戊"  # 甲乙 (10), 乙丙, 丙丁, 丁戊 (1 each)
    article = "庚辛壬。甲乙甲乙。乙丙丙丁丁戊。"  # no match, then the heavy bigram twice, then three light ones
    score, cover = ClauseBM25(idf).best(q, article)
    heavy = _reference(q, "甲乙甲乙。", idf)
    light = _reference(q, "乙丙丙丁丁戊。", idf)
    assert heavy[0] > light[0] and light[1] > heavy[1]
    assert score == pytest.approx(heavy[0]) and cover == pytest.approx(light[1]) == 0.75


def test_the_clause_bm25_reads_the_first_2000_characters_of_an_article():
    idf = FlatIdf()
    assert ClauseBM25(idf).best("甲乙", "x" * 1998 + "甲乙")[1] == 1.0
    assert ClauseBM25(idf).best("甲乙", "x" * 1999 + "甲乙") == (0.0, 0.0)
    assert ClauseBM25(idf).best("，。", "甲乙") == (0.0, 0.0)  # a question without bigrams
    assert ClauseBM25(idf).best("甲乙", "") == (0.0, 0.0)


def test_the_clause_bm25_loads_the_shipped_idf_only_when_none_is_given():
    idf = FlatIdf()
    assert ClauseBM25(idf).idf is idf
    lazy = ClauseBM25()
    assert lazy.idf is BigramIdf.load() and lazy.idf is lazy.idf


# -- the feature matrix -------------------------------------------------------------------------------------------

def test_no_candidates_is_an_empty_matrix_of_every_feature():
    m = _fm("问题", [])
    assert m.shape == (0, N) and m.dtype == np.float64


def test_rank_and_score_columns_are_relative_to_the_first_positive_score():
    hits = [_hit(i, score=s) for i, s in enumerate([2.0, 1.0, 0.5])]
    m = _fm("问题", hits)
    assert list(m[:, COL["rank"]]) == [0.0, 1.0, 2.0]
    assert list(m[:, COL["log_rank"]]) == [0.0, math.log1p(1), math.log1p(2)]
    assert list(m[:, COL["score_rel"]]) == [1.0, 0.5, 0.25]
    # a first score of zero: relative to the best; no positive score at all: the raw scores
    assert list(_fm("问题", [_hit(i, score=s) for i, s in enumerate([0.0, 4.0, 2.0])])[:, COL["score_rel"]]) == \
        [0.0, 1.0, 0.5]
    assert list(_fm("问题", [_hit(i, score=s) for i, s in enumerate([-1.0, -2.0])])[:, COL["score_rel"]]) == \
        [-1.0, -2.0]
    assert list(_fm("问题", [_hit(i, score=0.0) for i in range(2)])[:, COL["score_rel"]]) == [0.0, 0.0]


def test_the_number_of_sources_and_the_length_columns():
    hits = [_hit(0, text="甲" * 9, sources={"bm25": 1, "dense": 3}), _hit(1, text="")]
    m = _fm("问题", hits)
    assert list(m[:, COL["n_sources"]]) == [2.0, 0.0]
    assert list(m[:, COL["log_len"]]) == [math.log1p(9), 0.0]


def test_the_support_columns_are_its_score_its_gap_to_the_best_and_its_rank_ties_in_retrieval_order():
    hits = [_hit(i) for i in range(4)]
    m = _fm("问题", hits, sup=[0.2, 0.9, 0.2, 0.5])
    assert list(m[:, COL["support"]]) == [0.2, 0.9, 0.2, 0.5]
    assert m[:, COL["support_gap"]] == pytest.approx([-0.7, 0.0, -0.7, -0.4])
    assert list(m[:, COL["support_rank"]]) == [2.0, 0.0, 3.0, 1.0]


def test_title_and_law_overlap_are_the_share_of_their_bigrams_the_question_holds():
    hits = [_hit(0, title="《民法典》第五条", law="中华人民共和国民法典"), _hit(1, title="刑法", law="刑法"),
            _hit(2, title="", law=""), _hit(3, title="法", law="法")]
    m = _fm("民法典的规定？", hits)
    # 民法典第五条: 民法 法典 典第 第五 五条, two of them in the question; the law 民法典: 民法 法典, both
    assert m[:, COL["title_overlap"]] == pytest.approx([2 / 5, 0.0, 0.0, 0.0])
    assert m[:, COL["law_overlap"]] == pytest.approx([1.0, 0.0, 0.0, 0.0])
    one = _fm("法", [_hit(0, title="法", law="法")])  # a one-character title is its own "bigram"
    assert one[0, COL["title_overlap"]] == 1.0 and one[0, COL["law_overlap"]] == 1.0
    assert _fm("法律", [_hit(0, title="法", law="法")])[0, COL["title_overlap"]] == 0.0


def test_a_question_names_a_law_by_its_short_name_without_the_trailing_fa():
    laws = ["中华人民共和国劳动合同法", "刑法", "法", "民法典", "中华人民共和国刑法"]
    hits = [_hit(i, law=law) for i, law in enumerate(laws)]
    m = _fm("劳动合同到期了，刑事上有问题吗", hits)
    assert list(m[:, COL["names_law"]]) == [1.0, 1.0, 0.0, 0.0, 1.0]


def test_the_question_is_read_on_its_first_500_characters():
    lexical = FixedLexical({})
    hits = [_hit(0, law="刑法", title="刑法")]
    assert _fm("问" * 499 + "刑", hits, lexical=lexical)[0, COL["names_law"]] == 1.0
    m = _fm("问" * 500 + "刑", hits, lexical=lexical)
    assert m[0, COL["names_law"]] == 0.0 and m[0, COL["title_overlap"]] == 0.0
    assert [len(q) for q in lexical.questions] == [500, 500]


def test_the_clause_columns_are_the_best_clause_its_gap_to_the_best_candidate_and_its_cover():
    hits = [_hit(0, text="一。"), _hit(1, text="二。"), _hit(2, text="三。")]
    lexical = FixedLexical({"一。": (0.2, 0.5), "二。": (0.6, 0.25), "三。": (0.1, 1.0)})
    m = _fm("问题", hits, lexical=lexical)
    assert list(m[:, COL["clause_bm25"]]) == [0.2, 0.6, 0.1]
    assert m[:, COL["clause_bm25_gap"]] == pytest.approx([-0.4, 0.0, -0.5])
    assert list(m[:, COL["clause_cover"]]) == [0.5, 0.25, 1.0]


def test_the_priors_of_a_training_question_leave_out_its_own_gold():
    priors = Priors({"d0": 3, "d1": 2}, {"刑法": 5, "民法典": 2})
    hits = [_hit(0, law="刑法"), _hit(1, law="民法典"), _hit(2, law="刑法")]
    plain = _fm("问题", hits, priors=priors)
    assert list(plain[:, COL["article_prior"]]) == [math.log1p(3), math.log1p(2), 0.0]
    assert plain[:, COL["law_prior"]] == pytest.approx([math.log(6 / 10), math.log(3 / 10), math.log(6 / 10)])
    own = _fm("问题", hits, priors=priors, own_gold=["d0", "d9"], law_by_id={"d0": "刑法", "d9": "刑法"})
    assert list(own[:, COL["article_prior"]]) == [math.log1p(2), math.log1p(2), 0.0]
    # two own labels in 刑法: its count 5 - 2 and the total 7 - 2
    assert own[[0, 2], COL["law_prior"]] == pytest.approx([math.log(4 / 8)] * 2)
    unnamed = _fm("问题", hits, priors=priors, own_gold=["d0"], law_by_id={"d0": ""})
    assert list(unnamed[:, COL["law_prior"]]) == list(plain[:, COL["law_prior"]])
    assert list(_fm("问题", hits, priors=priors, own_gold=["d0"])[:, COL["law_prior"]]) == \
        list(plain[:, COL["law_prior"]])


def test_co_retrieval_counts_the_other_candidates_of_the_same_law_weighted_by_their_rank():
    hits = [_hit(0, law="刑法"), _hit(1, law="民法典"), _hit(2, law="刑法"), _hit(3, law="刑法"),
            _hit(4, law=""), _hit(5, law="")]
    m = _fm("问题", hits)
    assert m[:, COL["co_law"]] == pytest.approx([2 / 5, 0.0, 2 / 5, 2 / 5, 0.0, 0.0])
    assert m[:, COL["co_law_weighted"]] == pytest.approx([1 / 3 + 1 / 4, 0.0, 1 + 1 / 4, 1 + 1 / 3, 0.0, 0.0])
    single = _fm("问题", [_hit(0, law="刑法")])
    assert single[0, COL["co_law"]] == 0.0 and single[0, COL["co_law_weighted"]] == 0.0


def test_without_votes_the_neighbour_columns_say_no_neighbour_cited_it():
    m = _fm("问题", [_hit(0), _hit(1)])
    cols = [COL[c] for c in ("nb_vote", "nb_sim", "nb_sim_gap", "nb_count", "nb_top_sim")]
    assert m[:, cols].tolist() == [[0.0, 0.0, 1.0, 0.0, 0.0]] * 2


# -- the scorers and the calibration -------------------------------------------------------------------------------

def test_the_linear_score_standardises_each_feature_and_ignores_a_scale_that_is_not_positive():
    s = LinearScorer((1.0, 10.0, 100.0), 0.5, (1.0, 1.0, 0.0), (2.0, 0.0, -4.0))
    x = np.array([[1.0, 2.0, 1.0], [3.0, 4.0, 0.0]])
    assert s.score(x).tolist() == [0.5 + 0 + 10 + 100, 0.5 + 1 + 30 + 0]
    assert s.to_dict() == {"kind": "linear", "coefficients": [1.0, 10.0, 100.0], "intercept": 0.5,
                           "mean": [1.0, 1.0, 0.0], "scale": [2.0, 0.0, -4.0]}


class RecordingBooster:
    def __init__(self):
        self.kwargs = None

    def predict(self, x, **kwargs):
        self.kwargs = kwargs
        return [float(r.sum()) for r in x]


def test_a_booster_scores_in_one_thread_as_floats_and_names_its_file():
    booster = RecordingBooster()
    out = BoosterScorer(booster).score(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert out.dtype == np.float64 and out.tolist() == [3.0, 7.0] and booster.kwargs == {"num_threads": 1}
    assert BoosterScorer(booster).to_dict() == {"kind": "lightgbm", "file": "model.txt"}
    assert BoosterScorer(booster, "other.txt").to_dict() == {"kind": "lightgbm", "file": "other.txt"}


def test_the_platt_curve_is_a_logistic_of_the_score_clipped_at_fifty():
    p = Platt(2.0, -1.0)
    assert p(np.array([0.5]))[0] == 0.5
    assert p(np.array([1.0]))[0] == pytest.approx(_sigmoid(1.0))
    assert p(np.array([-1.0]))[0] == pytest.approx(_sigmoid(-3.0))
    assert Platt(1.0, 0.0)(np.array([1000.0]))[0] == 1.0 / (1.0 + math.exp(-50.0))
    assert Platt(1.0, 0.0)(np.array([-1000.0]))[0] == 1.0 / (1.0 + math.exp(50.0))
    assert Platt(1.0, 0.0)(np.array([49.0]))[0] == 1.0 / (1.0 + math.exp(-49.0))
    assert Platt(1.0, 0.0)(np.array([-49.0]))[0] == 1.0 / (1.0 + math.exp(49.0))
    assert Platt(1.0, 0.0)([0, 1]).tolist() == [0.5, _sigmoid(1.0)]  # a plain list of ints
    assert p.to_dict() == {"kind": "platt", "a": 2.0, "b": -1.0}


@given(a=st.floats(0.0, 20.0), b=st.floats(-20.0, 20.0),
       scores=st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=20))
@settings(max_examples=60, deadline=None)
def test_the_probability_never_falls_as_the_score_rises_and_never_reaches_zero(a, b, scores):
    s = np.sort(np.array(scores))
    p = Platt(a, b)(s)
    assert np.all(np.diff(p) >= 0) and np.all(p > 0) and np.all(p <= 1)


def test_the_rank_only_probability_halves_at_rank_one_and_keeps_its_last_value_past_a_hundred():
    assert len(RANK_ONLY) == 100 and RANK_ONLY[0] == 0.5 and RANK_ONLY[1] == 0.25 and RANK_ONLY[99] == 0.005
    hits = [_hit(i) for i in range(103)]
    p = ArticleSelector().probabilities("问题", hits)
    assert p.tolist() == [0.5 / (1 + i) for i in range(100)] + [0.005] * 3
    assert ArticleSelector().probabilities("问题", []).shape == (0,)
    assert _model_selector().probabilities("问题", []).shape == (0,)


def _model_selector(scorer=None, support=None, **kw) -> ArticleSelector:
    return ArticleSelector(_model(scorer, **kw), support=support or FixedSupport(0.5))


def test_the_model_spec_holds_every_part_and_names_its_format():
    m = _model(_linear(0.25, rank=-1.0), a=1.5, b=-0.5, threshold=0.3, priors=Priors({"x": 1}, {"刑法": 1}),
               spec={"trained_on": "fixture", "format": "old"})
    spec = m.to_spec()
    assert spec == {"trained_on": "fixture", "format": "legalrag-selector", "version": 1, "features": list(FEATURES),
                    "scorer": m.scorer.to_dict(), "calibration": {"kind": "platt", "a": 1.5, "b": -0.5},
                    "threshold": 0.3, "priors": {"article": {"x": 1}, "law": {"刑法": 1}}, "neighbours": None}


# -- the selector -------------------------------------------------------------------------------------------------

def test_a_trained_selector_without_a_support_model_is_refused_naming_the_field():
    with pytest.raises(InputError) as err:
        ArticleSelector(_model())
    assert err.value.field == "support"
    assert str(err.value) == ("a trained selector needs the support pair model's scores: pass support= "
                              "(legalrag.wiring.make_support_scorer())")
    assert ArticleSelector(support=None).support is None  # no model: no support needed


def test_the_question_encoder_is_the_one_given_else_the_support_models():
    enc, other = FakeEncoder(), FakeEncoder()
    assert ArticleSelector(_model(), support=RecordingSupport(encoder=enc)).encoder is enc
    assert ArticleSelector(_model(), support=RecordingSupport(encoder=enc), encoder=other).encoder is other
    assert ArticleSelector(_model(), support=FixedSupport(0.5)).encoder is None
    lexical = ClauseBM25(FlatIdf())
    s = ArticleSelector(clause_bm25=lexical, path=Path("/x"))
    assert s.clause_bm25 is lexical and s.path == Path("/x") and s.model is None
    assert isinstance(ArticleSelector().clause_bm25, ClauseBM25)


def _dense(docs, encoder):
    from legalrag.retrieval.dense import DenseRetriever

    return DenseRetriever.build(docs, encoder)


def test_with_the_index_vectors_the_support_model_reads_them_and_its_question_vector_feeds_the_votes():
    from legalrag.citecheck.support import SupportModel

    enc = FakeEncoder()
    dense = _dense([_doc(k) for k in ARTICLES], enc)
    plain = SupportScorer(enc, SupportModel.load("full"))
    s = ArticleSelector(_model(), support=plain, vectors=dense)
    assert isinstance(s.support, IndexedSupport) and s.support.base is plain and s.support.encoder.dense is dense
    assert s.encoder is s.support.encoder and s.support.model is plain.model
    other = FakeEncoder()
    assert ArticleSelector(_model(), support=plain, vectors=dense, encoder=other).encoder is other
    assert ArticleSelector(_model(), support=FixedSupport(0.5), vectors=dense).support.__class__ is FixedSupport
    assert ArticleSelector(support=plain, vectors=dense).support is plain  # no model: nothing to score


def test_a_selector_without_a_model_is_uncalibrated_with_threshold_zero():
    assert ArticleSelector().calibrated is False and ArticleSelector().threshold == 0.0
    s = _model_selector(threshold=0.375)
    assert s.calibrated is True and s.threshold == 0.375


def test_warming_up_runs_the_support_model_once():
    support = RecordingSupport()
    ArticleSelector(_model(), support=support).warm_up()
    assert len(support.calls) == 1 and len(support.calls[0]) == 1


def test_the_probabilities_are_the_calibrated_scores_of_the_feature_matrix():
    support = RecordingSupport({"wage": 0.9, "repair": 0.1}, default=0.3)
    scorer = _linear(-1.0, support=4.0, rank=-0.5)
    s = ArticleSelector(_model(scorer, a=0.5, b=0.25), support=support)
    hits = _hits("wage")
    q = HELD_OUT[0]
    sup = [support.by_id.get(h.id, 0.3) for h in hits]
    x = feature_matrix(q, hits, support_scores=sup, priors=Priors(), clause_bm25=ClauseBM25())
    assert s.probabilities(q, hits) == pytest.approx(Platt(0.5, 0.25)(scorer.score(x)))
    assert support.calls[-1] == [(q, h.id) for h in hits]


def test_a_long_question_is_scored_on_its_first_500_characters():
    support = RecordingSupport()
    s = ArticleSelector(_model(_linear(support=1.0, title_overlap=3.0, names_law=2.0, clause_bm25=5.0)),
                        support=support)
    hits = _hits("drunk")
    head = "问" * 480 + "醉酒驾驶机动车"
    long = head + "刑法第一百三十三条之一 醉酒驾驶机动车被查" * 5
    head = long[:500]
    assert s.probabilities(long, hits).tolist() == s.probabilities(head, hits).tolist()
    assert [len(q) for q, _ in support.calls[0]] == [500] * len(hits)


def test_the_neighbour_votes_need_both_a_memory_and_a_question_encoder():
    from legalrag.rerank.neighbours import NeighbourMemory, NeighbourSettings

    enc = FakeEncoder()
    memory = NeighbourMemory([str(i) for i in range(len(TRAIN))], [[g] for _, g in TRAIN],
                             enc.encode_queries([q for q, _ in TRAIN]), NeighbourSettings(k=3, expand=0), "fake")
    q, gold = HELD_OUT
    hits = _hits(gold)
    scorer = _linear(nb_vote=20.0)
    voting = ArticleSelector(_model(scorer, memory=memory), support=FixedSupport(0.5), encoder=enc)
    votes = memory.votes(enc.encode_queries([q])[0])
    x = feature_matrix(q, hits, support_scores=[0.5] * len(hits), priors=Priors(), clause_bm25=ClauseBM25(),
                       votes=votes)
    assert voting.probabilities(q, hits) == pytest.approx(Platt(1.0, 0.0)(scorer.score(x)))
    assert voting.select(q, hits).ranked[0].hit.id == gold
    deaf = ArticleSelector(_model(scorer, memory=memory), support=FixedSupport(0.5))
    assert deaf.probabilities(q, hits).tolist() == [0.5] * len(hits)


def test_a_negative_k_is_refused_and_k_zero_chooses_nothing():
    with pytest.raises(InputError) as err:
        ArticleSelector().select("问题", [_hit(0)], k=-1)
    assert str(err.value) == "k must be 0 or more, got -1" and err.value.field == "k"
    assert ArticleSelector().select("问题", [_hit(0)], k=0).chosen == ()
    assert _model_selector(_linear(5.0)).select("问题", [_hit(0)], k=0).chosen == ()


def test_without_a_model_the_first_k_are_chosen_and_an_empty_question_chooses_none():
    hits = [_hit(i) for i in range(5)]
    out = ArticleSelector().select("问题", hits, k=2)
    assert [d.rank for d in out.chosen] == [0, 1] and [d.probability for d in out.chosen] == [0.5, 0.25]
    assert [d.rank for d in out.ranked] == [0, 1, 2, 3, 4] and out.threshold == 0.0
    for question in ("", "  \n", None):
        empty = ArticleSelector().select(question, hits)
        assert empty.chosen == () and [d.probability for d in empty.ranked] == [0.0] * 5
        assert [d.rank for d in empty.ranked] == [0, 1, 2, 3, 4]


def test_the_threshold_is_reached_at_equality_and_missed_just_below():
    p = float(Platt(1.0, 0.0)(np.array([0.75]))[0])
    hits = [_hit(i) for i in range(4)]
    at = _model_selector(_linear(0.75), threshold=p).select("问题", hits, k=3)
    assert [d.rank for d in at.chosen] == [0, 1, 2] and all(d.probability == p for d in at.ranked)
    above = _model_selector(_linear(0.75), threshold=float(np.nextafter(p, 1.0))).select("问题", hits)
    assert above.chosen == () and len(above.ranked) == 4 and above.threshold == float(np.nextafter(p, 1.0))
    # an empty question decides nothing, even under a threshold of zero
    assert _model_selector(_linear(0.75), threshold=0.0).select(" ", hits).chosen == ()


def test_the_ranking_is_by_probability_then_retrieval_order():
    hits = [_hit(i) for i in range(4)]
    rising = _model_selector(_linear(-1.0, rank=1.0), threshold=0.5).select("问题", hits, k=2)
    assert [d.rank for d in rising.ranked] == [3, 2, 1, 0]
    assert [d.hit.id for d in rising.ranked] == ["d3", "d2", "d1", "d0"]
    assert [d.rank for d in rising.chosen] == [3, 2]  # probabilities 0.88, 0.73 (0.5 at rank 1: not chosen at k=2)
    assert [d.probability for d in rising.ranked] == pytest.approx([_sigmoid(2), _sigmoid(1), 0.5, _sigmoid(-1)])
    only = _model_selector(_linear(-1.0, rank=1.0), threshold=0.5).select("问题", hits, k=5)
    assert [d.rank for d in only.chosen] == [3, 2, 1]
    flat = _model_selector(_linear(0.0), threshold=0.5).select("问题", hits)
    assert [d.rank for d in flat.ranked] == [0, 1, 2, 3] and [d.rank for d in flat.chosen] == [0, 1, 2]


@given(scores=st.lists(st.sampled_from([0.0, 0.4, 0.5, 0.9]), min_size=0, max_size=8),
       threshold=st.sampled_from([0.0, 0.4, 0.5, 0.9, 1.0]), k=st.integers(0, 5))
@settings(max_examples=60, deadline=None)
def test_the_choice_is_the_best_first_candidates_at_or_above_the_threshold(scores, threshold, k):
    """Each candidate's support score is its probability (a = 1 over the logit of the support column)."""
    hits = [_hit(i) for i in range(len(scores))]
    support = RecordingSupport({h.id: s for h, s in zip(hits, scores)})
    s = ArticleSelector(_model(_linear(support=1.0), threshold=threshold), support=support)
    out = s.select("问题", hits, k=k)
    probs = [_sigmoid(v) for v in scores]
    want = sorted(range(len(hits)), key=lambda i: (-probs[i], i))
    assert [d.rank for d in out.ranked] == want
    assert [d.probability for d in out.ranked] == pytest.approx([probs[i] for i in want])
    assert [d.rank for d in out.chosen] == [i for i in want if probs[i] >= threshold][:k]
    assert isinstance(out, ArticleSelection) and out.threshold == threshold and 0 < out.seconds < 30


# -- the index's own vectors --------------------------------------------------------------------------------------

class StoredVectors:
    """A dense component holding the given vectors by id (as ``DenseRetriever`` does)."""

    def __init__(self, vectors):
        self._row_of = {doc_id: i for i, doc_id in enumerate(vectors)}
        rows = list(vectors.values())
        self.index = SimpleNamespace(reconstruct=lambda r: np.asarray(rows[r]))


def test_index_vectors_read_and_normalise_the_expected_articles_and_encode_the_rest():
    enc = FakeEncoder(dimension=2)
    iv = IndexVectors(StoredVectors({"a": [3.0, 4.0], "z": [0.0, 0.0]}), enc)
    assert iv.model_id == enc.model_id and iv.dimension == 2  # the real encoder's attributes
    iv.expect({"text a": "a", "text z": "z", "text b": "b"})
    out = iv.encode_documents(["text a", "text z", "text b", "unknown"])
    assert out.dtype == np.float32 and out.shape == (4, 2)
    assert out[0].tolist() == pytest.approx([0.6, 0.8]) and out[1].tolist() == [0.0, 0.0]
    assert out[2].tolist() == enc.encode_documents(["text b"])[0].tolist()  # expected but not in the index
    assert out[3].tolist() == enc.encode_documents(["unknown"])[0].tolist()
    before = enc.calls
    assert iv.encode_documents(["text a"])[0].tolist() == pytest.approx([0.6, 0.8]) and enc.calls == before
    assert iv.encode_documents([]).shape == (0, 0)
    bare = IndexVectors(SimpleNamespace(), enc)  # a component without its row table: everything encoded
    bare.expect({"text a": "a"})
    assert bare.encode_documents(["text a"])[0].tolist() == enc.encode_documents(["text a"])[0].tolist()


def test_index_vectors_keep_the_last_few_question_vectors():
    enc = FakeEncoder()
    iv = IndexVectors(SimpleNamespace(), enc, keep=2)
    first = iv.encode_queries(["甲", "甲"])
    assert enc.calls == 1 and first.shape == (2, enc.dimension) and first.dtype == np.float32
    assert first[0].tolist() == first[1].tolist() == enc.encode_queries(["甲"])[0].tolist()
    enc.calls = 0
    iv.encode_queries(["乙"])
    assert enc.calls == 1  # two kept: 甲, 乙
    iv.encode_queries(["甲", "乙"])
    assert enc.calls == 1
    iv.encode_queries(["丙"])  # a third: the kept ones go
    assert enc.calls == 2
    iv.encode_queries(["丙"])
    assert enc.calls == 2
    iv.encode_queries(["甲"])
    assert enc.calls == 3
    assert iv.encode_queries([]).shape == (0, 0)
    assert IndexVectors(None, enc).keep == 8


class FakeIndex:
    def __init__(self, components):
        self.names = list(components)
        self.manifest = {"components": components}
        self.made = []

    def retriever(self, name):
        self.made.append(name)
        return f"retriever:{name}"


def test_the_dense_component_is_the_one_made_with_the_support_models_encoder():
    index = FakeIndex({"bm25": {"kind": "bm25", "params": {"encoder": "stard-e5"}},
                       "small": {"kind": "dense", "params": {"encoder": "e5-small"}},
                       "bare": {"kind": "dense"},
                       "stard": {"kind": "dense", "params": {"encoder": "stard-e5"}}})
    assert dense_component(index) == "retriever:stard" and index.made == ["stard"]
    assert dense_component(index, "e5-small") == "retriever:small"
    assert dense_component(FakeIndex({"bm25": {"kind": "bm25"}})) is None
    assert dense_component(SimpleNamespace()) is None
    assert dense_component(SimpleNamespace(names=["x"], manifest=None)) is None
    assert dense_component(SimpleNamespace(names=["x"])) is None  # an index without a manifest


# -- files --------------------------------------------------------------------------------------------------------

def test_the_shipped_selector_lives_in_the_package_data():
    assert shipped_selector_dir() == Path(legalrag.__file__).resolve().parent / "data" / "models" / "selector"


def _rehash(d: Path) -> None:
    """Write the card's hashes anew (a spec edited on purpose, not one altered in transit)."""
    import hashlib

    card = json.loads((d / CARD_FILE).read_text(encoding="utf-8"))
    card["files_sha256"] = {n: hashlib.sha256((d / n).read_bytes()).hexdigest() for n in card["files_sha256"]}
    (d / CARD_FILE).write_text(json.dumps(card), encoding="utf-8")


def _edit_spec(d: Path, **changes) -> Path:
    spec = json.loads((d / SPEC_FILE).read_text(encoding="utf-8"))
    spec.update(changes)
    (d / SPEC_FILE).write_text(json.dumps(spec), encoding="utf-8")
    _rehash(d)
    return d / SPEC_FILE


@pytest.fixture
def written(tmp_path):
    return write_model(tmp_path / "sel", _model(_linear(0.5, rank=-1.0), threshold=0.25,
                                                priors=Priors({"a": 1}, {"劳动合同法": 2})), {"origin": "test"})


def test_every_refused_file_names_its_path_and_the_retraining_command(written):
    d = written
    fix = f"retrain it with `legalrag train selector --out {d}`"
    card, spec = d / CARD_FILE, d / SPEC_FILE
    assert check_files(d)["origin"] == "test"
    spec.write_text(spec.read_text(encoding="utf-8") + " ", encoding="utf-8")
    with pytest.raises(ModelError) as err:
        check_files(d)
    assert str(err.value) == f"{spec}: SHA-256 differs from {card} (truncated or altered); refusing it; {fix}"
    spec.unlink()
    with pytest.raises(ModelError) as err:
        read_model(d)
    assert str(err.value) == f"{spec}: missing; {fix}"
    card.write_text(json.dumps({"files_sha256": {"model.txt": "0"}}), encoding="utf-8")
    with pytest.raises(ModelError) as err:
        check_files(d)
    assert str(err.value) == f"{card}: the card lists no {SPEC_FILE}; {fix}"
    card.write_text(json.dumps({"files_sha256": None}), encoding="utf-8")
    with pytest.raises(ModelError, match="the card lists no"):
        check_files(d)
    card.write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelError) as err:
        check_files(d)
    assert str(err.value).startswith(f"{card}: unreadable model card (") and str(err.value).endswith(f"); {fix}")
    card.write_bytes(b"\xff\xfe{")
    with pytest.raises(ModelError, match="unreadable model card"):
        check_files(d)
    card.unlink()
    with pytest.raises(ModelError) as err:
        check_files(d)
    assert str(err.value) == f"{card}: missing, so the selector at {d} cannot be checked; {fix}"


def test_a_listed_file_beside_the_spec_is_checked_too(written):
    (written / "extra.txt").write_text("x", encoding="utf-8")
    card = json.loads((written / CARD_FILE).read_text(encoding="utf-8"))
    card["files_sha256"]["extra.txt"] = "0" * 64
    (written / CARD_FILE).write_text(json.dumps(card), encoding="utf-8")
    with pytest.raises(ModelError, match="extra.txt: SHA-256 differs"):
        read_model(written)


def test_the_shipped_selector_refused_says_how_to_restore_it(tmp_path, monkeypatch):
    shipped = tmp_path / "shipped"
    shutil.copytree(shipped_selector_dir(), shipped)
    monkeypatch.setattr(sel_mod, "shipped_selector_dir", lambda: shipped)
    (shipped / SPEC_FILE).write_text("{}", encoding="utf-8")
    with pytest.raises(ModelError) as err:
        load_selector(support=FixedSupport(0.5))
    assert str(err.value) == (f"{shipped / SPEC_FILE}: SHA-256 differs from {shipped / CARD_FILE} (truncated or "
                              f"altered); refusing it; {RESTORE}")
    assert RESTORE == ("restore it with `git checkout -- src/legalrag/data/models/selector` in a clone of legalrag, "
                       "or `pip install --force-reinstall --no-deps legalrag`; or retrain it with `legalrag train "
                       "selector`")
    shutil.rmtree(shipped)
    with pytest.raises(ModelError) as err:
        load_selector(support=FixedSupport(0.5))
    assert str(err.value) == f"{shipped}: no selector there; {RESTORE}"


def test_no_directory_is_refused_with_the_command_that_trains_one(tmp_path):
    where = tmp_path / "nowhere"
    with pytest.raises(ModelError) as err:
        load_selector(where, support=FixedSupport(0.5))
    assert str(err.value) == f"{where}: no selector there; train one with `legalrag train selector --out {where}`"


def test_a_spec_of_another_format_or_feature_set_or_scorer_is_refused(written):
    retrain = "retrain it with `legalrag train selector`"
    spec = _edit_spec(written, format="other")
    with pytest.raises(ModelError) as err:
        read_model(written)
    assert str(err.value) == f"{spec}: a selector of another format or feature set (other, {N} features); {retrain}"
    _edit_spec(written, format="legalrag-selector", features=list(FEATURES[:-1]))
    with pytest.raises(ModelError) as err:
        read_model(written)
    assert str(err.value) == (f"{spec}: a selector of another format or feature set (legalrag-selector, {N - 1} "
                              f"features); {retrain}")
    _edit_spec(written, features=None)
    with pytest.raises(ModelError, match=r"\(legalrag-selector, 0 features\)"):
        read_model(written)
    _edit_spec(written, features=list(FEATURES), scorer={"kind": "forest"})
    with pytest.raises(ModelError) as err:
        read_model(written)
    assert str(err.value) == f"{spec}: unknown scorer kind 'forest'; {retrain}"


def test_a_written_model_reads_back_from_its_directory_its_spec_or_its_card(written):
    for where in (written, written / SPEC_FILE, written / CARD_FILE):
        back = read_model(where)
        assert back.scorer == _linear(0.5, rank=-1.0) and back.calibration == Platt(1.0, 0.0)
        assert back.threshold == 0.25 and back.priors == Priors({"a": 1}, {"劳动合同法": 2}) and back.memory is None
    spec = json.loads((written / SPEC_FILE).read_text(encoding="utf-8"))
    assert set(back.spec) == set(spec) - {"scorer", "calibration", "priors"} and back.spec["version"] == 1
    text = (written / SPEC_FILE).read_text(encoding="utf-8")
    assert "劳动合同法" in text and text.endswith("\n")  # readable by a person
    card = (written / CARD_FILE).read_text(encoding="utf-8")
    assert card.endswith("\n") and json.loads(card)["name"] == "selector"
    assert load_selector(written / CARD_FILE, support=FixedSupport(0.5)).path == written
    assert load_selector(written / SPEC_FILE, support=FixedSupport(0.5)).path == written
    other = written.parent / "model.json"
    shutil.copytree(written, other)
    assert read_model(other).threshold == 0.25  # a directory of another name ending in .json


def test_a_spec_without_priors_or_with_integer_numbers_reads_back_as_floats(written):
    _edit_spec(written, priors=None, threshold=1, calibration={"kind": "platt", "a": 2, "b": 0})
    back = read_model(written)
    assert back.priors == Priors() and back.threshold == 1.0 and back.calibration == Platt(2.0, 0.0)
    assert isinstance(back.threshold, float) and isinstance(back.calibration.a, float)
    assert isinstance(back.calibration.b, float)


def test_a_lightgbm_selector_is_written_with_its_model_file_and_scores_the_same(tmp_path):
    import lightgbm as lgb

    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, N))
    y = (x[:, 0] > 0).astype(float)
    booster = lgb.train({"objective": "binary", "verbose": -1, "num_threads": 1, "min_data_in_leaf": 5},
                        lgb.Dataset(x, y), num_boost_round=3)
    model = _model(BoosterScorer(booster, "trees.txt"), threshold=0.5)
    d = write_model(tmp_path / "gbm", model)
    card = json.loads((d / CARD_FILE).read_text(encoding="utf-8"))
    assert set(card["files_sha256"]) == {SPEC_FILE, "trees.txt"} and (d / "trees.txt").is_file()
    back = read_model(d)
    assert isinstance(back.scorer, BoosterScorer) and back.scorer.file == "trees.txt"
    assert back.scorer.score(x[:5]).tolist() == pytest.approx(model.scorer.score(x[:5]).tolist())
    assert json.loads((d / SPEC_FILE).read_text(encoding="utf-8"))["scorer"] == {"kind": "lightgbm",
                                                                                 "file": "trees.txt"}


def test_the_neighbour_memory_is_written_listed_and_read_back(tmp_path):
    from legalrag.rerank.neighbours import NeighbourMemory, NeighbourSettings

    enc = FakeEncoder()
    memory = NeighbourMemory(["q1", "q2"], [["wage"], ["repair"]], enc.encode_queries(["工资", "维修"]),
                             NeighbourSettings(k=2, expand=0), "fake")
    d = write_model(tmp_path / "nb", _model(memory=memory))
    spec = json.loads((d / SPEC_FILE).read_text(encoding="utf-8"))
    assert spec["neighbours"] == memory.spec()
    assert set(json.loads((d / CARD_FILE).read_text(encoding="utf-8"))["files_sha256"]) == \
        {SPEC_FILE, "neighbours.jsonl", "neighbours.npy"}
    back = read_model(d)
    assert len(back.memory) == 2 and np.allclose(back.memory.vectors, memory.vectors)


def test_a_loaded_selector_reads_the_articles_vectors_from_the_index_it_is_given(written):
    from legalrag.citecheck.support import SupportModel

    enc = FakeEncoder()
    dense = _dense([_doc(k) for k in ARTICLES], enc)
    index = FakeIndex({"stard": {"kind": "dense", "params": {"encoder": "stard-e5"}}})
    index.retriever = lambda name: dense
    plain = SupportScorer(enc, SupportModel.load("full"))
    s = load_selector(written, support=plain, index=index)
    assert isinstance(s.support, IndexedSupport) and s.support.encoder.dense is dense and s.path == written
    assert load_selector(written, support=plain).support is plain
    assert load_selector(written, support=plain, index=FakeIndex({})).support is plain


class Float64Encoder(FakeEncoder):
    """An encoder that hands back float64 vectors (a remote one, say)."""

    def encode_queries(self, texts):
        return super().encode_queries(texts).astype(np.float64)

    def encode_documents(self, texts):
        return super().encode_documents(texts).astype(np.float64)


def test_index_vectors_are_float32_whatever_the_encoder_returns():
    iv = IndexVectors(StoredVectors({"a": [3.0, 4.0]}), Float64Encoder(dimension=2))
    iv.expect({"text a": "a"})
    assert iv.encode_queries(["甲", "乙"]).dtype == np.float32
    assert iv.encode_documents(["text b"]).dtype == np.float32
    assert iv.encode_documents(["text a", "text b"]).dtype == np.float32


def test_the_card_is_written_readable_by_a_person(tmp_path):
    d = write_model(tmp_path / "sel", _model(), {"trained_on": "劳动合同法的问题"})
    assert "劳动合同法的问题" in (d / CARD_FILE).read_text(encoding="utf-8")


def test_a_loaded_selector_encodes_the_question_with_the_encoder_given_beside_its_support_model(written):
    enc = FakeEncoder()
    assert load_selector(written, support=FixedSupport(0.5), encoder=enc).encoder is enc
    assert load_selector(written, support=FixedSupport(0.5)).encoder is None


def test_the_support_rank_of_many_tied_candidates_keeps_the_retrieval_order():
    sup = [0.5, 0.2] * 20
    m = _fm("问题", [_hit(i) for i in range(40)], sup=sup)
    assert list(m[:, COL["support_rank"]]) == [float(i // 2) if i % 2 == 0 else float(20 + i // 2)
                                                for i in range(40)]


def test_the_score_is_relative_to_a_positive_first_score_even_below_one_or_below_the_best():
    def rel(scores):
        return list(_fm("问题", [_hit(i, score=s) for i, s in enumerate(scores)])[:, COL["score_rel"]])

    assert rel([1.0, 2.0]) == [1.0, 2.0]
    assert rel([0.5, 1.0]) == [1.0, 2.0]
    assert rel([0.0, 0.5]) == [0.0, 1.0]  # no first score: relative to the best, even below one


def test_a_title_without_bigrams_shares_nothing_with_a_question_without_any():
    m = _fm("？", [_hit(0, title="", law="")])
    assert m[0, COL["title_overlap"]] == 0.0 and m[0, COL["law_overlap"]] == 0.0


def test_the_law_of_an_object_without_a_title_is_empty():
    assert law_of(SimpleNamespace(metadata={})) == ""
    assert law_of(SimpleNamespace()) == ""


def test_a_lightgbm_selector_without_lightgbm_says_which_extra_to_install(tmp_path, monkeypatch):
    import sys

    import lightgbm as lgb

    from legalrag.errors import MissingDependencyError

    x = np.random.default_rng(1).normal(size=(40, N))
    booster = lgb.train({"objective": "binary", "verbose": -1, "num_threads": 1, "min_data_in_leaf": 5},
                        lgb.Dataset(x, (x[:, 0] > 0).astype(float)), num_boost_round=2)
    d = write_model(tmp_path / "gbm", _model(BoosterScorer(booster)))
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    with pytest.raises(MissingDependencyError) as err:
        read_model(d)
    assert "pip install 'legalrag[dense]'" in str(err.value)


def test_two_candidates_of_one_law_are_each_others_only_co_retrieval():
    m = _fm("问题", [_hit(0, law="刑法"), _hit(1, law="刑法")])
    assert list(m[:, COL["co_law"]]) == [1.0, 1.0] and list(m[:, COL["co_law_weighted"]]) == [0.5, 1.0]


def test_index_vectors_before_any_expectation_encode_every_passage():
    enc = FakeEncoder(dimension=2)
    iv = IndexVectors(StoredVectors({"a": [0.3, 0.4]}), enc)
    assert iv.encode_documents(["text a"])[0].tolist() == enc.encode_documents(["text a"])[0].tolist()
    iv.expect({"text a": "a"})
    assert iv.encode_documents(["text a"])[0].tolist() == pytest.approx([0.6, 0.8])  # a short stored vector, too
    assert iv.encode_documents([]).dtype == np.float32 and iv.encode_queries([]).dtype == np.float32


def test_indexed_support_scores_with_the_same_tables_as_its_support_model():
    from legalrag.citecheck.support import SupportModel

    enc = FakeEncoder()
    dense = _dense([_doc(k) for k in ARTICLES], enc)
    idf = BigramIdf({"工资": 3}, 100, 2, 50.0)
    model = SupportModel.load("full")
    assert IndexedSupport(SupportScorer(enc, model, idf), dense).scorer.idf is idf
    bare = IndexedSupport(SimpleNamespace(encoder=enc, model=model), dense)  # a support model without tables
    assert bare.scorer.idf is BigramIdf.load() and bare.model is model


def test_a_booster_that_predicts_float32_scores_in_float64():
    booster = SimpleNamespace(predict=lambda x, num_threads: np.asarray(x.sum(axis=1), dtype=np.float32))
    assert BoosterScorer(booster).score(np.array([[0.1, 0.2]])).dtype == np.float64


def test_a_scale_below_one_still_divides():
    s = LinearScorer((1.0,), 0.0, (0.0,), (0.5,))
    assert s.score(np.array([[1.0]])).tolist() == [2.0]
