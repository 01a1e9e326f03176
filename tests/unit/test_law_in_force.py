"""A fresh install answers from the national law in force: the shipped dated versions, read as of today by
default and as of any past day with ``--as-of``; the 2023-06-05 snapshot stays the benchmarks' corpus."""

from __future__ import annotations

import json

from support.cli_runner import run_cli
from legalrag.retrieval.dated import dated
from legalrag.retrieval.pipeline import build_pipeline

CAPITAL = "有限责任公司的股东认缴的出资额应当在多长时间内缴足？"


def top(index, question, k=5):
    return [h.document for h in build_pipeline(index).search(question, k=k)]


def test_a_subscribed_capital_question_is_answered_from_the_2023_company_law(law_in_force):
    docs = top(law_in_force, CAPITAL)
    company = [d for d in docs if d.metadata["law"].endswith("公司法")]
    assert company and company[0].metadata["version"] == "2023-12-29", [d.title for d in docs]
    assert any("五年内缴足" in d.text for d in company)
    assert not any("版）" in d.metadata["law"] for d in docs)  # no superseded version answers today


def test_as_of_2020_reads_the_2018_company_law(law_in_force):
    docs = top(dated(law_in_force, "2020-01-01"), CAPITAL, k=10)
    company = [d for d in docs if d.metadata["law"].startswith("公司法")]
    assert company and {d.metadata["version"] for d in company} == {"2018-10-26"}, [d.title for d in docs]
    assert not any("五年内缴足" in d.text for d in company)


def test_the_criminal_law_before_and_after_amendment_twelve(law_in_force):
    question = "国有公司经理利用职务便利，自己经营与其所任职公司同类的营业，获取非法利益"
    before = [d for d in top(dated(law_in_force, "2023-06-01"), question, k=10) if d.title.endswith("第一百六十五条")]
    after = [d for d in top(law_in_force, question, k=10) if d.title.endswith("第一百六十五条")]
    assert before and after
    assert "其他公司、企业" not in before[0].text and "其他公司、企业" in after[0].text


def test_citations_resolve_to_the_text_in_force_and_old_versions_are_not_ambiguous(law_in_force):
    from legalrag.citecheck import CitationResolver

    resolver = CitationResolver.from_documents(law_in_force.documents)
    found = resolver.lookup(resolver.extract("依照《公司法》第四十七条")[0].citation)
    assert found.ok and "五年内缴足" in found.document.text, found


def test_index_info_and_the_demo_line_say_what_is_in_force(law_in_force, monkeypatch, capsys):
    from legalrag.demo import describe_index

    c = law_in_force.manifest["corpus"]
    assert c["snapshot"] == "2025-04-19" and c["base_snapshot"] == "2023-06-05"
    assert c["superseded_versions"] == 76 and c["articles_in_force"] < c["articles"]
    assert describe_index(law_in_force).startswith(f"Searched the national law in force on {law_in_force.day}")
    code, out, err = run_cli(monkeypatch, capsys, "index", "info")
    assert code == 0, err
    out = " ".join(out.split())  # the console wraps long lines
    assert "as published up to 2025-04-19" in out and "76 superseded" in out and "Not covered" in out


def test_search_as_of_prints_the_version_in_force_that_day(law_in_force, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "search", CAPITAL, "--as-of", "2020-01-01", "--json", "--k", "10")
    assert code == 0, err
    hits = json.loads(out)["hits"]
    versions = {h["metadata"]["version"] for h in hits if h["metadata"].get("law", "").startswith("公司法")}
    assert versions == {"2018-10-26"}, hits
