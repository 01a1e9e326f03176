"""The answer built around its quoted basis, through the one engine: the basis printed (and streamed) first from the
articles, the model given only the quotes, the checks (a conclusion the quotes do not support, a selection that
decides nothing, a number no quote gives, a loop), and the bad inputs of the answer path."""

from __future__ import annotations

import pytest

from support.selector import FixedSupport as Fixed, selector

from legalrag.answer.engine import engine_for
from legalrag.serialize import answer_from_dict, answer_to_dict
from legalrag.testing import ScriptedLLM

QUESTION = "公司一直不跟我签书面劳动合同，我可以要求公司支付双倍工资吗？"
REPLY = ("结论：可以，依据《劳动合同法》第八十二条，公司应当每月支付二倍的工资。\n怎么做：保留工资条和考勤记录，申请劳动仲裁。\n"
         "何时找律师：公司拒绝支付时。")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from legalrag.demo import demo_index

    return demo_index(tmp_path_factory.mktemp("basis") / "demo")


def _article(index, doc_id):
    return next(d for d in index.documents if d.id == doc_id)


def test_the_basis_is_printed_from_the_articles_and_the_model_sees_only_the_quotes(index):
    llm = ScriptedLLM([REPLY])
    pieces: list[str] = []
    answer = engine_for(llm, index, support=Fixed(0.9)).answer(QUESTION, on_text=pieces.append)
    assert 1 <= len(answer.basis) <= 3 and not answer.fallback
    assert answer.text.startswith("法律依据：\n[1] " + answer.basis[0].citation + "：“" + answer.basis[0].text + "”")
    for q in answer.basis:  # every quote is cut from its article, never written
        doc = _article(index, q.document_id)
        assert all(doc.text[a:b] in q.text for a, b in q.spans) and q.text.replace("…", "") == "".join(
            doc.text[a:b] for a, b in q.spans)
    assert answer.text.endswith(REPLY)
    assert pieces[0].startswith("法律依据：") and "".join(pieces).strip() == answer.text  # the basis streams first
    prompt = "\n".join(m["content"] for m in llm.requests[0].messages)
    assert all(q.text in prompt for q in answer.basis)
    assert "诉讼时效" not in prompt and "期限（如" not in prompt  # the prompt asks for no period from memory
    assert answer.timings["first_output_s"] <= answer.timings["ttft_s"]
    cited = [c.document_id for c in answer.citations]
    assert cited[0] == answer.basis[0].document_id  # the first cited article is the first of the basis
    data = answer_to_dict(answer)
    assert data["fallback"] is False and data["basis"][0]["quote"] == answer.basis[0].text
    assert answer_from_dict(data).basis == answer.basis


def test_a_low_probability_selection_gives_the_honest_fallback_without_calling_the_model(index):
    llm = ScriptedLLM([REPLY])
    answer = engine_for(llm, index, support=Fixed(0.9), selector=selector(-4.0)).answer(QUESTION)
    assert llm.calls == 0 and answer.fallback == "low_probability"
    assert answer.text.startswith("这个问题现在还不能下结论") and "需要核对" in answer.text and "结论：" not in answer.text
    assert len(answer.basis) == 3 and all(q.role == "related" and q.text in answer.text for q in answer.basis)
    data = answer_to_dict(answer)
    assert data["fallback"] is True and data["fallback_reason"] == "low_probability"
    assert any("no conclusion" in n for n in data["notes"])
    # a selection that decides: the selector's order, no fallback
    chosen = engine_for(ScriptedLLM([REPLY]), index, support=Fixed(0.9), selector=selector(4.0)).answer(QUESTION)
    assert not chosen.fallback and all(q.probability > 0.9 for q in chosen.basis)


def test_a_conclusion_the_quotes_do_not_support_is_withdrawn_for_the_fallback(index):
    pieces: list[str] = []
    answer = engine_for(ScriptedLLM([REPLY]), index, support=Fixed(0.1)).answer(QUESTION, on_text=pieces.append)
    assert answer.fallback == "not_supported" and "结论：可以" not in answer.text
    assert "已撤回" in "".join(pieces)  # the streamed reader is told the conclusion is withdrawn
    assert answer_to_dict(answer)["fallback"] is True


