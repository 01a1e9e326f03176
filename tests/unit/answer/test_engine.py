"""The one answer engine: `ask`, `chat` and the consultation benchmark answer through it and agree; usage and
timings are filled in; the CLI's JSON and the HTTP API's JSON have one shape."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from legalrag.cli.apps import app
from legalrag.testing import ScriptedLLM
from legalrag.types import Turn

QUESTION = "公司一直不跟我签书面劳动合同，我可以要求公司支付双倍工资吗？"
REPLY = "结论：可以。法律依据：《中华人民共和国劳动合同法》第八十二条规定应当每月支付二倍的工资。"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from legalrag.demo import demo_index

    return demo_index(tmp_path_factory.mktemp("engine") / "demo")


def _search(index):
    from legalrag.retrieval.pipeline import build_pipeline

    pipe = build_pipeline(index)
    return lambda q, k: list(pipe.search(q, k=k))


def test_ask_chat_and_the_benchmark_send_the_same_prompt_and_get_the_same_answer(index):
    from legalrag.answer.question import answer_question
    from legalrag.answer.per_index import resolver_for
    from legalrag.evaluation.lexrag.data import ConsultTurn
    from legalrag.evaluation.lexrag.generate import Setting, run_generation
    from legalrag.answer.consultation import Consultation

    llms = [ScriptedLLM([REPLY]) for _ in range(3)]
    asked = answer_question(QUESTION, index, llms[0])
    chat = Consultation(_search(index), llms[1], processor="last", resolver=resolver_for(index))
    chatted = chat.ask(QUESTION)
    turn = ConsultTurn(dialogue_id="d", turn=1, history=(), question=QUESTION, reference="", keywords=(),
                       articles=(), article_context="", gold_ids=(), unresolved=(), article_texts=())
    (bench,) = run_generation([turn], llms[2], [Setting.RETRIEVER], documents={d.id: d for d in index.documents},
                              search=_search(index), resolver=lambda: resolver_for(index))
    prompts = [llm.requests[0].messages for llm in llms]
    assert prompts[1] == prompts[2]  # one engine over one search, one set of defaults, one prompt
    assert prompts[0][0] == prompts[1][0]  # ask (over the index: its basis is the selector's choice) too
    assert llms[0].requests[0].max_tokens == llms[1].requests[0].max_tokens == llms[2].requests[0].max_tokens
    assert chatted.text == bench.text and asked.text.endswith(REPLY) and chatted.text.endswith(REPLY)
    assert asked.text.startswith("法律依据：") and chatted.text.startswith("法律依据：")  # the quoted basis first
    assert [h.id for h in chatted.sources] == list(bench.article_ids)
    for a in (asked, chatted, bench):
        assert a.citations and all(c.resolved and c.in_retrieved for c in a.citations)
        assert a.usage.calls == 1 and a.usage.prompt_tokens > 0 and a.usage.completion_tokens > 0
        t = a.timings
        assert t["total_s"] > 0 and 0 < t["ttft_s"] <= t["total_s"] and t["generation_s"] > 0
        assert t["citation_check_s"] >= 0 and t["retrieval_s"] >= 0 and a.seconds == t["total_s"]


def test_time_to_first_token_includes_the_retrieval(index):
    """A search that takes 0.3 s: the first token cannot come before it, so ttft_s >= retrieval_s >= 0.3."""
    import time

    from legalrag.answer.per_index import resolver_for
    from legalrag.answer.engine import AnswerEngine

    search = _search(index)

    def slow(q, k):
        time.sleep(0.3)
        return search(q, k)

    for on_text in (None, lambda _t: None):  # the direct and the streamed path
        engine = AnswerEngine(ScriptedLLM([REPLY]), slow, resolver=resolver_for(index))
        t = engine.answer(QUESTION, on_text=on_text).timings
        assert t["retrieval_s"] >= 0.3
        assert t["ttft_s"] >= t["retrieval_s"], (f"time to first token {t['ttft_s']:.3f} s is under the retrieval's "
                                                 f"{t['retrieval_s']:.3f} s: it must count from the question")
        assert t["ttft_s"] <= t["total_s"]


def test_a_follow_up_carries_the_history_and_the_processor_query(index):
    from legalrag.answer.per_index import resolver_for
    from legalrag.answer.consultation import Consultation

    llm = ScriptedLLM([REPLY, "结论：可以，用人单位应当向劳动者每月支付二倍的工资。"])
    chat = Consultation(_search(index), llm, processor="all_questions", resolver=resolver_for(index))
    chat.ask(QUESTION)
    first = chat.turns[1].content
    second = chat.ask("那多久之内要申请？")
    text = llm.requests[1].messages[-1]["content"]
    assert text.index(QUESTION) < text.index("法律依据（法条原文）") < text.index("问题：那多久之内要申请？")
    assert second.steps[0].output == QUESTION + " 那多久之内要申请？"  # the all_questions query retrieved
    assert first.endswith(REPLY)
    assert chat.turns == [Turn("user", QUESTION), Turn("assistant", first), Turn("user", "那多久之内要申请？"),
                          Turn("assistant", second.text)]
    assert second.text.endswith("结论：可以，用人单位应当向劳动者每月支付二倍的工资。")


def test_a_rewritten_follow_up_counts_the_rewrite_in_its_usage(index):
    """The LLM rewrite of a follow-up is one more call: the answer's usage holds both calls."""
    from legalrag.answer.per_index import resolver_for
    from legalrag.answer.consultation import Consultation

    llm = ScriptedLLM([REPLY, "公司不签书面劳动合同，劳动者申请劳动仲裁的时效是多久？", "结论：一年。"])
    chat = Consultation(_search(index), llm, processor="rewrite", resolver=resolver_for(index))
    first = chat.ask(QUESTION)
    second = chat.ask("那多久之内要申请？")
    assert len(llm.requests) == 3 and first.usage.calls == 1
    assert second.usage.calls == 2, f"the rewrite's call is missing from the answer's usage: {second.usage}"


