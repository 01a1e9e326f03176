"""The support model's clause-level features each measure what they name: ``clause_idf`` / ``clause_cover`` the
share of the claim's bigrams in the best-matching clause (idf-weighted / plain), ``clause_own`` the share of that
clause's bigrams in the claim, ``article_idf`` the share anywhere in the article, and the clause named is the one
that holds the claim's words."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from legalrag.citecheck.support import BigramIdf, bigrams, lexical_features, match

ARTICLE_67 = ("犯罪以后自动投案，如实供述自己的罪行的，是自首。对于自首的犯罪分子，可以从轻或者减轻处罚。"
              "其中，犯罪较轻的，可以免除处罚。")
HAN = st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x4E80), min_size=2, max_size=30)


def test_the_best_clause_is_the_one_that_holds_the_claims_words():
    m = match("自首的犯罪分子可以从轻处罚", ARTICLE_67, "刑法第六十七条", BigramIdf.load())
    assert m.clause.text == "对于自首的犯罪分子，可以从轻或者减轻处罚。"
    assert ARTICLE_67[m.clause.start:m.clause.end] == m.clause.text
    x = m.features
    claim = set(bigrams("自首的犯罪分子可以从轻处罚"))
    shared = claim & set(bigrams(m.clause.text))
    assert x["clause_cover"] == len(shared) / len(claim)
    assert x["clause_own"] == len(shared) / len(set(bigrams(m.clause.text)))
    assert x["article_idf"] >= x["pair_idf"] >= x["clause_idf"] > 0.5


@settings(max_examples=50, deadline=None)
@given(HAN, HAN)
def test_a_claim_that_is_a_clause_is_covered_whole(claim, rest):
    article = f"{rest}。{claim}。{rest}。"
    x = match(claim, article, "", BigramIdf.load()).features
    assert x["clause_idf"] == pytest.approx(1.0) and x["clause_cover"] == 1.0 and x["article_idf"] == pytest.approx(1.0)
    assert all(0.0 <= v <= 1.0 + 1e-9 for v in x.values())


def test_no_shared_words_scores_zero_and_an_empty_side_too():
    x = match("合同违约赔偿", "盗窃公私财物的，处罚金。", "", BigramIdf.load()).features
    assert x["clause_idf"] == x["clause_cover"] == x["article_idf"] == x["clause_run"] == 0.0
    assert set(match("，。", ARTICLE_67, "", BigramIdf.load()).features.values()) == {0.0}
    empty = match("自首", "", "", BigramIdf.load())
    assert empty.clause is None and empty.features["clause_idf"] == 0.0


@settings(max_examples=50, deadline=None)
@given(HAN, HAN)
def test_the_older_whole_article_covers_trade_places_when_claim_and_article_do(a, b):
    idf = BigramIdf.load()
    ab, ba = lexical_features(a, b, idf), lexical_features(b, a, idf)
    assert ab["claim_cover"] == ba["article_cover"] and ab["article_cover"] == ba["claim_cover"]