def test_a_period_no_quote_gives_is_marked_in_the_text_and_the_json(index):
    reply = REPLY + "\n诉讼时效为一年，要在一年内申请仲裁。"
    answer = engine_for(ScriptedLLM([reply]), index, support=Fixed(0.9)).answer(QUESTION)
    assert answer.not_from_law == ("一年", "一年")
    assert "〔不是出自法条〕" in answer.text.splitlines()[-1]
    assert answer_to_dict(answer)["not_from_law"] == ["一年", "一年"]
    clean = engine_for(ScriptedLLM([REPLY]), index, support=Fixed(0.9)).answer(QUESTION)
    assert clean.not_from_law == () and "〔不是出自法条〕" not in clean.text


def test_a_repeated_line_loop_is_cut_and_said(index):
    loop = "结论：可以。\n" + "我建议你尽快去劳动仲裁委员会申请仲裁。\n" * 40
    answer = engine_for(ScriptedLLM([loop]), index, support=Fixed(0.9)).answer(QUESTION)
    assert answer.text.count("我建议你尽快去劳动仲裁委员会申请仲裁") == 1
    assert "已在此截断" in answer.text
    assert any(s.action == "generate" and "repeated" in (s.error or "") for s in answer.steps)


def test_a_missing_selector_file_is_refused_with_its_path_and_the_answer_follows_the_retrieval_order(index, tmp_path):
    from legalrag.answer.select import load_selector

    missing = tmp_path / "no-selector"
    engine = engine_for(ScriptedLLM([REPLY]), index, support=Fixed(0.9), selector=lambda: load_selector(missing))
    answer = engine.answer(QUESTION)
    notes = answer_to_dict(answer)["notes"]
    assert any(str(missing) in n and "retrieval order" in n and "legalrag train selector" in n for n in notes)
    assert [q.document_id for q in answer.basis] == [h.id for h in answer.sources[:len(answer.basis)]]
    assert not answer.fallback


def test_a_selector_file_with_a_wrong_hash_is_refused(index, tmp_path):
    from legalrag.answer.select import load_selector, write_model

    d = write_model(tmp_path / "sel", selector(4.0).model)
    (d / "selector.json").write_text((d / "selector.json").read_text() + " ", encoding="utf-8")
    answer = engine_for(ScriptedLLM([REPLY]), index, support=Fixed(0.9),
                        selector=lambda: load_selector(d, support=Fixed(0.5))).answer(QUESTION)
    assert any("SHA-256" in n and str(d) in n for n in answer_to_dict(answer)["notes"])
    assert answer.basis and not answer.fallback


def test_selection_off_uses_the_retrieval_order(index):
    from legalrag.types import DEFAULTS

    off = engine_for(ScriptedLLM([REPLY]), index, support=Fixed(0.9), selector=selector(-4.0),
                     settings=DEFAULTS.but(select=False)).answer(QUESTION)
    assert not off.fallback and [q.document_id for q in off.basis] == [h.id for h in off.sources[:len(off.basis)]]
    assert all(q.probability is None for q in off.basis)


@pytest.mark.parametrize("question", ["", "   "])
def test_an_empty_question_is_a_clear_error(index, question):
    from legalrag.errors import InputError

    with pytest.raises(InputError, match="the question is empty"):
        engine_for(ScriptedLLM([REPLY]), index, support=Fixed(0.9)).answer(question)


def test_a_ten_thousand_character_question_gets_an_answer_not_a_crash(index):
    long = ("我在公司工作了很久。" * 999) + QUESTION
    assert len(long) >= 10_000
    answer = engine_for(ScriptedLLM([REPLY]), index, support=Fixed(0.9)).answer(long)
    assert answer.basis and answer.text.endswith(REPLY)


@pytest.mark.parametrize("question", ["Can my employer refuse to sign a written labour contract?",
                                      "公司不签labour contract，我能要double wages吗？"])
def test_english_and_mixed_questions_get_an_answer(index, question):
    llm = ScriptedLLM(lambda req: "未与劳动者订立书面劳动合同 二倍工资" if "translate" in str(req.messages).lower()
                      or "翻译" in str(req.messages) else "Conclusion: yes, under the quoted article.\nWhat to do: "
                      "keep your pay slips.\nWhen to see a lawyer: if the employer refuses.")
    answer = engine_for(llm, index, support=Fixed(0.9)).answer(question)
    assert answer.text and (answer.basis or answer.steps[-1].action == "check_citations")
