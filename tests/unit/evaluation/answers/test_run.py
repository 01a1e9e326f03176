"""The answer benchmark: questions load with their keywords, the yes/no rule reads explicit conclusions, a run
answers as `ask` does (or over the gold), scores every answer, resumes, refuses a file of other settings, and
the CLI writes rows and a summary. The LLM judge is tested over HTTP against `llm serve` with the real 0.5B."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from legalrag.evaluation.answers.data import load_questions, split_keywords
from legalrag.evaluation.answers.yesno import asked_predicate, conclusion_polarity, is_yes_no
from legalrag.cli.apps import app
from legalrag.errors import InputError
from legalrag.testing import ScriptedLLM

QUESTION = "公司一直不跟我签书面劳动合同，我可以要求公司支付双倍工资吗？"
LAWYER = "您好，可以。用人单位超过一个月不满一年未订立书面劳动合同的，应当每月支付二倍工资。"
CITES_GOLD = "法律依据：《劳动合同法》第八十二条。\n结论：可以要求公司支付二倍工资。\n怎么做：申请仲裁。"
CITES_OTHER = "法律依据：《劳动合同法》第十条。\n结论：不可以。\n怎么做：协商。"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from legalrag.demo import demo_index

    return demo_index(tmp_path_factory.mktemp("answerbench") / "demo")


@pytest.fixture
def queries(tmp_path):
    path = tmp_path / "q.jsonl"
    rows = [{"query_id": 1, "query": QUESTION, "gold_ids": [13578, 34848], "keywords": "二倍工资；\n书面劳动合同",
             "answer": LAWYER},
            {"query_id": 2, "query": "借款合同应当采用什么形式？", "gold_ids": [667], "keywords": "书面形式、借款",
             "answer": "借款合同应当采用书面形式。"}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_questions_load_with_their_keywords_and_a_bad_line_is_named(queries, tmp_path):
    qs = load_questions(queries)
    assert [q.id for q in qs] == ["1", "2"] and qs[0].gold_ids == ("13578", "34848")
    assert qs[0].keywords == ("二倍工资", "书面劳动合同") and split_keywords("盗窃、抢夺") == ("盗窃", "抢夺")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(queries.read_text(encoding="utf-8") + '{"query_id": 3, "query": "x"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 3: no 'gold_ids'"):
        load_questions(bad)


@pytest.mark.parametrize("question, text, expected", [
    (QUESTION, CITES_GOLD, "yes"),
    (QUESTION, "法律依据：……\n结论：公司不能被要求支付二倍工资。\n怎么做：……", "no"),
    ("金融借款合同纠纷是否适用新民间借贷司法解释？", "您好，不适用。银行金融机构的纠纷不适用。", "no"),
    ("我使用了与他人的商标相似的标志，我就侵权了吗？", "使用近似的标志还不足以构成侵权，还应满足下列条件。", "no"),
    ("和职业放贷人签订的贷款合同有效吗？", "结论：该合同无效。", "no"),
    ("土地征收未经批准，足以导致协议无效吗？", "结论：不足以导致协议无效。", "no"),
    (QUESTION, "法律依据：劳动合同法第八十二条。", None),  # no explicit conclusion: unclear, never guessed
])
def test_the_rule_reads_explicit_conclusions(question, text, expected):
    assert is_yes_no(question)
    assert conclusion_polarity(text, question) == expected


def test_questions_that_ask_more_than_yes_or_no_are_not_yes_no():
    assert not is_yes_no("盗窃和抢夺有什么区别？") and not is_yes_no("如何鉴定合同是否存在虚假意思表示？")
    assert is_yes_no("Can my employer fire me without notice?") and not is_yes_no("How do I sue my employer?")
    assert asked_predicate("是否构成犯罪？") == "构成"


def test_a_run_scores_each_answer_resumes_and_refuses_other_settings(index, queries, tmp_path):
    from legalrag.evaluation.answers.run import AnswerBenchSetting, run_answers, summarise_answers

    qs = load_questions(queries)
    out = tmp_path / "run.jsonl"
    llm = ScriptedLLM([CITES_GOLD, CITES_OTHER])
    rows = run_answers(qs[:1], index, llm, AnswerBenchSetting.REFERENCE, out, config={"model": "scripted"})
    assert rows[0]["cites_gold"] and rows[0]["gold_retrieved"] and rows[0]["keyword_accuracy_written"] == 0.5
    assert rows[0]["keyword_accuracy"] >= 0.5  # the quoted basis is read too
    assert rows[0]["first_cited_gold"] and rows[0]["basis"] and rows[0]["fallback"] is None
    assert rows[0]["yes_no"] == {"lawyer": "yes", "response": "yes", "agrees": True}
    assert set(rows[0]["retrieved"]) == {"13578", "34848"}  # the gold, and only the gold, reached the model
    rows = run_answers(qs, index, llm, AnswerBenchSetting.REFERENCE, out, config={"model": "scripted"})
    assert llm.calls == 2 and [r["id"] for r in rows] == ["1", "2"]  # question 1 was not answered again
    assert rows[1]["keyword_accuracy_written"] == 0.0 and "yes_no" not in rows[1]
    s = summarise_answers(rows)
    assert s["n"] == 2 and s["keyword_accuracy_written"] == 0.25 and 0.0 <= s["fallback_share"] <= 1.0
    assert s["yes_no_questions"] == 1 and s["yes_no_agreement"] == 1.0
    # the share is read from the citation checker's marks (its own tests say when a citation is supported)
    assert s["answers_with_marks"] >= 1 and 0.0 <= s["supported_share"] <= 1.0  # a fallback has only quoted ones
    assert all(m in ("supported", "exists", "not_found", "repealed") for r in rows for m in r["marks"])
    with pytest.raises(InputError, match="other settings"):
        run_answers(qs, index, llm, AnswerBenchSetting.RETRIEVER, out, config={"model": "scripted"})


def test_the_cli_answers_as_ask_does_and_writes_rows_and_a_summary(index, queries, tmp_path):
    from legalrag.wiring import Root

    llm = ScriptedLLM([CITES_GOLD, CITES_OTHER])
    out, summary = tmp_path / "answers.jsonl", tmp_path / "summary.json"
    res = CliRunner().invoke(app, ["eval", "answers", "--queries", str(queries), "--index", str(index.path),
                                   "--out", str(out), "-o", f"summary={summary}", "--json", "--no-progress"],
                             obj=Root(llm=llm))
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["config"]["setting"] == "retriever" and len(rows) == 3
    first = rows[1]
    assert "13578" in first["retrieved"] and first["cites_gold"] and first["outcome"] == "answered"
    saved = json.loads(summary.read_text(encoding="utf-8"))
    assert saved["n"] == 2 and saved["cites_gold"] >= 0.5 and saved["setting"] == "retriever"
    assert saved["first_cited_gold"] is not None and saved["end_s_median"] is not None


def test_the_cli_takes_k_and_the_evidence_budget_as_ask_does(index, queries, tmp_path):
    from legalrag.wiring import Root

    prompts = {}
    for budget in ("100", "0"):
        llm = ScriptedLLM([CITES_GOLD], prompt_tokens=123)
        out = tmp_path / f"answers-{budget}.jsonl"
        res = CliRunner().invoke(app, ["eval", "answers", "--queries", str(queries), "--index", str(index.path),
                                       "--out", str(out), "--limit", "1", "-o", "k=2", "-o", f"evidence_tokens={budget}",
                                       "--json", "--no-progress"], obj=Root(llm=llm))
        assert res.exit_code == 0, res.output
        rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
        # the run's settings are recorded (0 = whole articles, as for `ask`), and k bounds what was retrieved
        assert rows[0]["config"]["answer_settings"]["k"] == 2
        assert rows[0]["config"]["answer_settings"]["evidence_tokens"] == (None if budget == "0" else 100)
        assert len(rows[1]["retrieved"]) == 2 and rows[1]["prompt_tokens"] == 123
        prompts[budget] = llm.last_prompt()
    # with a budget the model reads the quoted basis; with 0, whole articles (as before the basis)
    assert "法律依据（法条原文）" in prompts["100"] and "法律依据（法条原文）" not in prompts["0"]


@pytest.mark.llm
def test_the_yes_no_judge_works_over_an_openai_compatible_endpoint(small_llm, monkeypatch):
    from support.http_app import serve_app

    from legalrag.evaluation.answers.judge import judge_yes_no
    from legalrag.llm.openai_compat import OpenAICompatLLM
    from legalrag.llm.serve import create_llm_app

    with serve_app(create_llm_app(small_llm, model_name="judge", api_key="k3y")) as url:
        monkeypatch.setenv("LEGALRAG_TEST_KEY", "k3y")
        client = OpenAICompatLLM(url, "judge", api_key_env="LEGALRAG_TEST_KEY", max_retries=0)
        j = judge_yes_no(client, QUESTION, LAWYER, "结论：可以，公司应当每月支付二倍工资。")
    assert not j.failed, j.error
    assert j.lawyer in ("yes", "no", None) and j.response in ("yes", "no", None)  # parsed (the 0.5B is no
    # reliable judge: how far a judge agrees with hand labels is measured in bench/, not here)
    direct = judge_yes_no(small_llm, QUESTION, LAWYER, "结论：可以，公司应当每月支付二倍工资。")
    assert (direct.lawyer, direct.response) == (j.lawyer, j.response)  # the same model, served or embedded
