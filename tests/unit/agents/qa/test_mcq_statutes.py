"""Multiple-choice questions answered from statutes: a law file in a documents folder is searched article by
article and cited "<law>第N条", each choice is searched with the stem, the answer step sees which articles were
found for which choice, the rationale is asked for in the question's language, and bad question files are refused
naming the line."""

from __future__ import annotations

import json

import pytest

from legalrag.agents.qa import answer_mcq
from legalrag.agents.qa.mcq_eval import load_mcq
from legalrag.errors import InputError
from legalrag.lang import detect_language
from legalrag.prompts import render_prompt
from legalrag.search.local import LocalDocumentsSource
from legalrag.testing import ScriptedLLM

LAW = """中华人民共和国测试合同法

第一章 一般规定

第一条　为了保护合同当事人的合法权益，制定本法。

第二条　当事人可以约定一方向对方给付定金作为债权的担保。定金合同自实际交付定金时成立。
定金的数额由当事人约定；但是，不得超过主合同标的额的百分之二十，超过部分不产生定金的效力。

第二章 租赁

第三条　租赁期限不得超过二十年。超过二十年的，超过部分无效。
第一条规定的目的适用于本章。

第三条之一　租赁物危及承租人的安全或者健康的，承租人可以随时解除合同。
"""

QUESTION = "定金的数额最多不得超过主合同标的额的多少？"
CHOICES = {"A": "百分之十", "B": "百分之二十", "C": "百分之三十", "D": "没有限制"}


@pytest.fixture
def law_docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "测试合同法.txt").write_text(LAW, encoding="utf-8")
    (folder / "memo.md").write_text("# 备忘\n\n租金每月支付一次，押金另行约定。\n", encoding="utf-8")
    return folder


def test_law_file_is_searched_article_by_article(law_docs):
    source = LocalDocumentsSource(law_docs)
    titles = {d.title: d for d in source.documents if d.metadata["unit"] == "article"}
    assert sorted(titles) == sorted(["中华人民共和国测试合同法第一条", "中华人民共和国测试合同法第二条",
                                     "中华人民共和国测试合同法第三条", "中华人民共和国测试合同法第三条之一"])
    # whole articles: the second paragraph stays with its article, a chapter header and the next article do not
    second = titles["中华人民共和国测试合同法第二条"].text
    assert second.startswith("第二条") and second.endswith("不产生定金的效力。") and "第二章" not in second
    # a line that refers to an article ("第一条规定的...") is not a new article
    assert "第一条规定的目的" in titles["中华人民共和国测试合同法第三条"].text
    assert titles["中华人民共和国测试合同法第三条"].metadata["section"] == "第二章 租赁"
    top = source.search("定金 数额 不得超过 主合同标的额", k=1)[0]
    assert top.title == "中华人民共和国测试合同法第二条"
    # the file without article markers is searched as passages, and the source says so
    assert source.passage_files == ["memo.md"]
    assert "memo.md" in source.unit_note() and "passages" in source.unit_note()


def test_mcq_searches_each_choice_and_cites_the_article(law_docs):
    source = LocalDocumentsSource(law_docs)
    queries = []
    search = source.search
    source.search = lambda q, k=5: (queries.append(q), search(q, k))[1]
    llm = ScriptedLLM(['{"answer": "B", "rationale": "依据来源[1]，定金不得超过主合同标的额的百分之二十。"}'])
    result = answer_mcq(QUESTION, CHOICES, llm, {"local": source}, mode="simple")
    assert result.choice == "B"
    assert queries == [QUESTION] + [f"{QUESTION} {text}" for text in CHOICES.values()]
    assert llm.calls == 1  # no planning call: the stem and the choices are the queries
    assert result.evidence[0].title == "中华人民共和国测试合同法第二条"
    assert [c.resolved for c in result.citations] == [True]
    prompt = llm.requests[0].messages[-1]["content"]
    assert "[1] 中华人民共和国测试合同法第二条" in prompt
    lines = dict(line.split(": ", 1) for line in prompt.split("Sources retrieved for each choice:\n")[1]
                 .split("\n\n")[0].splitlines())
    assert set(lines) == set(CHOICES) and "[1]" in lines["B"]


