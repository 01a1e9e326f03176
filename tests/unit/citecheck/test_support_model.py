"""The support model's parts against their definitions: the logistic probability (with and without
standardisation), the bigram idf, the normalised BM25 feature (1 for an article that is the claim, the BM25
formula otherwise), the empty cases, the bigrams of mixed text, the passage an encoder reads, and the cosine
feature only when asked for and an encoder is there."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from legalrag.citecheck.support import (B, K1, LEXICAL_FEATURES, BigramIdf, SupportModel, SupportScorer, bigrams,
                                        lexical_features, longest_run, passage)
from legalrag.errors import InputError
from legalrag.testing import FakeEncoder
from legalrag.types import Document

IDF = BigramIdf({"劳动": 40, "合同": 30}, n_docs=100, min_df=4, avg_len=20.0)
HAN = st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x4E30), min_size=2, max_size=25)


def reference_bm25(claim: str, article: str, idf: BigramIdf) -> float:
    """BM25 of the article for the claim's bigrams over its best possible score for that claim, capped at 1."""
    cb, ab = bigrams(claim), bigrams(article)
    shared = set(cb) & set(ab)
    tf = {b: ab.count(b) for b in shared}
    score = sum(idf.idf(b) * tf[b] * (K1 + 1) / (tf[b] + K1 * (1 - B + B * len(ab) / idf.avg_len)) for b in shared)
    best = sum(idf.idf(b) * (K1 + 1) / (1 + K1 * (1 - B + B * len(cb) / idf.avg_len)) for b in set(cb))
    return min(score / best, 1.0)


def test_the_probability_is_the_logistic_of_the_linear_score():
    plain = SupportModel("m", ("a", "b"), {"a": 2.0, "b": -1.0}, 0.5, 0.7)  # no standardisation
    z = 0.5 + 2.0 * 0.3 - 1.0 * 0.8
    assert plain.probability({"a": 0.3, "b": 0.8}) == pytest.approx(1 / (1 + math.exp(-z)), abs=1e-12)
    std = SupportModel("m", ("a",), {"a": 2.0}, 0.0, 0.7, mean={"a": 0.25}, scale={"a": 0.5})
    assert std.probability({"a": 0.75}) == pytest.approx(1 / (1 + math.exp(-2.0)), abs=1e-12)
    half = SupportModel("m", ("a",), {"a": 1.0}, 0.0, 0.7, mean={"a": 0.4}, scale={"a": 0.0})  # a zero scale: 1
    assert half.probability({"a": 0.4}) == 0.5 and half.probability({"a": 1.4}) == pytest.approx(1 / (1 + math.exp(-1)))
    assert plain.probability({"a": 1e6, "b": 0.0}) == 1.0 and plain.probability({"a": -1e6, "b": 0.0}) < 1e-20


def test_the_shipped_models_load_by_name_and_an_unknown_name_says_which_exist():
    full = SupportModel.load()
    assert full.name == "full" and "cosine" in full.features and full.needs_cosine
    assert full.base is not None and full.base.name == "lexical" and "lexical_logit" in full.features
    assert SupportModel.load("lexical").features == LEXICAL_FEATURES and not SupportModel.load("lexical").needs_cosine
    with pytest.raises(InputError, match=r"no support model 'nope' in .*support_model.json; it has \['full', 'lexical'\]"):
        SupportModel.load("nope")


def test_idf_of_a_known_and_an_unseen_bigram():
    assert IDF.idf("劳动") == pytest.approx(math.log(1 + (100 - 40 + 0.5) / (40 + 0.5)))
    assert IDF.idf("罕见") == pytest.approx(math.log(1 + (100 - 2 + 0.5) / (2 + 0.5)))  # min_df / 2


def test_bigrams_of_mixed_text():
    assert bigrams("劳动合同") == ["劳动", "动合", "合同"]
    assert bigrams("法") == ["法"]
    assert bigrams("ABC 12 劳动") == ["abc", "12", "劳动"]
    assert bigrams("第82条，Art") == ["第", "82", "条", "art"]
    assert bigrams("") == [] and bigrams(None) == []


