"""QA parts that need no model: citation checking, evidence filtering, question files, the trace format."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from legalrag.agents.qa.evidence import evidence_block, usable
from legalrag.agents.qa.mcq import _fallback_letter
from legalrag.agents.qa.mcq_eval import load_mcq, summarise_rows
from legalrag.agents.qa.summary_agent import check_source_citations
from legalrag.errors import InputError
from legalrag.search.base import SearchResult, SourceType

EVIDENCE = [
    SearchResult("劳动合同法第十九条", "docs/a.txt", "", SourceType.LOCAL,
                 content="劳动合同期限一年以上不满三年的，试用期不得超过二个月。"),
    SearchResult("Civil Code 1950.5", "https://leginfo.legislature.ca.gov/x", "", SourceType.WEB,
                 content="The landlord shall return the security deposit within 21 days after the tenant vacates."),
]


def test_check_citations_resolves_and_flags():
    answer = ("试用期不得超过二个月 [1]。 The landlord must return the deposit within 21 days [2]. "
              "The tenant may also claim triple damages in every case [7]. Courts always side with tenants here.")
    citations, unsupported = check_source_citations(answer, EVIDENCE)
    by_text = {c.text: c for c in citations}
    assert by_text["[1]"].resolved and by_text["[1]"].document_id == EVIDENCE[0].id and by_text["[1]"].in_retrieved
    assert by_text["[2]"].canonical == "Civil Code 1950.5"
    assert not by_text["[7]"].resolved and by_text["[7]"].document_id is None
    assert any("triple damages" in s for s in unsupported)
    assert any("Courts always side" in s for s in unsupported)
    assert not any("21 days" in s for s in unsupported)


def test_usable_drops_error_pages_deterministically():
    bad = [SearchResult("js", "https://forum.example/x", "snippet", SourceType.WEB,
                        metadata={"fetch_error": "error page ('javascript is disabled')"}),
           SearchResult("empty", "https://e.example", "", SourceType.WEB),
           SearchResult("search page", "https://gazette.example/search", "", SourceType.WEB,
                        content="No search results found for your query. Please try other keywords or browse the "
                                "index of the official gazette.")]
    kept, dropped = usable(EVIDENCE + bad)
    assert kept == EVIDENCE
    assert [d["title"] for d in dropped] == ["js", "empty", "search page"]
    assert usable(EVIDENCE + bad) == (kept, dropped)
    block = evidence_block(kept, max_chars=20)
    assert block.startswith("[1] 劳动合同法第十九条") and "[2] Civil Code 1950.5 (" not in block.split("\n")[0]
    assert evidence_block([]) == "(no sources)"


def test_fallback_letter():
    assert _fallback_letter("Let me think. A is wrong, C fits.\nAnswer: C", ["A", "B", "C", "D"]) == "C"
    assert _fallback_letter("答案：B", ["A", "B", "C", "D"]) == "B"
    assert _fallback_letter("no idea", ["A", "B"]) is None


def test_load_mcq_formats(tmp_path):
    rows = [{"id": "1", "question": "Q?", "choices": {"A": "x", "B": "y"}, "gold": "b", "domain": "d"}]
    (tmp_path / "q.json").write_text(json.dumps(rows), encoding="utf-8")
    (tmp_path / "q.jsonl").write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    (tmp_path / "q.csv").write_text("question,A,B,C,gold,domain\nWhich?,one,two,three,C,civil\n", encoding="utf-8")
    (tmp_path / "q2.csv").write_text('question,choices,gold\nWhich?,"A. one | B. two",A\n', encoding="utf-8")
    assert load_mcq(tmp_path / "q.json")[0].gold == "B"
    assert load_mcq(tmp_path / "q.jsonl")[0].choices == {"A": "x", "B": "y"}
    q = load_mcq(tmp_path / "q.csv")[0]
    assert q.choices == {"A": "one", "B": "two", "C": "three"} and q.domain == "civil"
    assert load_mcq(tmp_path / "q2.csv")[0].choices == {"A": "one", "B": "two"}


@pytest.mark.parametrize("line,match", [
    ('{"question": "Q", "choices": {"A": "x", "B": "y"}}', "missing 'gold'"),
    ('{"question": "Q", "choices": {"A": "x", "B": "y"}, "gold": "E"}', "not one of the choices"),
    ('{"question": "Q", "choices": {"A": "x"}, "gold": "A"}', "at least two choices"),
    ('{"question": "Q", "choices": 5, "gold": "A"}', "choices must be"),
])
def test_load_mcq_errors_name_file_and_line(tmp_path, line, match):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"question": "ok", "choices": ["a", "b"], "gold": "A"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=match) as exc:
        load_mcq(p)
    assert "bad.jsonl:2" in str(exc.value)


def test_summarise_rows_per_domain():
    rows = [{"mode": "simple", "domain": "labour", "correct": True, "choice": "A", "seconds": 1.0, "llm_calls": 2,
             "citations": 2, "resolved": 1},
            {"mode": "simple", "domain": "criminal", "correct": False, "choice": None, "seconds": 3.0,
             "llm_calls": 4, "citations": 0, "resolved": 0}]
    s = summarise_rows(rows, ["simple"])["simple"]
    assert s["accuracy"] == 0.5 and s["answered"] == 1 and s["mean_seconds"] == 2.0 and s["mean_llm_calls"] == 3
    assert s["citations_resolved_share"] == 0.5
    assert s["per_domain"] == {"criminal": {"accuracy": 0.0, "n": 1}, "labour": {"accuracy": 1.0, "n": 1}}


def test_bench_question_set_is_valid():
    from pathlib import Path

    repo = Path(__file__).resolve().parents[4]
    qs = load_mcq(repo / "bench" / "data" / "mcq_statutes.jsonl")
    assert len(qs) >= 30 and len({q.domain for q in qs}) >= 8
    docs = {p.stem for p in (repo / "bench" / "data" / "mcq_docs").glob("*.txt")}
    for line in (repo / "bench" / "data" / "mcq_statutes.jsonl").read_text(encoding="utf-8").splitlines():
        assert json.loads(line)["article"] in docs  # every answer is in the local folder


def test_cli_eval_mcq_bad_file_exits_nonzero(tmp_path):
    from legalrag.cli import main  # noqa: F401  (registers the command modules)
    from legalrag.cli.apps import app

    p = tmp_path / "q.txt"
    p.write_text("x", encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", "mcq", "--questions", str(p), "-o", "modes=zero-shot"])
    assert result.exit_code != 0 and "unknown question file type" in str(result.exception)


def test_cli_qa_without_configured_source_still_answers(tmp_path, monkeypatch):
    """No web key set: the command ends normally, says what to configure, and writes the trajectory."""
    from legalrag.cli import main  # noqa: F401
    from legalrag.cli.apps import app

    for var in ("SERPER_API_KEY", "TAVILY_API_KEY", "SEARXNG_URL"):
        monkeypatch.delenv(var, raising=False)
    trace = tmp_path / "t.jsonl"
    result = CliRunner().invoke(app, ["qa", "Is a verbal lease valid?", "--sources", "web", "--json",
                                      "--model", "qwen2.5-0.5b", "-o", f"trace={trace}"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["llm_calls"] == 0 and out["sources"] == [] and "SERPER_API_KEY" in out["answer"]
    assert any("No search source" in n for n in out["not_established"])
    assert trace.exists()
    bad = CliRunner().invoke(app, ["qa", "x", "--sources", "web", "--mode", "fast", "--model", "qwen2.5-0.5b"])
    assert bad.exit_code == 2 and "--mode" in bad.output and "'fast'" in bad.output


def test_written_article_citations_resolve_only_to_retrieved_articles():
    evidence = [SearchResult("中华人民共和国民法典第五百八十五条", "docs/585.txt", "", SourceType.LOCAL,
                             content="约定的违约金过分高于造成的损失的，人民法院或者仲裁机构可以根据当事人的请求予以适当减少。")]
    citations, _ = check_source_citations("依照《民法典》第五百八十五条可以请求适当减少 [1]。《民法典》第九百九十九条另有规定。",
                                   evidence)
    by_text = {c.text: c for c in citations}
    assert by_text["《民法典》第五百八十五条"].resolved and by_text["《民法典》第五百八十五条"].document_id == evidence[0].id
    assert not by_text["《民法典》第九百九十九条"].resolved