def test_chinese_question_asks_for_a_chinese_rationale():
    zh = render_prompt("qa_mcq_zero", question=QUESTION, choices="A. 一\nB. 二", language="Chinese (中文)")
    en = render_prompt("qa_mcq_zero", question="What is the cap?", choices="A. one\nB. two", language="English")
    assert "rationale in Chinese" in zh[0]["content"] and "一两句话" in zh[0]["content"]
    assert "rationale in English" in en[0]["content"] and "一两句话" not in en[0]["content"]
    for mode in ("zero-shot", "simple"):  # the pipeline passes the question's language to both prompts
        llm = ScriptedLLM(['{"answer": "B", "rationale": "定金不得超过百分之二十。"}'])
        answer_mcq(QUESTION, CHOICES, llm, {} if mode == "zero-shot" else None, mode=mode)
        assert "rationale in Chinese" in llm.requests[0].messages[0]["content"]
    llm = ScriptedLLM(['{"answer": "B", "rationale": "At most twenty percent."}'])
    answer_mcq("How large may a deposit be?", {"A": "10%", "B": "20%"}, llm, mode="zero-shot")
    assert "rationale in English" in llm.requests[0].messages[0]["content"]


@pytest.mark.llm
def test_chinese_question_gets_chinese_rationale_from_the_model(small_llm):
    result = answer_mcq(QUESTION, CHOICES, small_llm, mode="zero-shot")
    assert result.answer.strip() and detect_language(result.answer) == "zh", result.answer


OK = {"question": "Q", "choices": {"A": "x", "B": "y"}, "gold": "A"}


@pytest.mark.parametrize("line, match", [
    ('{"question": "Q", "choices": {"A": "x"}, "gold": "A"}', "at least two choices"),
    ('{"question": "Q", "choices": ["only one"], "gold": "A"}', "at least two choices"),
    ('{"question": "Q", "choices": {"A": "x", "A": "y", "B": "z"}, "gold": "A"}', "'A' is given twice"),
    ('{"question": "Q", "choices": {"A": "x", "a": "y"}, "gold": "A"}', "'A' is given twice"),
    ('{"question": "Q", "choices": {"A": "x", "B": "y"}, "gold": "C"}', "gold 'C' is not one of the choices"),
])
def test_bad_questions_are_refused_with_the_line(tmp_path, line, match):
    p = tmp_path / "q.jsonl"
    p.write_text(json.dumps(OK) + "\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=match) as exc:
        load_mcq(p)
    assert "q.jsonl:3" in str(exc.value)


def test_duplicate_letters_in_csv_and_json(tmp_path):
    csv = tmp_path / "q.csv"
    csv.write_text('question,choices,gold\nQ,"A. x | B. y",A\nQ,"A. x | A. y | B. z",A\n', encoding="utf-8")
    with pytest.raises(InputError, match="given twice") as exc:
        load_mcq(csv)
    assert "q.csv:3" in str(exc.value)
    js = tmp_path / "q.json"
    js.write_text('[{"question": "Q", "choices": {"B": "x", "B": "y"}, "gold": "B"}]', encoding="utf-8")
    with pytest.raises(InputError, match="given twice"):
        load_mcq(js)


def test_generated_exam_set_is_valid():
    from pathlib import Path

    path = Path(__file__).resolve().parents[4] / "bench" / "data" / "mcq_cloze.jsonl"
    questions = load_mcq(path)
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert len(questions) == 160 and {r["part"] for r in rows} == {"dev", "test"}
    for q, r in zip(questions, rows):  # the blank is in the stem, the gold value is in the article it names
        assert "（　）" in q.question and len(q.choices) == 4 and len(set(q.choices.values())) == 4
        assert r["article"].endswith("条") or "条之" in r["article"]


def test_eval_mcq_answers_from_the_national_index_by_default(tmp_path):
    """No --docs and no --index: the default national-law index is searched, article by article."""
    from pathlib import Path

    from typer.testing import CliRunner

    from legalrag.cli import app
    from legalrag.wiring import Root

    questions = Path(__file__).resolve().parents[4] / "bench" / "data" / "mcq_statutes.jsonl"
    gold_articles = [json.loads(x)["article"] for x in questions.read_text(encoding="utf-8").splitlines()[:2]]
    llm = ScriptedLLM(['{"answer": "B", "rationale": "依据来源[1]。"}'])
    rows = tmp_path / "rows.jsonl"
    res = CliRunner().invoke(app, ["eval", "mcq", "--questions", str(questions), "--limit", "2", "-o", "modes=simple",
                                   "--json", "--out", str(rows)], obj=Root(llm=llm))
    assert res.exit_code == 0, res.output
    report = json.loads(res.output[res.output.index("{"):])
    assert report["sources"] == ["statutes"] and report["problems"] == [] and report["notes"] == []
    shown = [json.loads(x)["sources"] for x in rows.read_text(encoding="utf-8").splitlines()]
    assert all(s and all(t.endswith("条") or "条之" in t for t in s) for s in shown)  # articles, not whole laws
    assert all(article in s for article, s in zip(gold_articles, shown))
    assert "rationale in Chinese" in llm.requests[0].messages[0]["content"]
