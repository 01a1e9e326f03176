"""Conversation processors, pinned where mutation testing found them unpinned: which processor ``auto`` uses for
each turn (the last question decides, at the ``short`` threshold), the query text and the hits it hands on, the
trace a person is shown (what was searched and carried, and why), every text it searches, the options it passes
on (``cited``, ``k``); the ``fused`` settings it reports; and the LLM rewrite: the request it sends (the
question, the history in the consultation's language within its character budget, the length and temperature),
how the reply is cleaned, and the tokens and usage it records."""

from __future__ import annotations

import pytest

from legalrag.answer.carry import FollowUp, FollowUpTrace, elliptical, fuse_turns
from legalrag.answer.processors import (Auto, ContextFusion, LLMRewrite, all_questions, full_context, make_processor,
                                        named_processor, retrieve_turn, turn_trace)
from legalrag.errors import InputError
from legalrag.llm.base import ChatResult
from legalrag.prompts import render_prompt
from legalrag.testing import ScriptedLLM
from legalrag.types import Document, Hit, Turn, Usage

# -- a small corpus and a search over it (a stand-in retriever: shared characters, then id) ------------------------

TEXTS = {
    "82": ("劳动合同法", "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。"),
    "10": ("劳动合同法", "建立劳动关系，应当订立书面劳动合同。"),
    "39": ("劳动合同法", "劳动者在试用期间被证明不符合录用条件的，用人单位可以解除劳动合同。"),
    "46": ("劳动合同法", "用人单位依照本法规定解除劳动合同的，应当向劳动者支付经济补偿。"),
    "47": ("劳动合同法", "经济补偿按劳动者在本单位工作的年限，每满一年支付一个月工资的标准向劳动者支付。"),
    "87": ("劳动合同法", "用人单位违反本法规定解除或者终止劳动合同的，应当依照经济补偿标准的二倍向劳动者支付赔偿金。"),
    "30": ("劳动合同法", "用人单位应当按照劳动合同约定和国家规定，向劳动者及时足额支付劳动报酬。"),
    "680": ("民法典", "禁止高利放贷，借款的利率不得违反国家有关规定。"),
    "676": ("民法典", "借款人未按照约定的期限返还借款的，应当按照约定或者国家有关规定支付逾期利息。"),
    "1079": ("民法典", "夫妻一方要求离婚的，可以由有关组织进行调解或者直接向人民法院提起离婚诉讼。"),
    "1087": ("民法典", "离婚时，夫妻的共同财产由双方协议处理；协议不成的，由人民法院判决。"),
    "188": ("民法典", "向人民法院请求保护民事权利的诉讼时效期间为三年。"),
}
DOCS = {i: Document(id=i, text=t, title=f"{law}第{i}条", metadata={"law": law}) for i, (law, t) in TEXTS.items()}


def search(query: str, k: int) -> list[Hit]:
    scored = sorted(DOCS.values(), key=lambda d: (-len(set(query) & set(d.text)), d.id))
    return [Hit(d, float(len(set(query) & set(d.text))), r) for r, d in enumerate(scored[:k], 1)]


FIRST = "公司一直不跟我签书面劳动合同，我可以要求公司支付双倍工资吗？"
ANSWER = "可以要求，建议先保留好工资流水。"
ELLIPTICAL = "那最多能要几个月？"
NEW_POINT = "公司要是把我辞退了，要给经济补偿吗？"


def dialogue(*questions: str) -> list[Turn]:
    turns = []
    for q in questions[:-1]:
        turns += [Turn("user", q), Turn("assistant", ANSWER)]
    return turns + [Turn("user", questions[-1])]


# -- auto: which processor, by the last question --------------------------------------------------------------------

