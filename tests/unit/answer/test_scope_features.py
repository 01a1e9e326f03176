"""The scope model's inputs, exactly: the n-grams and counts the shipped model was fitted on (a changed prefix or
window and the model reads none of its own weights), the corpus cover, which corpora count as Chinese, the
language indicator, and the model's file form."""

from __future__ import annotations

import pytest

from legalrag.answer.scope import (
    ScopeModel,
    chinese_corpus,
    corpus_cover,
    features,
    grams,
    legal_terms,
)
from legalrag.errors import InputError
from legalrag.types import Document, Hit


def test_grams_are_characters_and_bigrams_in_chinese_and_words_pairs_and_trigrams_in_english():
    assert grams("劳动合同 Fired, twice!") == [
        "b:动合", "b:劳动", "b:合同", "c:动", "c:劳", "c:合", "c:同",
        "t:<fi", "t:<tw", "t:ce>", "t:ed>", "t:fir", "t:ice", "t:ire", "t:red", "t:twi", "t:wic",
        "v:fired_twice", "w:fired", "w:twice"]
    assert grams("") == [] and grams(None) == []


def test_legal_terms_counts_chinese_substrings_and_english_whole_words_in_any_case():
    assert legal_terms("离婚后 LAWYER lawyer sue") == 3  # 离婚, lawyer once (distinct words), sue
    assert legal_terms("lawyers suey") == 0 and legal_terms(None) == 0


def test_corpus_cover_is_the_share_of_bigrams_the_national_corpus_holds():
    assert corpus_cover("合同合同") == pytest.approx(2 / 3)  # 合同 twice, 同合 not
    assert corpus_cover("红烧肉") == 0.0
    assert corpus_cover("合") == 0.0 and corpus_cover("contract") == 0.0 and corpus_cover(None) == 0.0


def test_the_language_indicator_and_a_message_without_letters():
    assert features("How do I sue my landlord?", None, None)["lang_en"] == 1.0
    assert features("房东不退押金怎么办？", None, None)["lang_en"] == 0.0
    assert features("123？", None, None)["lang_en"] == 0.0  # no letters: read as Chinese


def _hit(text, rank=1):
    return Hit(Document(str(rank), text), 1.0, rank, retriever="bm25")


def test_a_corpus_is_chinese_by_its_first_three_documents_first_200_characters():
    english = "No State shall make any law abridging the freedom of speech. "
    assert chinese_corpus([_hit("用人单位应当向劳动者每月支付二倍的工资。")])
    assert not chinese_corpus([_hit(english, i + 1) for i in range(3)] + [_hit("中华人民共和国刑法", 4)])
    assert not chinese_corpus([_hit(english * 4 + "中华人民共和国刑法第二百三十六条规定强奸罪的刑罚。" * 5)])
    assert not chinese_corpus([_hit(None), _hit("12345", 2)])  # no letters at all: not a Chinese corpus


def test_a_model_survives_its_file_form_and_drops_weights_that_round_to_zero():
    m = ScopeModel({"w:law": 0.1234567, "w:tiny": 1e-7, "b:合同": -2.0}, -0.25, {"length": 2.0},
                   {"length": 0.5}, 0.6, True)
    d = m.to_dict()
    assert d == {"threshold": 0.6, "uses_scores": True, "intercept": -0.25, "mean": {"length": 2.0},
                 "scale": {"length": 0.5}, "weights": {"b:合同": -2.0, "w:law": 0.123457}}
    back = ScopeModel.from_dict(d)
    assert back == ScopeModel({"b:合同": -2.0, "w:law": 0.123457}, -0.25, {"length": 2.0}, {"length": 0.5}, 0.6, True)
    assert ScopeModel.from_dict({k: v for k, v in d.items() if k != "uses_scores"}).uses_scores is False


def test_a_model_missing_a_field_is_refused_naming_where_and_the_fields():
    with pytest.raises(InputError, match=r"models\.full: not a scope model .*'threshold'.*fields: weights, intercept, "
                                         r"mean, scale, threshold"):
        ScopeModel.from_dict({"weights": {}, "intercept": 0, "mean": {}, "scale": {}}, "models.full")
    with pytest.raises(InputError, match="scope model: not a scope model"):
        ScopeModel.from_dict({"weights": {}, "intercept": "x", "mean": {}, "scale": {}, "threshold": 0.5})