def test_an_empty_side_scores_zero_on_every_feature():
    zero = {"claim_cover": 0.0, "article_cover": 0.0, "bm25": 0.0}
    assert lexical_features("，。", "劳动合同应当书面订立", IDF) == zero
    assert lexical_features("劳动合同", "", IDF) == zero


def test_an_article_that_is_the_claim_scores_one_on_every_feature():
    f = lexical_features("用人单位应当订立书面劳动合同", "用人单位应当订立书面劳动合同", IDF)
    assert f == {"claim_cover": 1.0, "article_cover": 1.0, "bm25": pytest.approx(1.0)}


@settings(max_examples=60, deadline=None)
@given(HAN, HAN, st.integers(min_value=1, max_value=3))
def test_bm25_follows_its_formula(claim, other, repeat):
    article = (claim[: len(claim) // 2] + other) * repeat  # bigrams shared, some of them repeated
    got = lexical_features(claim, article, IDF)["bm25"]
    assert 0.0 <= got <= 1.0
    if "\n" not in article:
        assert got == pytest.approx(reference_bm25(claim, article, IDF), abs=1e-9)


def test_the_passage_an_encoder_reads():
    assert passage(Document("1", "盗窃公私财物", "刑法第二百六十四条")) == "刑法第二百六十四条\n盗窃公私财物"
    assert passage(Document("1", "刑法第二百六十四条 盗窃公私财物", "刑法第二百六十四条")) == "刑法第二百六十四条 盗窃公私财物"
    assert passage(Document("1", "盗窃公私财物")) == "盗窃公私财物"
    assert len(passage(Document("1", "法" * 600, "刑法"))) == 512


def test_cosine_only_with_an_encoder_and_when_asked_for():
    pairs = [("自首可以从轻处罚", "对于自首的犯罪分子，可以从轻或者减轻处罚。")]
    lexical = SupportScorer()
    assert "cosine" not in lexical.features(pairs)[0]
    assert "cosine" not in lexical.features(pairs, cosine=True)[0]  # no encoder: nothing to compute it with
    enc = FakeEncoder(dimension=32)
    full = SupportScorer(encoder=enc)
    [row] = full.features(pairs)
    q, d = enc.encode_queries([pairs[0][0]])[0], enc.encode_documents([pairs[0][1]])[0]
    assert row["cosine"] == pytest.approx(float(np.dot(q, d)), abs=1e-6)
    assert "cosine" not in full.features(pairs, cosine=False)[0]
    assert full.features([]) == []


def test_a_given_idf_table_is_the_one_used():
    assert SupportScorer(idf=IDF).idf is IDF
    row = SupportScorer(idf=IDF).features([("劳动合同", "劳动合同")])[0]
    assert row["clause_idf"] == pytest.approx(1.0) and row["clause_cover"] == 1.0 and row["clause_own"] == 1.0


def test_a_stacked_model_adds_its_bases_logit():
    base = SupportModel("lexical", ("a",), {"a": 2.0}, 0.0, 0.5)
    top = SupportModel("full", ("lexical_logit", "cosine"), {"lexical_logit": 1.0, "cosine": 3.0}, -1.0, 0.8,
                       base=base)
    z = -1.0 + 1.0 * (2.0 * 0.5) + 3.0 * 0.4
    assert top.probability({"a": 0.5, "cosine": 0.4}) == pytest.approx(1 / (1 + math.exp(-z)))
    assert top.needs_cosine and not base.needs_cosine


def test_the_longest_run_is_the_longest_common_substring():
    assert longest_run("盗窃公私财物数额较大", "以盗窃公私财物为目的") == 6
    assert longest_run("", "盗窃") == 0 and longest_run("甲乙", "丙丁") == 0


def test_a_claim_of_one_common_bigram_still_scores_its_bm25():
    common = BigramIdf({"劳动": 99}, n_docs=100, min_df=4, avg_len=20.0)  # idf near 0: the best score is below 1
    f = lexical_features("劳动", "劳动者的权利", common)
    assert f["bm25"] == pytest.approx(reference_bm25("劳动", "劳动者的权利", common)) and f["bm25"] > 0.5


def test_lowercase_latin_words_are_whole_words():
    assert bigrams("art. 100 abs") == ["art", "100", "abs"]