def test_auto_chooses_by_the_last_question_not_an_earlier_one():
    auto = Auto()
    assert auto.choose(dialogue(FIRST)) == ("fused", "the first question: searched alone")
    assert auto.choose(dialogue(FIRST, ELLIPTICAL)) == ("carry", elliptical(ELLIPTICAL)[1])
    assert auto.choose(dialogue(FIRST, ELLIPTICAL, NEW_POINT)) == ("fused", elliptical(NEW_POINT)[1])
    assert auto.choose(dialogue(FIRST, NEW_POINT, ELLIPTICAL))[0] == "carry"


@pytest.mark.parametrize("short, carried, fused", [(None, "甲乙丙丁戊己？", "甲乙丙丁戊己庚？"),
                                                    (9, "甲乙丙丁戊己庚辛壬？", "甲乙丙丁戊己庚辛壬癸？")])
def test_auto_carries_a_question_of_at_most_short_characters_of_its_own(short, carried, fused):
    auto = Auto() if short is None else Auto(short=short)  # the default threshold is 6
    assert auto.choose(dialogue(FIRST, carried))[0] == "carry"
    assert auto.choose(dialogue(FIRST, fused))[0] == "fused"


def test_auto_makes_the_query_text_of_the_processor_it_chooses():
    auto = Auto()
    carry_turns, fused_turns = dialogue(FIRST, NEW_POINT, ELLIPTICAL), dialogue(FIRST, ELLIPTICAL, NEW_POINT)
    assert auto(carry_turns) == FollowUp()(carry_turns) == f"{NEW_POINT} {ELLIPTICAL}"
    assert auto(fused_turns) == ContextFusion()(fused_turns) == f"{FIRST} {ELLIPTICAL} {NEW_POINT}"


def test_auto_starts_with_an_empty_trace_and_no_choice():
    auto = Auto()
    assert auto.last_trace == FollowUpTrace() and auto.last_choice == ""


# -- auto: what it retrieves and the trace a person is shown --------------------------------------------------------

def test_a_carried_turn_returns_carrys_hits_and_trace_with_auto_s_reason():
    turns = dialogue(FIRST, ELLIPTICAL)
    auto, carry = Auto(), FollowUp()
    hits = auto.retrieve(search, turns, 3)
    assert auto.last_choice == "carry"
    assert [h.id for h in hits] == [h.id for h in carry.retrieve(search, turns, 3)] and len(hits) == 3
    t = carry.last_trace
    assert t.reason  # the detector always says why
    assert auto.last_trace == FollowUpTrace(t.searched, t.carried, t.established, t.same_issue,
                                            f"carried: {elliptical(ELLIPTICAL)[1]}; {t.reason}")


def test_a_fused_turn_returns_fuseds_hits_and_says_nothing_was_carried():
    turns = dialogue(FIRST, NEW_POINT)
    auto = Auto()
    hits = auto.retrieve(search, turns, 4)
    assert auto.last_choice == "fused"
    assert [h.id for h in hits] == [h.id for h in ContextFusion().retrieve(search, turns, 4)]
    assert auto.last_trace == FollowUpTrace((NEW_POINT,), same_issue=False,
                                            reason=f"fused, nothing carried: {elliptical(NEW_POINT)[1]}")
    auto.retrieve(search, dialogue(FIRST), 4)
    assert auto.last_trace == FollowUpTrace((FIRST,)) and auto.last_choice == "fused"


@pytest.mark.parametrize("follow_up", [ELLIPTICAL, NEW_POINT])
def test_auto_returns_ten_hits_unless_told_otherwise(follow_up):
    assert len(Auto().retrieve(search, dialogue(FIRST, follow_up))) == 10


def test_auto_passes_cited_to_carry_so_the_articles_an_answer_cites_are_established():
    cited_doc = Document(id="999", text="本条不在检索结果中。", title="某法第999条", metadata={"law": "某法"})
    auto = Auto(cited=lambda answer: [cited_doc] if answer == ANSWER else [])
    auto.retrieve(search, dialogue(FIRST, ELLIPTICAL), 5)
    assert "999" in auto.last_trace.established
    plain = Auto()
    plain.retrieve(search, dialogue(FIRST, ELLIPTICAL), 5)
    assert "999" not in plain.last_trace.established


