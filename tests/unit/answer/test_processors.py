"""Conversation processors: the pure ones directly; the LLM rewrite with the real embedded 0.5B."""

from __future__ import annotations

import pytest

from legalrag.answer.processors import LLMRewrite, all_questions, full_context, last_question, make_processor
from legalrag.errors import InputError
from legalrag.types import Turn

TURNS = [
    Turn("user", "我在公司干了三年，老板突然把我辞退了。"),
    Turn("assistant", "用人单位违法解除劳动合同的，应当支付赔偿金。"),
    Turn("user", "那他要赔我多少钱？"),
]


def test_last_all_and_full_context():
    assert last_question(TURNS) == "那他要赔我多少钱？"
    assert all_questions(TURNS) == "我在公司干了三年，老板突然把我辞退了。 那他要赔我多少钱？"
    ctx = full_context(TURNS)
    assert ctx.splitlines() == ["用户: 我在公司干了三年，老板突然把我辞退了。", "助手: 用人单位违法解除劳动合同的，应当支付赔偿金。",
                                "用户: 那他要赔我多少钱？"]
    assert full_context(TURNS, lang="en").startswith("User: ")
    # over the budget, the oldest turns go first and the last question always stays
    assert full_context(TURNS, max_chars=20) == "用户: 那他要赔我多少钱？"


def test_bad_conversations_are_input_errors():
    with pytest.raises(InputError, match="no user question"):
        last_question([Turn("assistant", "hi")])
    with pytest.raises(InputError, match="role"):
        all_questions([Turn("system", "x"), Turn("user", "q")])
    with pytest.raises(InputError, match="unknown conversation processor"):
        make_processor("summary")
    with pytest.raises(InputError, match="needs an LLM"):
        make_processor("rewrite")


def test_rewrite_without_history_makes_no_call():
    class NoCalls:
        model_id = "none"

        def chat(self, request):  # pragma: no cover - must not be reached
            raise AssertionError("no LLM call expected for a one-turn conversation")

    assert LLMRewrite(NoCalls())([Turn("user", "  离婚  怎么分财产？ ")]) == "离婚 怎么分财产？"



@pytest.mark.llm
def test_llm_rewrite_with_the_embedded_model(llm):
    rewrite = make_processor("rewrite", llm=llm)
    rewrite.max_tokens = 60
    out = rewrite(TURNS)
    assert out.strip() and len(out) <= 400 and rewrite.tokens > 0
    assert rewrite.last_error is None or out == all_questions(TURNS)


# -- a consultation's prompt: evidence selected under a budget, as `ask` does ------------------------------

def _doc(i: str, label: str, text: str) -> "Document":
    from legalrag.types import Document

    return Document(i, text, f"中华人民共和国劳动合同法{label}",
                    metadata={"law": "中华人民共和国劳动合同法", "article_label": label, "article": i})


ART_82 = ("用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。\n"
          "用人单位违反本法规定不与劳动者订立无固定期限劳动合同的，自应当订立无固定期限劳动合同之日起向劳动者每月支付二倍的工资。")
ART_39 = ("劳动者有下列情形之一的，用人单位可以解除劳动合同：\n（一）在试用期间被证明不符合录用条件的；\n"
          "（二）严重违反用人单位的规章制度的；\n（三）严重失职，营私舞弊，给用人单位造成重大损害的。")
ART_10 = "建立劳动关系，应当订立书面劳动合同。已建立劳动关系，未同时订立书面劳动合同的，应当自用工之日起一个月内订立书面劳动合同。"
DOCS = [_doc("82", "第八十二条", ART_82), _doc("39", "第三十九条", ART_39), _doc("10", "第十条", ART_10)]
CITING_39 = "依据《中华人民共和国劳动合同法》第三十九条，可以解除。"


def _consultation(llm, **options):
    from legalrag.answer.consultation import Consultation
    from legalrag.types import Hit

    hits = [Hit(document=d, score=1.0 / r, rank=r) for r, d in enumerate(DOCS, 1)]
    return Consultation(lambda query, k: hits[:k], llm, documents=DOCS, processor="last", k=3, **options)


def test_consultation_selects_evidence_within_the_budget_and_checks_whole_articles():
    from legalrag.testing import ScriptedLLM

    whole, cut = ScriptedLLM([CITING_39]), ScriptedLLM([CITING_39])
    _consultation(whole, evidence_tokens=None).ask("公司没和我签书面劳动合同，能要二倍工资吗？")
    answer = _consultation(cut, evidence_tokens=130).ask("公司没和我签书面劳动合同，能要二倍工资吗？")
    old, new = whole.last_prompt(), cut.last_prompt()
    # None gives whole articles (600 characters at most), as `ask` does: the same engine builds both prompts
    assert f"[1] 《中华人民共和国劳动合同法》第八十二条\n{' '.join(ART_82.split())}" in old
    assert len(new) < len(old) and ART_82 not in new
    # the best-ranked article keeps its name and its best clause (the one about not signing a written contract)
    # (quoted as the answer's legal basis)
    assert ("[1] 《中华人民共和国劳动合同法》第八十二条\n用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，"
            "应当向劳动者每月支付二倍的工资。") in new
    step = next(s for s in answer.steps if s.action == "basis")
    assert step.output[0]["id"] == "82" and answer.basis[0].document_id == "82"
    assert [s.action for s in answer.steps][:4] == ["last", "retrieve", "basis", "generate"]
    assert answer.steps[-1].action == "check_citations"
    assert answer.usage.calls == 1 and answer.timings["total_s"] >= answer.timings["generation_s"] > 0
    # the citation is checked against the corpus and the retrieved list, not against what the prompt showed
    assert answer.citations and all(c.resolved and c.in_retrieved for c in answer.citations)


def test_consultation_prompt_keeps_instructions_first_and_history_before_the_evidence():
    from legalrag.testing import ScriptedLLM
    from legalrag.types import DEFAULT_EVIDENCE_TOKENS

    llm = ScriptedLLM([CITING_39])
    consultation = _consultation(llm)  # the library default budget, as `ask`
    assert consultation.engine.settings.evidence_tokens == DEFAULT_EVIDENCE_TOKENS
    consultation.ask("试用期里被辞退合法吗？")
    consultation.ask("那公司不签合同呢？")
    first, second = llm.requests
    assert first.messages[0] == second.messages[0]  # identical system message: the runtime's prompt cache keeps it
    text = second.messages[-1]["content"]
    assert text.index("试用期里被辞退合法吗？") < text.index("[1]") < text.index("问题：那公司不签合同呢？")


def test_too_small_an_evidence_budget_is_a_clear_error():
    from legalrag.testing import ScriptedLLM

    with pytest.raises(InputError, match="evidence_tokens.*too small for any evidence"):
        _consultation(ScriptedLLM([CITING_39]), evidence_tokens=5).ask("试用期里被辞退合法吗？")
    with pytest.raises(InputError, match="evidence_tokens must be a positive number"):
        _consultation(ScriptedLLM([CITING_39]), evidence_tokens=0)
