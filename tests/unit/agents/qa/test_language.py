"""Search intents in the language of the sources, the question always searched, the answer in the question's
language: a Chinese question over a Chinese file and an English question over an English file, with the real
embedded 0.5B model, plus the rules themselves with a scripted model that plans in the wrong language."""

from __future__ import annotations

from pathlib import Path

import pytest

from legalrag.agents.qa import run_qa
from legalrag.agents.qa.language import text_lang
from legalrag.agents.qa.query_agent import plan_queries
from legalrag.search.local import LocalDocumentsSource
from legalrag.testing import ScriptedLLM

DATA = Path(__file__).parents[3] / "data" / "qa_language"  # also the folders of the documented CLI runs
ZH_QUESTION = "向人民法院请求保护民事权利的诉讼时效期间是几年？"
ZH_FILE = (DATA / "zh" / "minfadian.md").read_text(encoding="utf-8")
EN_QUESTION = "How many years is the limitation period for an action founded on simple contract?"
EN_FILE = (DATA / "en" / "limitation_act.md").read_text(encoding="utf-8")


@pytest.fixture
def zh_docs(tmp_path):
    (tmp_path / "民法典.md").write_text(ZH_FILE, encoding="utf-8")
    return tmp_path


@pytest.fixture
def en_docs(tmp_path):
    (tmp_path / "limitation.md").write_text(EN_FILE, encoding="utf-8")
    return tmp_path


def _searched(result) -> list[str]:
    return [s.input for s in result.steps if s.agent == "search"]


def test_english_intent_for_chinese_folder_is_dropped_and_question_searched(zh_docs):
    plan = '{"intents": [{"query": "What is the statute of limitations for civil rights?", "source": "local", "priority": 1}]}'
    llm = ScriptedLLM([plan, "诉讼时效期间为三年[1]。"])
    result = run_qa(ZH_QUESTION, llm, {"local": LocalDocumentsSource(zh_docs)})
    assert _searched(result) == [ZH_QUESTION]
    assert "dropped 'What is the statute" in (result.steps[0].error or "")
    assert result.evidence and "第一百八十八条" in result.evidence[0].text
    assert "Chinese" in llm.requests[0].messages[0]["content"]  # the planner is told the folder's language
    assert "Chinese" in llm.requests[1].messages[0]["content"]  # and the summary the answer's language
    assert result.citations[0].resolved


def test_chinese_intents_are_kept_after_the_question(zh_docs):
    plan = '{"intents": [{"query": "民法典 诉讼时效期间", "source": "local", "priority": 1}]}'
    intents, note = plan_queries(ScriptedLLM([plan]), ZH_QUESTION, ["local"], langs={"local": "zh"})
    assert [i.query for i in intents] == [ZH_QUESTION, "民法典 诉讼时效期间"] and note is None


def test_answer_in_the_wrong_language_is_rewritten_once(zh_docs):
    plan = '{"intents": [{"query": "诉讼时效", "source": "local", "priority": 1}]}'
    llm = ScriptedLLM([plan, "The limitation period is three years [1].", "诉讼时效期间为三年[1]。"])
    result = run_qa(ZH_QUESTION, llm, {"local": LocalDocumentsSource(zh_docs)})
    assert result.answer == "诉讼时效期间为三年[1]。" and llm.calls == 3


def test_nothing_found_is_said_in_the_question_language(tmp_path):
    (tmp_path / "other.md").write_text("# 无关\n\n本文件讨论天气。\n", encoding="utf-8")
    llm = ScriptedLLM(['{"intents": [{"query": "合同", "source": "local", "priority": 1}]}'])
    result = run_qa("什么是不可抗力？", llm, {"local": LocalDocumentsSource(tmp_path)})
    assert not result.evidence and text_lang(result.answer) == "zh"


@pytest.mark.llm
def test_chinese_question_over_chinese_file_real_model(llm, zh_docs):
    result = run_qa(ZH_QUESTION, llm, {"local": LocalDocumentsSource(zh_docs)}, max_answer_tokens=120)
    assert ZH_QUESTION in _searched(result)
    assert all(text_lang(q) == "zh" for q in _searched(result))
    assert result.evidence and "第一百八十八条" in result.evidence[0].text
    assert text_lang(result.answer) == "zh", result.answer
    assert "三年" in result.answer or "3年" in result.answer, result.answer


@pytest.mark.llm
def test_english_question_over_english_file_real_model(llm, en_docs):
    result = run_qa(EN_QUESTION, llm, {"local": LocalDocumentsSource(en_docs)}, max_answer_tokens=120)
    assert EN_QUESTION in _searched(result)
    assert all(text_lang(q) == "en" for q in _searched(result))
    assert result.evidence and "six years" in result.evidence[0].text
    assert text_lang(result.answer) == "en", result.answer
    assert "six" in result.answer.lower() or "6" in result.answer, result.answer


def test_citation_after_the_full_stop_supports_its_sentence(zh_docs):
    from legalrag.agents.qa.summary_agent import check_source_citations

    source = LocalDocumentsSource(zh_docs).search(ZH_QUESTION, k=1)
    citations, unsupported = check_source_citations("向人民法院请求保护民事权利的诉讼时效期间是三年。[1]", source)
    assert [c.resolved for c in citations] == [True] and unsupported == []