def test_auto_searches_every_text_of_either_processor_once_carrys_first():
    turns = dialogue(FIRST, "试用期最长多久？", NEW_POINT, ELLIPTICAL)
    carry, fused = FollowUp(max_turns=1).queries(turns), ContextFusion().queries(turns)
    out = Auto(carry={"max_turns": 1}).queries(turns)  # carry looks one turn back, fused four
    texts = [q[0] for q in out]
    assert len(texts) == len(set(texts)) and set(texts) == {q[0] for q in carry} | {q[0] for q in fused}
    assert out[:len(carry)] == carry
    assert out[len(carry):] == [q for q in fused if q[0] not in {c[0] for c in carry}]
    assert any(q[0] not in {c[0] for c in carry} for q in fused)  # fused adds a text of its own here


def test_fused_reports_each_of_its_settings_by_name():
    fused = ContextFusion(0.3, 0.4, 2.5, law_top=7, depth=50, rrf_k=30, max_turns=2)
    assert fused.params() == {"question_decay": 0.3, "answer_weight": 0.4, "law_prior": 2.5, "law_top": 7,
                              "depth": 50, "rrf_k": 30, "max_turns": 2}


# -- the LLM rewrite ------------------------------------------------------------------------------------------------

REWRITE_TURNS = [Turn("user", "我在公司干了三年，老板突然把我辞退了。"), Turn("assistant", "用人单位违法解除劳动合同的，应当支付赔偿金。"),
                 Turn("user", "那他要赔我多少钱？")]


def test_a_rewrite_starts_with_nothing_recorded_and_accepts_either_language():
    rw = LLMRewrite(ScriptedLLM(["x"]), lang="en")
    assert (rw.last_error, rw.last_usage, rw.tokens) == (None, None, 0)
    with pytest.raises(InputError, match=r"^lang must be 'zh' or 'en', got 'fr'$"):
        LLMRewrite(ScriptedLLM(["x"]), lang="fr")


def test_a_first_question_is_not_rewritten_and_records_no_error_or_usage():
    llm = ScriptedLLM(["不应调用"])
    rw = LLMRewrite(llm)
    assert rw([Turn("user", "试用期最长多久？")]) == "试用期最长多久？"
    assert llm.calls == 0 and rw.last_error is None and rw.last_usage is None and rw.tokens == 0


def test_the_rewrite_request_holds_the_question_the_history_and_the_default_length_and_temperature():
    llm = ScriptedLLM(["公司违法辞退工作三年的劳动者要赔多少钱？"])
    rw = LLMRewrite(llm)
    assert rw(REWRITE_TURNS) == "公司违法辞退工作三年的劳动者要赔多少钱？"
    (request,) = llm.requests
    assert request.messages == tuple(render_prompt("conversation_rewrite_zh", question="那他要赔我多少钱？",
                                                   history=full_context(REWRITE_TURNS[:2], "zh", 1500)))
    assert "用户: 我在公司干了三年" in request.messages[-1]["content"]
    assert (request.max_tokens, request.temperature) == (128, 0.0)
    assert rw.last_error is None and rw.last_usage == Usage(calls=1, prompt_tokens=10, completion_tokens=5)


def test_the_rewrite_request_uses_the_options_given():
    llm = ScriptedLLM(["How much must the employer pay?"])
    turns = [Turn("user", "I was fired after three years."), Turn("assistant", "Unlawful dismissal costs damages."),
             Turn("user", "How much?")]
    rw = LLMRewrite(llm, lang="en", max_tokens=40, temperature=0.3, max_history_chars=40)
    rw(turns)
    (request,) = llm.requests
    history = full_context(turns[:2], "en", 40)
    assert history == "Assistant: Unlawful dismissal costs damages."  # the older turn dropped to fit 40 characters
    assert request.messages == tuple(render_prompt("conversation_rewrite_en", question="How much?", history=history))
    assert (request.max_tokens, request.temperature) == (40, 0.3)


