"""An answer as of a past day: the citation resolves to the text in force that day and carries its currency mark
beside the support mark; where a law's oldest version held answered for an earlier day, a note says so. Over an
index of the fixture's versions (BM25), with a scripted model citing 《公司法》第四条 (the 2018 law's article on
registered capital; the 2023 law moved it to 第五条)."""

from __future__ import annotations

import pytest

from legalrag.answer.question import answer_question
from legalrag.laws.reader import read_folder
from legalrag.laws.versions import build_library
from legalrag.national_versions import version_documents
from legalrag.retrieval.dated import dated
from legalrag.serialize import answer_notes, answer_to_dict
from legalrag.testing import ScriptedLLM
from support.paths import REPO

MINI = REPO / "tests" / "data" / "laws-2025-mini" / "good"
QUESTION = "有限责任公司的注册资本是什么？"
REPLY = "结论：注册资本为全体股东认缴的出资额。依据《中华人民共和国公司法》第四条。"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from legalrag.retrieval.index import build_index, open_index

    lib = build_library(read_folder(MINI), repeal_table=None)
    out = tmp_path_factory.mktemp("answer-as-of") / "idx"
    build_index(out, list(version_documents(lib)), retrievers=("bm25",), lang="zh")
    return open_index(out), lib


def ask(index, lib, day):
    return answer_question(QUESTION, dated(index, day), ScriptedLLM([REPLY]), style="brief", versions=lambda: lib)


def test_a_past_day_resolves_to_that_days_text_and_marks_its_currency(setup):
    index, lib = setup
    answer = ask(index, lib, "2022-05-01")
    (c,) = [c for c in answer.citations if "第四条" in (c.canonical or c.text)]
    assert c.resolved and c.document_id == "公司法第四条@2018-10-26"
    assert c.currency["status"] == "amended" and c.currency["new_article"] == "5"
    assert c.currency["label"] == "amended 2023-12-29" and c.currency["as_of"] == "2022-05-01"
    assert answer_to_dict(answer)["citations"][0]["currency"]["label"] == "amended 2023-12-29"
    assert not any("no version of 公司法" in n for n in answer_notes(answer))  # the 2018 text was in force then


def test_today_needs_no_currency_and_a_day_before_the_oldest_version_says_so(setup):
    index, lib = setup
    today = ask(index, lib, None)
    assert all(c.currency is None for c in today.citations)  # the law in force: nothing to mark
    assert all(c.document_id != "公司法第四条@2018-10-26" for c in today.citations)
    early = ask(index, lib, "2000-01-01")  # 公司法 was adopted in 1993; the oldest text held is of 2018
    assert "no version of 公司法 held for 2000-01-01; the oldest held is 2018-10-26 (in force from 2018-10-26)" \
        in answer_notes(early)
