"""The rules of ``carry``'s follow-up detector and fusion, as properties: a question too short to raise a point
of its own (at most ``short_question`` content characters, the boundary included) keeps the topic; the law
prior of the same issue (``law_prior``) and of a new point (``law_prior_new``) each apply to their own case
only; and the history kept is the latest ``max_turns``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from legalrag.answer.carry import FollowUp, content_chars
from legalrag.types import Document, Hit, Turn

CONTENT = "工资赔偿加班解除合同期限违约金社保押金"  # characters the detector counts (no filler among them)
LAW_A, LAW_B = "中华人民共和国劳动合同法", "中华人民共和国劳动法"
DOCS = {i: Document(i, f"条文{i}", f"{law}第{n}条", metadata={"law": law})
        for i, law, n in (("a1", LAW_A, 1), ("a2", LAW_A, 2), ("a3", LAW_A, 3), ("b1", LAW_B, 1),
                          ("b2", LAW_B, 2), ("b3", LAW_B, 3))}
FIRST = "公司不和我签劳动合同怎么办"
SAME = "那最多呢？"  # too short: the same issue
NEW = "劳动法规定的加班工资标准是多少"  # long, and its own search meets none of the established articles
RESULTS = {FIRST: ["a1", "a2", "a3", "b3"], SAME: ["b1", "a2", "b2"], NEW: ["b1", "b2"]}


def search(text, k):
    ids = RESULTS.get(text, ["a3", "b2", "a1"])  # the context query (earlier question + this one)
    return [Hit(DOCS[i], 1.0 / r, r, "bm25") for r, i in enumerate(ids[:k], 1)]


def turns(*questions):
    out = []
    for q in questions[:-1]:
        out += [Turn("user", q), Turn("assistant", "可以主张二倍工资。")]
    return out + [Turn("user", questions[-1])]


def ranked(processor, dialogue):
    return [(h.id, round(h.score, 12)) for h in processor.retrieve(search, dialogue, k=6)]


def test_the_dialogues_fall_on_the_side_they_are_meant_to():
    p = FollowUp()
    p.retrieve(search, turns(FIRST, SAME), k=6)
    assert p.last_trace.same_issue is True and "too short" in p.last_trace.reason
    p.retrieve(search, turns(FIRST, NEW), k=6)
    assert p.last_trace.same_issue is False


@settings(max_examples=25, deadline=None)
@given(st.floats(min_value=0.5, max_value=8.0), st.floats(min_value=0.0, max_value=8.0))
def test_on_the_same_issue_only_law_prior_counts(prior, other):
    dialogue = turns(FIRST, SAME)
    base = ranked(FollowUp(law_prior=prior, law_prior_new=0.0), dialogue)
    assert ranked(FollowUp(law_prior=prior, law_prior_new=other), dialogue) == base
    assert ranked(FollowUp(law_prior=0.0, law_prior_new=other), dialogue) != base  # the prior is in force


@settings(max_examples=25, deadline=None)
@given(st.floats(min_value=0.5, max_value=8.0), st.floats(min_value=0.0, max_value=8.0))
def test_on_a_new_point_only_law_prior_new_counts(prior_new, other):
    dialogue = turns(FIRST, NEW)
    base = ranked(FollowUp(law_prior=0.0, law_prior_new=prior_new), dialogue)
    assert ranked(FollowUp(law_prior=other, law_prior_new=prior_new), dialogue) == base
    assert ranked(FollowUp(law_prior=other, law_prior_new=0.0), dialogue) != base


def test_the_content_alphabet_is_all_content():
    assert content_chars(CONTENT) == len(CONTENT)
    assert content_chars("那" + CONTENT[:3] + "吗？") == 3


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=12), st.integers(min_value=0, max_value=12))
def test_too_short_means_at_most_short_question_content_characters(n, limit):
    question = "那" + CONTENT[:n] + "吗？"
    same, reason = FollowUp(short_question=limit).same_issue([FIRST, question], [], [])
    assert (reason == "too short to raise a point of its own") == (n <= limit)
    assert same is True or n > limit


@pytest.mark.parametrize("limit", [0, 3, 4, 5])
def test_a_question_of_exactly_the_limit_is_too_short(limit):
    exactly = "那" + CONTENT[:max(limit, 1)] + "吗？"
    _, reason = FollowUp(short_question=max(limit, 1)).same_issue([FIRST, exactly], [], [])
    assert reason == "too short to raise a point of its own"
    longer = "那" + CONTENT[:max(limit, 1) + 1] + "吗？"
    _, reason = FollowUp(short_question=max(limit, 1)).same_issue([FIRST, longer], [], [])
    assert reason != "too short to raise a point of its own"