@pytest.mark.parametrize("size, kept", [(1490, True), (1491, False)])
def test_the_history_keeps_1500_characters_by_default(size, kept):
    first = "甲" * 1000
    turns = [Turn("user", first), Turn("assistant", "乙" * (size - 1000)), Turn("user", "那呢？")]
    llm = ScriptedLLM(["改写"])
    LLMRewrite(llm)(turns)
    content = llm.requests[0].messages[-1]["content"]
    assert (first in content) is kept and "乙" * (size - 1000) in content


def test_an_assistant_turn_after_the_last_question_is_not_history():
    llm = ScriptedLLM(["改写"])
    turns = REWRITE_TURNS + [Turn("assistant", "稍后回答。")]
    LLMRewrite(llm)(turns)
    content = llm.requests[0].messages[-1]["content"]
    history, question = content.split("用户的最后一个问题")
    assert "那他要赔我多少钱" not in history and "那他要赔我多少钱" in question and "稍后回答" not in content


@pytest.mark.parametrize("reply, cleaned", [
    ('  "公司  违法辞退\n要赔多少？" ', "公司 违法辞退 要赔多少？"),
    ("“公司违法辞退要赔多少？”", "公司违法辞退要赔多少？"),
    ("改写后的独立问题：公司违法辞退要赔多少？", "公司违法辞退要赔多少？"),
    ("改写后的问题：公司违法辞退要赔多少？", "公司违法辞退要赔多少？"),
    ("Standalone question: How much for an unlawful dismissal?", "How much for an unlawful dismissal?"),
    ("X公司违法辞退要赔多少X", "X公司违法辞退要赔多少X"),
])
def test_the_reply_is_cleaned_of_quotes_whitespace_and_a_leading_label(reply, cleaned):
    rw = LLMRewrite(ScriptedLLM([reply]))
    assert rw(REWRITE_TURNS) == cleaned and rw.last_error is None


def test_an_empty_rewrite_falls_back_to_all_questions_with_an_error():
    rw = LLMRewrite(ScriptedLLM(['  “ ”  ']))
    assert rw(REWRITE_TURNS) == all_questions(REWRITE_TURNS)
    assert rw.last_error == "the model returned an empty rewrite; used all questions instead"


def test_tokens_add_up_over_rewrites_and_the_usage_is_the_last_call_s():
    replies = [ChatResult(text="第一次改写", prompt_tokens=30, completion_tokens=4),
               ChatResult(text="第二次改写", prompt_tokens=50, completion_tokens=7)]
    rw = LLMRewrite(ScriptedLLM(replies))
    rw(REWRITE_TURNS)
    rw(REWRITE_TURNS)
    assert rw.tokens == 30 + 4 + 50 + 7
    assert rw.last_usage == Usage.of(replies[1]) and rw.last_usage.prompt_tokens == 50


# -- the plain processors and make_processor ------------------------------------------------------------------------

def test_plain_processors_collapse_whitespace_and_skip_empty_questions():
    turns = [Turn("user", "  试用期\n 多久？ "), Turn("assistant", "六个月。"), Turn("user", "   "), Turn("user", "能 延长吗")]
    assert make_processor("last")(turns) == make_processor("last_question")(turns) == "能 延长吗"
    assert make_processor("all_questions")(turns) == "试用期 多久？ 能 延长吗"
    assert make_processor("full_context", lang="en")(turns) == "User: 试用期 多久？\nAssistant: 六个月。\nUser: 能 延长吗"
    assert make_processor("full_context")(turns).startswith("用户: 试用期 多久？\n助手: ")


