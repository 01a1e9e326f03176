"""`legalrag ask`: retrieval + the real 0.5B + citation checking; flags in the JSON and human output."""

from __future__ import annotations

import json

import pytest
from support.http_app import serve_app
from typer.testing import CliRunner

from legalrag.answer.question import answer_question

from legalrag.answer.per_index import resolver_for
from legalrag.cli._answer_output import print_answer
from legalrag.cli.apps import app
from legalrag.serialize import answer_to_dict
from legalrag.types import Answer

runner = CliRunner()
QUESTION = "公司一直不跟我签书面劳动合同，我可以要求公司支付双倍工资吗？"


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory):
    from legalrag.demo import demo_index

    return demo_index(tmp_path_factory.mktemp("idx") / "demo")


def test_flags_unresolved_and_unretrieved(sample_index):
    """The check itself, on a fixed answer text: one retrieved, one in the corpus only, one invented."""
    from legalrag.citecheck.marks import mark_citations

    retrieved = [d for d in sample_index.documents if d.metadata.get("law") == "劳动合同法"
                 and str(d.metadata.get("article")) == "82"]
    other = next(d for d in sample_index.documents if d.metadata.get("law") == "劳动合同法"
                 and str(d.metadata.get("article")) == "47")
    assert retrieved
    text = ("依据《中华人民共和国劳动合同法》第八十二条，用人单位超过一个月未与劳动者订立书面劳动合同的，应当每月支付二倍的工资；另见《中华人民共和国劳动合同法》第四十七条。"
            "《中华人民共和国劳动合同法》第九百九十九条也有规定。")
    cits = tuple(mark_citations(text, resolver_for(sample_index), retrieved_ids=[retrieved[0].id]))
    answer = Answer(text=text, citations=cits, timings={"retrieval_s": 0.1, "generation_s": 1.0})
    d = answer_to_dict(answer, model="m")
    assert [(c["resolved"], c["in_retrieved"]) for c in d["citations"]] == [(True, True), (True, False),
                                                                           (False, False)]
    assert d["citations"][1]["document_id"] == other.id and d["citations"][1]["document_text"] == other.text
    assert d["citations"][2]["document_text"] is None and d["unresolved"] == 1 and d["not_retrieved"] == 1
    assert [c["mark"] for c in d["citations"]] == ["supported", "exists", "not_found"]
    assert d["citations"][1]["mark_reason"] == "not_retrieved" and d["marks"]["supported"] == 1

    from rich.console import Console

    console = Console(record=True, width=200)
    print_answer(answer, console)
    out = console.export_text()
    assert "✓ SUPPORTED" in out and "? EXISTS" in out and "✗ NOT FOUND" in out
    assert "not among the retrieved articles" in out and out.count("✓") == 1  # ✓ only for the supported one


def test_empty_question_is_refused(sample_index):
    from legalrag.errors import InputError

    with pytest.raises(InputError, match="question is empty"):
        answer_question("  ", sample_index, llm=None)


@pytest.mark.llm
def test_answer_with_the_real_model(sample_index, small_llm):
    answer = answer_question(QUESTION, sample_index, small_llm, k=3, max_tokens=32, max_article_chars=120)
    assert answer.text and len(answer.hits) == 3
    assert {"retrieval_s", "generation_s", "citation_check_s"} <= set(answer.timings)
    assert [s.action for s in answer.steps][0] == "retrieve" and answer.steps[-1].action == "check_citations"
    assert answer.usage.calls == 1 and answer.usage.prompt_tokens > 0 and answer.usage.completion_tokens > 0
    assert answer.seconds > 0 and answer.timings["ttft_s"] <= answer.timings["total_s"]
    for c in answer.citations:  # whatever it cited is checked and reported, resolved or not
        assert c.resolved == (c.document_id is not None)


@pytest.fixture(scope="module")
def endpoint(small_llm):
    from legalrag.llm.serve import create_llm_app

    with serve_app(create_llm_app(small_llm, model_name="small")) as url:
        yield url + "/v1"


@pytest.mark.llm
def test_cli_json_through_an_endpoint(sample_index, endpoint, tmp_path, monkeypatch):
    monkeypatch.setenv("LEGALRAG_LLM_CACHE", str(tmp_path / "calls.sqlite"))
    args = ["ask", QUESTION, "--index", str(sample_index.path), "--model", f"{endpoint}#small",
            "--k", "2", "--max-tokens", "32", "--json"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["answer"] and len(out["retrieved"]) == 2 and out["model"].startswith("small@")
    assert set(out["timings"]) >= {"retrieval_s", "generation_s"} and not out["usage"]["cached_calls"]
    again = json.loads(runner.invoke(app, args).output)  # temperature 0: the second run is a cache hit
    assert again["usage"]["cached_calls"] == 1 and again["answer"] == out["answer"]
    res = runner.invoke(app, args[:-1] + ["--no-cache"])  # human output: the answer streams, then the check
    assert res.exit_code == 0, res.output
    check = max(res.output.find("Citations checked"), res.output.find("cites no article"))
    assert 0 < check and res.output.find(out["answer"].strip()) in range(0, check)


def test_cli_empty_question_exits_nonzero(sample_index):
    from legalrag.cli import main  # noqa: F401

    res = runner.invoke(app, ["ask", " ", "--index", str(sample_index.path), "--model", "qwen2.5-0.5b"])
    assert res.exit_code != 0 and "question is empty" in str(res.exception)


def test_cli_json_reports_ttft_and_a_too_small_budget_is_refused(sample_index):
    from legalrag.testing import ScriptedLLM
    from legalrag.wiring import Root

    llm = ScriptedLLM(["依据《中华人民共和国劳动合同法》第八十二条，可以要求二倍工资。"])
    # the brief answer's evidence budget (the guided answer's evidence is its quoted basis)
    args = ["ask", QUESTION, "--index", str(sample_index.path), "--k", "3", "--json", "--style", "brief"]
    res = runner.invoke(app, args + ["--evidence-tokens", "120"], obj=Root(llm=llm))
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert 0 <= out["timings"]["ttft_s"] <= out["timings"]["total_s"] and out["notes"] == []
    shown = llm.last_prompt()
    assert "第八十二条" in shown and len(shown) < 720  # the articles were cut to matching clauses (instructions ~500)
    res = runner.invoke(app, args + ["--evidence-tokens", "5"], obj=Root(llm=llm))
    assert res.exit_code != 0 and "--evidence-tokens" in str(res.exception) + res.output
