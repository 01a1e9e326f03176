"""`legalrag chat`: a two-turn consultation through the CLI with the real embedded 0.5B model."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from legalrag.cli import app
from legalrag.types import Document
from legalrag.wiring import Root

DOCS = [
    Document("1", "夫妻一方要求离婚的，可以直接向人民法院提起离婚诉讼。实施家庭暴力的，调解无效，应当准予离婚。",
             "中华人民共和国民法典第一千零七十九条", metadata={"law": "中华人民共和国民法典", "article": "1079",
                                                        "article_label": "第一千零七十九条"}),
    Document("2", "离婚后，不满两周岁的子女，以由母亲直接抚养为原则。已满两周岁的子女，按照最有利于未成年子女的原则判决。",
             "中华人民共和国民法典第一千零八十四条", metadata={"law": "中华人民共和国民法典", "article": "1084",
                                                        "article_label": "第一千零八十四条"}),
    Document("3", "盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制。", "中华人民共和国刑法第二百六十四条",
             metadata={"law": "中华人民共和国刑法", "article": "264", "article_label": "第二百六十四条"}),
]


@pytest.fixture
def index_dir(tmp_path):
    from legalrag.retrieval.index import build_index

    build_index(tmp_path / "idx", DOCS, retrievers=["bm25"], lang="zh")
    return tmp_path / "idx"


def test_unknown_processor_is_refused_before_any_model_loads(index_dir):
    res = CliRunner().invoke(app, ["chat", "--index", str(index_dir), "--processor", "summary"], input="/exit\n")
    assert res.exit_code == 2 and "--processor" in res.output and "'summary' is not one of" in res.output


def test_an_endpoint_model_needs_the_name_it_serves(index_dir):
    res = CliRunner().invoke(app, ["chat", "--index", str(index_dir), "--model", "http://127.0.0.1:9"],
                             input="/exit\n")
    assert res.exit_code != 0 and "--model http://127.0.0.1:9#NAME" in str(res.exception)



@pytest.mark.llm
def test_two_turn_consultation(index_dir, llm):
    # The already loaded real 0.5B model is handed to the command through the composition root.
    res = CliRunner().invoke(app, ["chat", "--index", str(index_dir), "--k", "2", "--processor", "all_questions",
                                   "--max-tokens", "60"],
                             input="老公打我，我想离婚。\n\n那孩子归谁？\n/exit\n", obj=Root(llm=llm))
    assert res.exit_code == 0, res.output
    assert res.output.count("Sources:") == 2
    # the second query carries the first question (all_questions), so the divorce article is retrieved again
    assert "[query] 老公打我，我想离婚。 那孩子归谁？" in res.output
    assert "第一千零八十四条" in res.output.split("[query]")[1]


def test_evidence_budget_reaches_the_prompt_and_a_too_small_one_is_refused(index_dir):
    from legalrag.testing import ScriptedLLM

    def turn(*options):
        llm = ScriptedLLM(["依据《中华人民共和国民法典》第一千零七十九条，对方实施家庭暴力，调解无效的，法院应当准予离婚。"])
        res = CliRunner().invoke(app, ["chat", "--index", str(index_dir), "--k", "2", "--processor", "last", *options],
                                 input="遭受家庭暴力，能离婚吗？\n/exit\n", obj=Root(llm=llm))
        return res, llm.last_prompt()

    res, whole = turn("--evidence-tokens", "0")  # 0: whole articles, as before
    assert res.exit_code == 0, res.output
    assert DOCS[0].text in whole
    res, cut = turn("--evidence-tokens", "50")
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if "中华人民共和国民法典第一千零七十九条 -> 1" in x)
    assert re.match(r"\s*(✓ SUPPORTED|\? EXISTS)", line), line  # checked for support; ✓ only when supported
    assert res.output.count("法院应当准予离婚") == 1  # streamed as it is generated, not printed a second time
    # with a budget the model is given the quoted legal basis (a short article is quoted whole), not the
    # whole-article evidence block, and the prompt is shorter for it
    assert len(cut) < len(whole) and "法律依据（法条原文）" in cut and "法律依据（法条原文）" not in whole
    assert f"《中华人民共和国民法典》第一千零七十九条\n{DOCS[0].text}" in cut
    res, _ = turn("--evidence-tokens", "5")
    assert res.exit_code != 0 and "--evidence-tokens" in str(res.exception) + res.output
    res = CliRunner().invoke(app, ["chat", "--index", str(index_dir), "--evidence-tokens", "-1"], input="/exit\n")
    assert res.exit_code == 2 and "--evidence-tokens" in res.output