def test_make_processor_builds_each_named_processor_with_its_options():
    fused = make_processor("fused", question_decay=0.5, cited=print)  # fused has no use for cited
    assert isinstance(fused, ContextFusion) and fused.question_decay == 0.5
    carry = make_processor("carry", carry_top=2, cited=print)
    assert isinstance(carry, FollowUp) and carry.carry_top == 2 and carry.cited is print
    auto = make_processor("auto", short=3)
    assert isinstance(auto, Auto) and auto.short == 3
    rw = make_processor("rewrite", llm=ScriptedLLM(["x"]), lang="en")
    assert isinstance(rw, LLMRewrite) and rw.lang == "en"
    with pytest.raises(InputError) as info:
        make_processor("summary")
    assert str(info.value) == ("unknown conversation processor 'summary'; choose one of last, all_questions, "
                               "full_context, rewrite, fused, carry, auto")
    with pytest.raises(InputError, match="^the 'rewrite' processor needs an LLM$"):
        make_processor("rewrite")


# -- fused: its checks, its searches and its fusion -----------------------------------------------------------------

@pytest.mark.parametrize("name", ["question_decay", "answer_weight", "law_prior"])
def test_fused_weights_may_be_zero_but_not_negative(name):
    assert getattr(ContextFusion(**{name: 0}), name) == 0
    with pytest.raises(InputError, match=f"^{name} must be 0 or more, got -0.1$"):
        ContextFusion(**{name: -0.1})


@pytest.mark.parametrize("name", ["law_top", "depth", "rrf_k", "max_turns"])
def test_fused_counts_must_be_at_least_one(name):
    assert getattr(ContextFusion(**{name: 1}), name) == 1
    with pytest.raises(InputError, match=f"^{name} must be at least 1, got 0$"):
        ContextFusion(**{name: 0})


def test_fused_weighs_earlier_questions_and_answers_by_their_distance():
    turns = [Turn("user", "q1"), Turn("assistant", "a1"), Turn("user", "q2"), Turn("assistant", "a2"), Turn("user", "q3")]
    assert ContextFusion(question_decay=0.5, answer_weight=0.25).queries(turns) == [
        ("q3", 1.0, True), ("q2", 0.5, False), ("q1", 0.25, False), ("a2", 0.25, False), ("a1", 0.125, False)]
    assert ContextFusion(question_decay=0.5, answer_weight=0.25, max_turns=1).queries(turns) == [
        ("q3", 1.0, True), ("q2", 0.5, False), ("a2", 0.25, False)]
    assert ContextFusion(question_decay=0.0, answer_weight=0.25).queries(turns) == [("q3", 1.0, True), ("a2", 0.25, False)]
    assert ContextFusion().queries([Turn("user", "q1")]) == [("q1", 1.0, True)]
    assert ContextFusion()(turns) == "q1 q2 q3"
    spaced = [Turn("user", "q1"), Turn("assistant", "  a1\n  a2 "), Turn("user", "q2")]
    assert [q[0] for q in ContextFusion().queries(spaced)] == ["q2", "q1", "a1 a2"]


def test_fused_searches_each_text_once_at_its_depth_and_fuses_with_its_settings():

    calls = []

    def counted(query, k):
        calls.append((query, k))
        return search(query, k)

    turns = dialogue(FIRST, NEW_POINT)
    fused = ContextFusion(depth=7, rrf_k=5, law_prior=1.5, law_top=2)
    hits = fused.retrieve(counted, turns, 4)
    texts = [q[0] for q in fused.queries(turns)]
    assert calls == [(t, 7) for t in texts] and fused.searches == len(texts)
    expected = fuse_turns([(search(t, 7), w, last) for t, w, last in fused.queries(turns)], 4, rrf_k=5,
                          law_prior=1.5, law_top=2)
    assert [(h.id, h.score) for h in hits] == [(h.id, h.score) for h in expected] and len(hits) == 4
    fused.retrieve(counted, turns, 4)
    assert len(calls) == len(texts) and fused.searches == len(texts)  # the second time from the cache
    assert len(ContextFusion().retrieve(search, turns)) == 10  # ten unless told otherwise


