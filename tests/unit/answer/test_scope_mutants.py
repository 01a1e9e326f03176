"""The scope decision's arithmetic, pinned where one sample let a wrong value pass: the exact feature values a
message gets (n-gram weight 1/sqrt(n), the indicators at 1, the retrieval summary of the top five), how the model
standardises and drops features it does not use, the logistic and its clamp, which of the two models decides, the
file form written and read back, and which corpora count as Chinese."""

from __future__ import annotations

import math

import pytest

from legalrag.answer.scope import ScopeModel, ScopeModels, chinese_corpus, features, grams
from legalrag.errors import InputError
from legalrag.types import Document, Hit


def hit(text: str, score: float, retriever: str = "dense-stard-e5") -> Hit:
    return Hit(Document(id=f"d{score}", text=text, title="t"), score, 1, retriever=retriever)


def model(weights=None, *, intercept=0.0, mean=None, scale=None, threshold=0.5, uses_scores=False) -> ScopeModel:
    return ScopeModel(weights or {}, intercept, mean or {}, scale or {}, threshold, uses_scores)


def test_every_ngram_weighs_one_over_the_root_of_their_count():
    q = "离婚"
    f = features(q, None, None)
    g = grams(q)
    assert len(g) == 3 and all(f[x] == pytest.approx(1 / math.sqrt(3)) for x in g)


def test_the_numeric_features_and_indicators_take_their_exact_values():
    f = features("在日本离婚怎么办", None, None)
    assert f["legal_terms"] == pytest.approx(math.log1p(1))  # 离婚
    assert f["length"] == pytest.approx(math.log1p(len("在日本离婚怎么办")))
    assert 0 < f["corpus_cover"] <= 1 and f["lang_en"] == 0.0
    assert f["foreign"] == 1.0 and f["china"] == 0.0
    cn = features("在中国法院离婚怎么办", None, None)
    assert cn["china"] == 1.0 and cn["foreign"] == 0.0 and cn["legal_terms"] == pytest.approx(math.log1p(2))
    plain = features("房东不退押金怎么办", None, None)
    assert plain["foreign"] == 0.0 and plain["china"] == 0.0 and plain["corpus_cover"] > 0
    en = features("Can my landlord keep the deposit?", None, None)
    assert en["corpus_cover"] == 0.0 and en["lang_en"] == 1.0 and en["legal_terms"] == pytest.approx(math.log1p(2))


def test_the_retrieval_summary_is_top_one_mean_and_spread_of_the_best_five():
    hits = [hit("甲", s) for s in (0.9, 0.1, 0.5, 0.7, 0.3, 0.05)]
    f = features("房东不退押金怎么办", hits, "dense-stard-e5")
    assert f["scored"] == 1.0 and f["top1"] == 0.9
    assert f["mean5"] == pytest.approx((0.9 + 0.7 + 0.5 + 0.3 + 0.1) / 5) and f["spread5"] == pytest.approx(0.8)
    other = features("房东不退押金怎么办", hits[:5] + [hit("乙", 0.2, retriever="bm25")], "dense-stard-e5")
    assert other["scored"] == 0.0 and "top1" not in other


def test_the_model_standardises_numeric_features_and_zeroes_retrieval_ones_it_does_not_use():
    raw = {"c:离": 0.5, "legal_terms": 3.0, "length": 2.0, "top1": 0.8, "scored": 1.0}
    m = model(mean={"legal_terms": 1.0, "length": 2.0, "top1": 0.5}, scale={"legal_terms": 4.0, "length": 0.0,
                                                                           "top1": 0.1})
    assert m.vector(raw) == {"c:离": 0.5, "legal_terms": 0.5, "length": 0.0}  # scale 0 read as 1; no scores used
    scored = model(mean={"top1": 0.5}, scale={"top1": 0.1}, uses_scores=True)
    assert scored.vector(raw) == {"c:离": 0.5, "scored": 1.0, "top1": pytest.approx(3.0)}
    assert scored.vector({**raw, "scored": 0.0}) == {"c:离": 0.5, "scored": 0.0}  # not scored: retrieval ones out
    # a feature the model has no mean for is left out, not read raw
    assert model(mean={}).vector({"legal_terms": 3.0}) == {}
    # every numeric feature is standardised, not only the first the model skips
    two = model(mean={"length": 1.0, "legal_terms": 0.0}, scale={"length": 2.0, "legal_terms": 1.0})
    assert two.vector({"top1": 0.9, "length": 3.0, "legal_terms": 1.0, "scored": 1.0}) == {
        "length": 1.0, "legal_terms": 1.0}


