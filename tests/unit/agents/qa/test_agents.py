"""The QA agents end to end with the real embedded 0.5B model (``small_llm``): few rounds, short replies.

The 0.5B model is weak, so these tests check what must hold whatever it says: a valid result, citations that
point only at retrieved sources (unresolved ones flagged), error pages dropped before the judge, a trajectory
that can be saved, and a clear statement when nothing could be established.
"""

from __future__ import annotations

import json

import pytest
from support.qa_http import LocalServer

from legalrag.agents.qa import answer_mcq, run_qa
from legalrag.agents.qa.pipeline import save_trace
from legalrag.search.local import LocalDocumentsSource
from legalrag.search.web import SearxngSearch

ARTICLES = {
    "劳动合同法第十九条": "劳动合同期限三个月以上不满一年的，试用期不得超过一个月；劳动合同期限一年以上不满三年的，试用期不得超过二个月；"
                  "三年以上固定期限和无固定期限的劳动合同，试用期不得超过六个月。",
    "劳动合同法第三十七条": "劳动者提前三十日以书面形式通知用人单位，可以解除劳动合同。劳动者在试用期内提前三日通知用人单位，可以解除劳动合同。",
    "中华人民共和国民法典第十七条": "十八周岁以上的自然人为成年人。不满十八周岁的自然人为未成年人。",
}



@pytest.fixture
def docs(tmp_path):
    for name, text in ARTICLES.items():
        (tmp_path / f"{name}.txt").write_text(f"{name}\n\n{text}\n", encoding="utf-8")
    return tmp_path


def _check_invariants(result):
    ids = {s.id for s in result.evidence}
    for c in result.citations:
        assert c.resolved == (c.document_id in ids)
        if c.resolved:
            assert c.in_retrieved
    assert result.steps and result.llm_calls >= 1
    json.dumps(result.to_dict(), ensure_ascii=False)  # serialisable


def test_simple_mode_over_local_documents(llm, docs, tmp_path):
    result = run_qa("劳动合同期限两年，试用期最长可以约定多久？", llm, {"local": LocalDocumentsSource(docs)},
                             mode="simple")
    _check_invariants(result)
    assert any(s.title == "劳动合同法第十九条" for s in result.evidence)
    assert [s.agent for s in result.steps][:2] == ["query", "search"] and result.steps[-1].agent == "summary"
    assert result.answer.strip()
    trace = tmp_path / "trace.jsonl"
    save_trace(trace, result)
    lines = [json.loads(x) for x in trace.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len(result.steps) and lines[0]["agent"] == "query"


def test_multi_mode_drops_error_pages_and_bounds_rounds(llm):
    server = LocalServer()
    try:
        server.add_json("/search", {"query": "q", "number_of_results": 0, "results": [
            {"url": server.url + "/js", "title": "Forum thread", "content": "", "engine": "brave",
             "engines": ["brave"], "score": 1.0, "category": "general"}]})
        server.add("/js", "<html><body><p>JavaScript is disabled in your browser. Please enable JavaScript to "
                          "continue.</p></body></html>")
        result = run_qa("What is the probation limit for a two-year contract?", llm,
                                 {"web": SearxngSearch(server.url)}, mode="multi", max_rounds=2)
    finally:
        server.close()
    filters = [s for s in result.steps if s.action == "filter"]
    assert filters and all(f.output["kept"] == 0 for f in filters)
    assert "javascript" in filters[0].output["dropped"][0]["reason"]
    assert len(filters) <= 2  # at most max_rounds rounds (one filter step per round, whatever the intents)
    assert not result.sources and not result.citations
    assert "could not establish" in result.answer and result.not_established


def test_no_source_and_failing_source_still_return_results(llm):
    nothing = run_qa("Is a verbal lease valid?", llm, {}, mode="multi",
                              problems=["web: no web search is configured: set SERPER_API_KEY"])
    assert nothing.llm_calls == 0 and "SERPER_API_KEY" in nothing.answer
    assert any("No search source" in n for n in nothing.not_established)
    dead = run_qa("Is a verbal lease valid?", llm, {"web": SearxngSearch("http://127.0.0.1:9")},
                           mode="simple")
    errors = [s for s in dead.steps if s.error and s.agent == "search"]
    assert errors and "cannot reach" in errors[0].error
    assert dead.not_established and not dead.sources


def test_multiple_choice_modes(llm, docs):
    choices = {"A": "十六周岁", "B": "十八周岁", "C": "二十周岁", "D": "十四周岁"}
    question = "根据民法典，多少周岁以上的自然人为成年人？"
    zero = answer_mcq(question, choices, llm, mode="zero-shot")
    assert zero.choice in choices and zero.llm_calls == 1 and not zero.sources
    simple = answer_mcq(question, choices, llm, {"local": LocalDocumentsSource(docs)}, mode="simple")
    _check_invariants(simple)
    assert simple.choice in choices and simple.evidence[0].title == "中华人民共和国民法典第十七条"
