"""The `auto` processor and its rule: a follow-up that names no legal matter of its own and refers back (or is
short) is carried; one that names a claim, a party's act or a procedural step is fused. Property tests on the
rule's boundaries, then the double-wage follow-up over BM25 on the bundled statute sample."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from legalrag.answer.carry import LEGAL_NOUNS, content_chars, elliptical, legal_nouns
from legalrag.answer.processors import PROCESSORS, Auto, make_processor, retrieve_turn, turn_trace
from legalrag.errors import InputError
from legalrag.types import Turn

SAMPLE = Path(__file__).resolve().parents[3] / "src" / "legalrag" / "data" / "statutes_sample.jsonl"
DOUBLE_WAGE = "公司一直不跟我签书面劳动合同，我可以要求公司支付双倍工资吗？"

# characters that make no legal noun together with any neighbour (checked below): filler of a follow-up
PLAIN = "我你想问下一个东西有没有用做吗呢啊吧好多少几个月最长天年后来现在还是就又再也"
plain_text = st.text(alphabet=PLAIN, min_size=0, max_size=12)
nouns = st.sampled_from(LEGAL_NOUNS)


def test_the_plain_alphabet_spells_no_legal_noun():
    assert [n for n in LEGAL_NOUNS if set(n) <= set(PLAIN)] == []


@settings(max_examples=200, deadline=None)
@given(before=plain_text, noun=nouns, after=plain_text)
def test_a_follow_up_that_names_a_legal_matter_is_fused_whatever_its_cues(before, noun, after):
    for opener in ("", "那", "那如果", "这个", "他"):
        question = f"{opener}{before}{noun}{after}呢？"
        lean, why = elliptical(question)
        assert lean is False and noun in legal_nouns(question) and "legal matter of its own" in why


@settings(max_examples=200, deadline=None)
@given(rest=plain_text, opener=st.sampled_from(["那", "那么", "那如果", "这个", "这样", "他", "她", "还有", "另外"]))
def test_a_follow_up_that_refers_back_and_names_no_legal_matter_is_carried(rest, opener):
    lean, why = elliptical(f"{opener}{rest}？", short=0)
    assert lean is True and "refers back" in why


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="甲乙丙丁戊己庚辛壬癸", min_size=0, max_size=20), short=st.integers(0, 20))
def test_the_short_threshold_is_the_boundary_for_a_question_without_cues(text, short):
    """No opener, no cue, no legal noun: carried exactly when its own characters are at most ``short``."""
    question = f"{text}？"
    assert not legal_nouns(question)
    assert elliptical(question, short=short)[0] is (content_chars(question) <= short)


def test_the_boundary_cases_named_in_the_rule():
    assert elliptical("那最多能要几个月？")[0] is True  # "那…", "最多…", no legal noun
    assert elliptical("最多能要几个月？", short=0)[0] is True  # a how-much word alone is a cue
    assert elliptical("那利息呢？")[0] is False  # 利息: a new claim of its own
    assert elliptical("是另外起诉吗？")[0] is False  # a procedural step
    assert elliptical("他表哥在借条上签了担保人，能找他吗？")[0] is False  # a new party with a claim
    assert elliptical("甲乙丙丁戊己？", short=6) == (True, "6 character(s) of its own and no legal matter named")
    assert elliptical("甲乙丙丁戊己庚？", short=6)[0] is False
    with pytest.raises(InputError, match="short must be 0 or more"):
        elliptical("那呢", short=-1)
    assert legal_nouns("劳动合同和合同") == ["劳动合同"]  # the longer noun, not the one inside it


@pytest.fixture(scope="module")
def search():
    from legalrag.corpora.statutes import load_statutes
    from legalrag.retrieval.index import build_index
    from legalrag.retrieval.pipeline import build_pipeline

    index = build_index(Path(__import__("tempfile").mkdtemp()) / "index", load_statutes(SAMPLE), ["bm25"], lang="zh")
    pipe = build_pipeline(index, retriever="bm25")
    return lambda q, k: pipe.search(q, k=k)


def _dialogue(follow_up: str) -> list[Turn]:
    return [Turn("user", DOUBLE_WAGE), Turn("assistant", "可以要求，建议先保留好工资流水。"), Turn("user", follow_up)]


def test_auto_carries_the_elliptical_follow_up_and_fuses_a_new_point(search):
    assert "auto" in PROCESSORS
    auto = make_processor("auto")
    query, hits = retrieve_turn(auto, search, _dialogue("那最多能要几个月？"), 6)
    assert auto.last_choice == "carry" and "劳动合同法第八十二条" in [h.document.title for h in hits]
    trace = turn_trace(auto, _dialogue("那最多能要几个月？"), query, hits)
    assert trace["same_issue"] is True and "carried" in trace["reason"] and trace["carried"]
    fused = make_processor("fused")
    new_point = _dialogue("公司要是把我辞退了，要给经济补偿吗？")
    hits = auto.retrieve(search, new_point, 6)
    assert auto.last_choice == "fused" and "经济补偿" in auto.last_trace.reason
    assert [h.id for h in hits] == [h.id for h in fused.retrieve(search, new_point, 6)]
    assert auto.last_trace.carried == () and auto.last_trace.same_issue is False
    first = auto.retrieve(search, [Turn("user", DOUBLE_WAGE)], 6)  # a first question: searched alone
    assert auto.last_choice == "fused" and first and auto.last_trace.reason == ""
    assert set(auto.params()) == {"short", "carry", "fused"} and auto.searches > 0


def test_auto_options_are_checked():
    with pytest.raises(InputError, match="short must be 0 or more"):
        Auto(short=-2)
    with pytest.raises(TypeError):
        Auto(carry={"no_such_option": 1})