def test_fused_defaults_are_the_cross_validated_settings():
    assert ContextFusion().params() == {"question_decay": 0.2, "answer_weight": 0.25, "law_prior": 4.0, "law_top": 5,
                                        "depth": 100, "rrf_k": 60, "max_turns": 4}


def test_fused_remembers_the_last_512_texts_it_searched():
    fused = ContextFusion()
    for i in range(513):
        fused.retrieve(search, [Turn("user", f"问题{i}")], 1)
    assert fused.searches == 513
    fused.retrieve(search, [Turn("user", "问题512")], 1)
    assert fused.searches == 513  # still remembered
    fused.retrieve(search, [Turn("user", "问题0")], 1)
    assert fused.searches == 514  # the oldest was let go


# -- retrieve_turn, named processors and the trace ------------------------------------------------------------------

def test_retrieve_turn_runs_the_query_string_or_lets_the_processor_retrieve():

    turns = dialogue(FIRST, NEW_POINT)
    seen = []

    def recording(query, k):
        seen.append((query, k))
        return search(query, k)

    query, hits = retrieve_turn(make_processor("last"), recording, turns, 3)
    assert query == NEW_POINT and seen == [(NEW_POINT, 3)] and [h.id for h in hits] == [h.id for h in search(NEW_POINT, 3)]
    seen.clear()
    query, _ = retrieve_turn(make_processor("last"), recording, turns, 2, prepare=lambda q: "检索：" + q)
    assert query == NEW_POINT and seen == [("检索：" + NEW_POINT, 2)]
    seen.clear()
    query, _ = retrieve_turn(make_processor("last"), recording, turns, 2, query="给定的查询")
    assert query == "给定的查询" and seen == [("给定的查询", 2)]
    fused = ContextFusion()
    query, hits = retrieve_turn(fused, search, turns, 3)
    assert query == fused(turns) and [h.id for h in hits] == [h.id for h in ContextFusion().retrieve(search, turns, 3)]
    named = named_processor(make_processor("last"), "last")
    assert named.name == "last" and named(turns) == NEW_POINT


def test_the_trace_of_each_kind_of_processor():

    turns = dialogue(FIRST, NEW_POINT)
    hits = search(NEW_POINT, 3)
    assert turn_trace(make_processor("last"), turns, NEW_POINT, hits) == {
        "searched": [NEW_POINT], "carried": [], "same_issue": None, "reason": "", "earlier_searches": 0}
    fused = ContextFusion()
    texts = [q[0] for q in fused.queries(turns)]
    assert turn_trace(fused, turns, "q", hits) == {"searched": [NEW_POINT], "carried": [], "same_issue": None,
                                                  "reason": "", "earlier_searches": len(texts) - 1}
    assert turn_trace(fused, turns, "q", None)["searched"] == ["q"]  # no hits: the query string
    auto = Auto()
    before = turn_trace(auto, turns, "q", hits)  # nothing retrieved yet: the texts it would search
    assert before == {"searched": [auto.queries(turns)[0][0]], "carried": [], "same_issue": None, "reason": "",
                      "earlier_searches": len(auto.queries(turns)) - 1}
    carry = FollowUp()
    first = carry.retrieve(search, dialogue(FIRST), 3)
    assert turn_trace(carry, dialogue(FIRST), FIRST, first)["earlier_searches"] == 0
    hits = auto.retrieve(search, dialogue(FIRST, ELLIPTICAL), 3)
    trace = turn_trace(auto, dialogue(FIRST, ELLIPTICAL), "q", hits)
    titles = {h.id: h.document.title for h in hits}
    assert trace == {**auto.last_trace.to_dict(titles),
                     "earlier_searches": len(auto.queries(dialogue(FIRST, ELLIPTICAL))) - len(auto.last_trace.searched)}
    assert trace["earlier_searches"] > 0 and all(c["title"] == titles[c["id"]] for c in trace["carried"])
