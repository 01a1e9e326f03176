"""The support model's lexical features each measure the side they name: ``claim_cover`` the share of the claim's
bigrams found in the article, ``article_cover`` the share of the article's found in the claim."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from legalrag.citecheck.support import BigramIdf, SupportScorer, bigrams, lexical_features

ARTICLE_67 = "犯罪以后自动投案，如实供述自己的罪行的，是自首。对于自首的犯罪分子，可以从轻或者减轻处罚。"
HAN = st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x4E80), min_size=2, max_size=30)


def test_a_claim_inside_the_article_covers_all_of_the_claim_and_part_of_the_article():
    f = lexical_features("自首可以从轻处罚", ARTICLE_67, BigramIdf.load())
    claim = set(bigrams("自首可以从轻处罚"))
    assert f["claim_cover"] == len(claim & set(bigrams(ARTICLE_67))) / len(claim)
    assert f["article_cover"] < f["claim_cover"]


@settings(max_examples=50, deadline=None)
@given(HAN, HAN)
def test_a_claim_that_is_part_of_the_article_is_covered_whole(claim, rest):
    article = rest + claim + rest
    f = lexical_features(claim, article, BigramIdf.load())
    assert f["claim_cover"] == 1.0
    assert f["article_cover"] == len(set(bigrams(claim))) / len(set(bigrams(article)))


@settings(max_examples=50, deadline=None)
@given(HAN, HAN)
def test_the_two_covers_trade_places_when_claim_and_article_do(a, b):
    idf = BigramIdf.load()
    ab, ba = lexical_features(a, b, idf), lexical_features(b, a, idf)
    assert ab["claim_cover"] == ba["article_cover"] and ab["article_cover"] == ba["claim_cover"]


def test_a_short_claim_against_a_long_article_is_not_shown_supported():
    """自首可以从轻处罚 against 刑法第六十七条 scores 0.46 with the lexical model: below its threshold."""
    scorer = SupportScorer()
    [p] = scorer.scores([("自首可以从轻处罚", ARTICLE_67)])
    assert p < scorer.threshold
    assert abs(p - 0.46) < 0.05