def test_a_zero_scale_divides_by_one():
    m = model(mean={"length": 1.0}, scale={"length": 0.0})
    assert m.vector({"length": 3.0}) == {"length": 2.0}


def test_the_probability_is_the_logistic_of_the_weighted_sum_clamped_at_fifty():
    m = model({"c:离": 2.0}, intercept=-1.0)
    assert m.probability({"c:离": 1.0, "c:未知": 5.0}) == pytest.approx(1 / (1 + math.exp(-1.0)))  # unknown: weight 0
    assert m.probability({}) == pytest.approx(1 / (1 + math.e))
    assert model(intercept=50.5).probability({}) == 1 / (1 + math.exp(-50.0))
    assert model(intercept=-50.5).probability({}) == 1 / (1 + math.exp(50.0))
    assert 0.0 < model(intercept=-60.0).probability({}) < 1e-21


def test_the_full_model_decides_a_scored_message_and_the_text_model_any_other():
    full, text = model(intercept=5.0, threshold=0.9), model(intercept=-5.0, threshold=0.1)
    models = ScopeModels(full, text, "dense-stard-e5")
    hits = [hit("甲", 0.9)]
    p, threshold, raw = models.decide("房东不退押金怎么办", hits)
    assert raw["scored"] == 1.0 and threshold == 0.9 and p == pytest.approx(1 / (1 + math.exp(-5.0)))
    p, threshold, raw = models.decide("房东不退押金怎么办", [hit("甲", 0.9, retriever="bm25")])
    assert raw["scored"] == 0.0 and threshold == 0.1 and p == pytest.approx(1 / (1 + math.exp(5.0)))


def test_the_file_form_keeps_weights_from_a_millionth_and_reads_back():
    m = model({"a": 1e-6, "b": 5e-7, "c": -0.25}, intercept=0.5, mean={"length": 1.0}, scale={"length": 2.0},
              threshold=0.7, uses_scores=True)
    d = m.to_dict()
    assert d["weights"] == {"a": 1e-6, "c": -0.25} and d["uses_scores"] is True
    back = ScopeModel.from_dict(d)
    assert back.uses_scores is True and back.threshold == 0.7 and back.weights == {"a": 1e-6, "c": -0.25}
    assert ScopeModel.from_dict({k: v for k, v in d.items() if k != "uses_scores"}).uses_scores is False


def test_a_model_missing_a_field_is_refused_naming_the_field():
    with pytest.raises(InputError) as err:
        ScopeModel.from_dict({"weights": {}, "intercept": 0.0}, "m.json: models.full")
    assert err.value.field == "scope_model" and str(err.value).startswith("m.json: models.full: not a scope model")


def test_a_corpus_is_chinese_by_its_first_three_documents_text():
    zh = [hit("劳动者有权依法参加和组织工会。", 1.0)]
    en = [hit("The employee may terminate the contract.", 1.0)]
    assert chinese_corpus(zh) and not chinese_corpus(en)
    assert not chinese_corpus([hit("", 1.0), hit("", 0.5)])  # no text: not Chinese (not "XXXX" either)
    numbers = [hit("1. 123-456", 1.0)]  # no letters at all
    assert not chinese_corpus(numbers * 3 + zh)  # the fourth document is not read
    assert chinese_corpus(numbers * 2 + zh)
    # only the first 200 characters of each are read
    assert not chinese_corpus([hit("1" * 200 + "劳动者有权依法参加和组织工会", 1.0)])
    assert chinese_corpus([hit("1" * 199 + "劳动者有权依法参加和组织工会", 1.0)])
