"""Drafting: prompt rendering, retrieval with the case itself excluded, repair into a parseable judgment,
article checking against the statute corpus, and (when the embedded model fixture exists) a real draft."""

from __future__ import annotations

import pytest

from legalrag.corpora.statutes import statute_document
from legalrag.judgment.draft import (JudgmentDrafter, assemble, cases_from_judgments, check_articles,
                                     render_prompt, repair_reply)
from legalrag.judgment.extract import extract_fields

STATUTES = [
    statute_document("264", "盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃、携带凶器盗窃、扒窃的，处三年以下有期徒刑、"
                            "拘役或者管制，并处或者单处罚金。", "中华人民共和国刑法第二百六十四条"),
    statute_document("67", "犯罪以后自动投案，如实供述自己的罪行的，是自首。", "中华人民共和国刑法第六十七条"),
    statute_document("133-1", "在道路上驾驶机动车，醉酒驾驶机动车的，处拘役，并处罚金。", "中华人民共和国刑法第一百三十三条之一"),
    statute_document("266", "诈骗公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金。",
                     "中华人民共和国刑法第二百六十六条"),
]
JUDGMENTS = {
    "c1": "审理终结。公诉机关指控，被告人甲在超市扒窃手机一部。本院认为，被告人甲构成盗窃罪，依照《中华人民共和国刑法》"
          "第二百六十四条之规定，判决如下：\n被告人甲犯盗窃罪，判处拘役三个月，并处罚金人民币一千元。\n如不服本判决，可上诉。",
    "c2": "审理终结。公诉机关指控，被告人乙醉酒驾驶机动车。本院认为，被告人乙构成危险驾驶罪，依照《中华人民共和国刑法》"
          "第一百三十三条之一之规定，判决如下：\n被告人乙犯危险驾驶罪，判处拘役二个月，并处罚金人民币三千元。\n如不服本判决，可上诉。",
}


def test_render_prompt_fills_every_slot():
    msgs = render_prompt("judgment_draft", facts="事实甲", laws="法条乙", cases="案例丙")
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "事实甲" in msgs[1]["content"] and "法条乙" in msgs[1]["content"] and "{{" not in msgs[1]["content"]


def test_repair_adds_missing_markers_and_result_parses():
    reply = "被告人张三的行为构成盗窃罪，依照《中华人民共和国刑法》第二百六十四条之规定。\n被告人张三犯盗窃罪，判处有期徒刑六个月，并处罚金人民币二千元。\n审判员 某"
    fixed = repair_reply(reply)
    assert fixed.startswith("本院认为，") and "判决如下：\n被告人张三犯盗窃罪" in fixed and "审判员" not in fixed
    doc = assemble("公诉机关指控，被告人张三盗窃手机一部。", reply)
    f = extract_fields(doc)
    assert f.sections.parsed and f.charges == ("盗窃罪",) and f.prison_months == 6 and f.fine_yuan == 2000
    assert f.article_numbers == (264,)
    assert f.sections.facts.strip() == "公诉机关指控，被告人张三盗窃手机一部。"


def test_check_articles_flags_articles_missing_from_the_corpus():
    doc = assemble("事实。", "本院认为，构成盗窃罪，依照《中华人民共和国刑法》第二百六十四条、第一百三十三条之一、"
                           "第九百九十九条之规定，判决如下：\n被告人甲犯盗窃罪，判处拘役一个月。")
    cites = check_articles(extract_fields(doc), STATUTES, retrieved_ids=["264"])
    by = {c.text: c for c in cites}
    assert by["第二百六十四条"].resolved and by["第二百六十四条"].in_retrieved
    assert by["第一百三十三条之一"].resolved and by["第一百三十三条之一"].document_id == "133-1"
    assert not by["第九百九十九条"].resolved and by["第九百九十九条"].document_id is None


def test_retrieval_never_returns_the_case_itself():
    drafter = JudgmentDrafter(llm=None, statutes=STATUTES, cases=cases_from_judgments(JUDGMENTS), k_cases=1)
    facts = "被告人乙醉酒驾驶机动车在道路上行驶"
    assert drafter.retrieve_cases(facts)[0].id == "c2"
    hits = drafter.retrieve_cases(facts, exclude={"c2"})
    assert [h.id for h in hits] == ["c1"] or hits == []
    assert drafter.retrieve_laws("醉酒驾驶机动车")[0].id == "133-1"
    msgs = drafter.messages(facts, drafter.retrieve_laws(facts), hits)
    assert "中华人民共和国刑法第一百三十三条之一" in msgs[1]["content"]


@pytest.mark.llm
def test_draft_with_the_embedded_model(small_llm):
    llm = small_llm
    drafter = JudgmentDrafter(llm, STATUTES, cases_from_judgments(JUDGMENTS), max_tokens=200)
    streamed = []
    res = drafter.draft("公诉机关指控，被告人丙在商场扒窃他人钱包一个，内有现金人民币二千元。", exclude_case_ids={"c1"},
                        on_text=streamed.append)
    assert "".join(streamed).strip()
    assert res.sections.parsed  # the repaired draft always has reasoning and result sections
    assert res.document.count("判决如下") >= 1 and res.sections.reasoning.startswith("本院认为")
    assert all(h.id != "c1" for h in res.case_hits)
    for c in res.citations:
        assert c.resolved == (c.document_id is not None)


def test_cli_draft_reports_a_missing_facts_file(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    src = Path(__file__).resolve().parents[3] / "src"
    proc = subprocess.run([sys.executable, "-m", "legalrag", "judgment", "draft", "--facts",
                           str(tmp_path / "missing.txt")], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(src)})
    assert proc.returncode != 0 and "missing.txt" in proc.stderr and "facts file not found" in proc.stderr
