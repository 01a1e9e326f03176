"""Where a mark turns: the support threshold at and around the calibrated value of the shipped model file, both
directions of every mark, and empty evidence (``retrieved_ids=[]``) told apart from no evidence set (``None``)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from legalrag.citecheck import CitationResolver
from legalrag.citecheck.marks import mark_citations
from legalrag.citecheck.support import MODEL_PATH, SupportModel, SupportScorer
from legalrag.corpora.statutes import statute_document

ARTICLE = ("用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。")
DOCS = [statute_document("82", ARTICLE, "劳动合同法第八十二条"),
        statute_document("10", "建立劳动关系，应当订立书面劳动合同。", "劳动合同法第十条")]
TEXT = "根据《劳动合同法》第八十二条，公司超过一个月没有和你订立书面劳动合同，应当每月向你支付二倍的工资。"
SHIPPED = json.loads(MODEL_PATH.read_text(encoding="utf-8"))["models"]


class FixedProbability:
    """A support scorer (the collaborator of the marks) whose every pair scores ``p``, with the calibrated
    threshold of a shipped model."""

    def __init__(self, p: float, model: str = "lexical"):
        self.p = p
        self.threshold = SupportModel.load(model).threshold

    def scores(self, pairs):
        return [self.p for _ in pairs]


@pytest.fixture(scope="module")
def resolver():
    return CitationResolver.from_documents(DOCS)


@pytest.mark.parametrize("model", ["lexical", "full"])
def test_the_scorer_uses_the_calibrated_threshold_of_the_shipped_file(model):
    t = SHIPPED[model]["threshold"]
    assert SupportModel.load(model).threshold == t
    assert 0.5 < t < 1.0  # calibrated for precision, well above an even chance
    assert SupportScorer(model=SupportModel.load(model)).threshold == t


@pytest.mark.parametrize("model", ["lexical", "full"])
def test_the_mark_turns_exactly_at_the_calibrated_threshold(resolver, model):
    t = SHIPPED[model]["threshold"]
    for p, mark in ((t, "supported"), (t + 1e-6, "supported"), (t - 1e-6, "exists"), (0.5, "exists"),
                    ((0.5 + t) / 2, "exists"), (1.0, "supported"), (0.0, "exists")):
        [c] = mark_citations(TEXT, resolver, FixedProbability(p, model))
        assert c.mark == mark, (p, t)
        assert c.mark_reason == ("" if mark == "supported" else "does_not_bear")
        assert c.support == round(p, 4)


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=0.0, max_value=1.0, allow_nan=False))
def test_supported_if_and_only_if_the_probability_reaches_the_threshold(p):
    resolver = CitationResolver.from_documents(DOCS)
    scorer = FixedProbability(p)
    [c] = mark_citations(TEXT, resolver, scorer)
    assert (c.mark == "supported") == (p >= scorer.threshold)


def test_empty_evidence_supports_nothing_and_no_evidence_set_checks_the_text(resolver):
    [none] = mark_citations(TEXT, resolver, FixedProbability(1.0), retrieved_ids=None)
    assert none.mark == "supported" and not none.in_retrieved  # a document checked on its own
    [empty] = mark_citations(TEXT, resolver, FixedProbability(1.0), retrieved_ids=[])
    assert empty.mark == "exists" and empty.mark_reason == "not_retrieved" and not empty.in_retrieved
    [given_it] = mark_citations(TEXT, resolver, FixedProbability(1.0), retrieved_ids=["82"])
    assert given_it.mark == "supported" and given_it.in_retrieved
    [other] = mark_citations(TEXT, resolver, FixedProbability(1.0), retrieved_ids=iter(["10"]))
    assert other.mark == "exists" and other.mark_reason == "not_retrieved"


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(["10", "82", "999"]), max_size=4))
def test_supported_needs_the_article_among_the_evidence(ids):
    resolver = CitationResolver.from_documents(DOCS)
    [c] = mark_citations(TEXT, resolver, FixedProbability(1.0), retrieved_ids=ids)
    assert (c.mark == "supported") == ("82" in ids)
    assert c.in_retrieved == ("82" in ids)