def _shape(obj, depth: int = 0):
    """Keys, recursively (the first element of lists), as a comparable structure."""
    if isinstance(obj, dict):
        return {k: _shape(v, depth + 1) for k, v in obj.items() if depth or k != "timings"}
    if isinstance(obj, list):
        return [_shape(obj[0], depth + 1)] if obj else []
    return type(obj).__name__ if obj is not None else "null"


def test_cli_json_and_http_json_have_one_shape_for_ask_and_chat(index):
    from fastapi.testclient import TestClient

    from legalrag.server import ServerSettings, create_app
    from legalrag.wiring import Root

    runner = CliRunner()
    cli = runner.invoke(app, ["ask", QUESTION, "--index", str(index.path), "--json"],
                        obj=Root(llm=ScriptedLLM([REPLY])))
    assert cli.exit_code == 0, cli.output
    client = TestClient(create_app(index, ScriptedLLM([REPLY], cycle=True), ServerSettings(rate_limit=0)))
    http = client.post("/ask", json={"question": QUESTION})
    assert http.status_code == 200, http.text
    cli_json, http_json = json.loads(cli.output), http.json()
    assert _shape(cli_json) == _shape(http_json)
    assert set(cli_json["timings"]) <= set(http_json["timings"])  # the server adds the time spent queued
    assert cli_json["usage"]["calls"] == 1 and http_json["usage"]["calls"] == 1

    chat = runner.invoke(app, ["chat", "--index", str(index.path), "--json"], input=f"{QUESTION}\n/exit\n",
                         obj=Root(llm=ScriptedLLM([REPLY])))
    assert chat.exit_code == 0, chat.output
    chat_json = json.loads(chat.output.strip().splitlines()[-1])
    consult = client.post("/consult", json={"question": QUESTION})  # both take the default processor
    assert consult.status_code == 200, consult.text
    assert _shape(chat_json) == _shape(consult.json())
    from legalrag.answer.processors import DEFAULT_PROCESSOR

    assert chat_json["processor"] == consult.json()["processor"] == DEFAULT_PROCESSOR
    assert chat_json["answer"] == consult.json()["answer"] and chat_json["answer"].endswith(REPLY)
    assert chat_json["basis"] == consult.json()["basis"] and chat_json["basis"][0]["quote"]


def test_the_default_answer_prompt_asks_for_basis_steps_and_a_lawyer(index):
    from legalrag.answer.question import answer_question

    llm = ScriptedLLM([REPLY])
    answer_question(QUESTION, index, llm)
    system, user = llm.requests[0].messages[0]["content"], llm.requests[0].messages[-1]["content"]
    for part in ("结论", "怎么做", "何时找律师", "期限", "证据"):
        assert part in system
    assert "法律依据" in user and "诉讼时效" not in system  # the basis is quoted; no period asked from memory
    brief = ScriptedLLM([REPLY])
    answer_question(QUESTION, index, brief, style="brief")
    assert "何时找律师" not in brief.requests[0].messages[0]["content"]


def test_a_processor_that_searches_itself_feeds_the_engine_its_hits(index):
    from legalrag.answer.per_index import resolver_for
    from legalrag.answer.consultation import Consultation

    llm = ScriptedLLM([REPLY, "结论：可以。"])
    chat = Consultation(_search(index), llm, processor="fused", resolver=resolver_for(index))
    chat.ask(QUESTION)
    second = chat.ask("那要多少钱？")
    fused = second.steps[1]
    assert fused.agent == "retriever" and fused.action == "fused"
    assert fused.output[:len(second.sources)] == [h.id for h in second.sources]  # the engine answered from them
    assert second.sources and all(h.retriever == "fused" for h in second.sources)
