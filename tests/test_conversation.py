"""Conversation processors: the pure ones directly; the LLM rewrite with the real embedded 0.5B."""

from __future__ import annotations

import pytest

from legalrag.conversation import LLMRewrite, all_questions, full_context, last_question, make_processor
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
