"""What a person reads of a citation's currency: the whole note of each status, the dict the API returns, the
short labels, the diff's cut, and how a checked citation's text is split into law and article."""

from __future__ import annotations

import pytest
from support.paths import REPO

from legalrag.citecheck.currency import (
    Currency,
    citation_currency,
    currency,
    currency_to_dict,
    short_diff,
    split_citation,
)
from legalrag.laws.reader import read_folder
from legalrag.laws.versions import build_library
from legalrag.types import Citation

MINI = REPO / "tests" / "data" / "laws-2025-mini" / "good"
TODAY = "2025-04-19"


@pytest.fixture(scope="module")
def lib():
    return build_library(read_folder(MINI), repeal_table=None)


def test_the_note_of_a_renumbered_article_and_its_dict(lib):
    c = currency(lib, "民事诉讼法", "2", "2022-01-01", today=TODAY)
    note = ("民事诉讼法第二条 (as of 2022-01-01, version 2021-12-24) renumbered by the version of 2023-09-01 "
            "(in force from 2024-01-01): now 第三条")
    assert c.describe() == note
    assert currency_to_dict(c) == {
        "status": "renumbered", "label": "renumbered 2023-09-01", "law": "民事诉讼法", "article": "2",
        "as_of": "2022-01-01", "dated": True, "cited_version": "2021-12-24", "current_version": "2023-09-01",
        "changed_on": "2023-09-01", "in_force_from": "2024-01-01", "new_article": "3", "diff": "",
        "text_now": "本法自公布之日起施行，《中华人民共和国民事诉讼法（试行）》同时废止。\n", "successor": "", "note": note}
    assert c.to_dict() == currency_to_dict(c) and currency_to_dict(None) is None


def test_the_note_of_an_amended_article_gives_the_diff_and_the_text_now_cut_at_120(lib):
    c = currency(lib, "中华人民共和国公司法", "4", "2022-05-01", today=TODAY)
    head, diff, now = c.describe().split("; ", 2)
    assert head == ("公司法第四条 (as of 2022-05-01, version 2018-10-26) amended by the version of 2023-12-29 "
                    "(in force from 2024-07-01): now 第五条")
    assert diff == c.diff == short_diff(c.text_then, c.text_now)
    reads = " ".join(c.text_now.split())
    assert now == f"now reads 「{reads[:119]}…」" and len(reads) > 120
    gone = currency(lib, "公司法", "3", "2022-01-01", today=TODAY)
    assert gone.describe() == ("公司法第三条 (as of 2022-01-01, version 2018-10-26) amended by the version of "
                               "2023-12-29 (in force from 2024-07-01): no counterpart in the version in force")


def test_the_notes_of_current_repealed_and_unknown(lib):
    assert currency(lib, "民事诉讼法", "1", "2022-01-01", today=TODAY).describe() == (
        "民事诉讼法第一条 (as of 2022-01-01): the version in force (2023-09-01) has the same text")
    assert currency(lib, "民事诉讼法", "1", None, today=TODAY).describe() == (
        "民事诉讼法第一条 (undated, read as of today (2025-04-19)): the version in force (2023-09-01) has the same "
        "text; 民事诉讼法 has versions of 2021-12-24, 2023-09-01: a text written before 2024-01-01 means an older "
        "one (give its date: --as-of)")
    rep = currency(lib, "印花税暂行条例", "1", "2020-01-01", today=TODAY)
    assert (rep.cited_version, rep.current_version) == ("2011-01-08", None)
    assert rep.describe() == ("印花税暂行条例 (as of 2020-01-01) is repealed; repealed on 2022-07-01 by 印花税法 "
                              "(source: 经济法/印花税法(2021-06-10).md 第二条)")
    assert currency(lib, "不存在法", "1", today=TODAY).describe() == "no versions held of 不存在法"
    missing = currency(lib, "公司法", "133-1", "2022-01-01", today=TODAY)
    assert missing.describe() == "公司法 (2018-10-26) has no 第一百三十三条之一"
    assert (missing.cited_version, missing.current_version) == ("2018-10-26", "2023-12-29")


def test_a_law_with_one_version_read_undated_has_no_note(lib):
    c = currency(lib, "印花税法", "1", None, today=TODAY)
    assert c.status == "current" and c.note == "" and not c.describe().endswith("--as-of)")


def test_the_labels_without_a_date_or_a_successor():
    base = {"law": "公司法", "article": "1", "as_of": TODAY, "dated": True}
    assert Currency("amended", **base).label == "amended"
    assert Currency("renumbered", **base).label == "renumbered"
    assert Currency("repealed", **base).label == "repealed"
    assert Currency("current", changed_on="2023-12-29", **base).label == "current"


def test_the_diff_cuts_long_pieces_and_counts_the_changes_left_out():
    assert short_diff("甲" * 50 + "乙", "丙乙") == "-" + "甲" * 39 + "… +丙"
    assert short_diff("一二三四五六七八九十", "一A三B五C七D九E") == "-二 +A -四 +B -六 +C (and 4 more changes)"
    assert short_diff("一二三四五六七八九十", "一A三B五C七D九E", chunks=2) == "-二 +A -四 +B (and 6 more changes)"
    assert short_diff("ab" + "c" * 10, "ab", width=5) == "-cccc…"
    assert short_diff("一二三", "一A三B五C", chunks=3) == "-二 +A +B五C"


@pytest.mark.parametrize("text, parsed", [
    ("《中华人民共和国公司法》第二十六条", ("中华人民共和国公司法", "26")),
    ("公司法第二十六条第二款", ("公司法", "26")),
    ("公司法第二十六条第一款第三项", ("公司法", "26")),
    ("刑法第一百三十三条之一", ("刑法", "133-1")),
    ("公 司 法 第 四 条", ("公司法", "4")),
    ("第二十六条", None),
    ("公司法", None),
])
def test_a_citation_is_split_into_its_law_and_article(text, parsed):
    assert split_citation(text) == parsed


def test_a_checked_citation_gets_its_currency_from_its_canonical_form(lib):
    cite = Citation("公司法第四条", canonical="《中华人民共和国公司法》第四条")
    assert citation_currency(lib, cite, "2022-05-01", today=TODAY).new_article == "5"
    assert citation_currency(lib, Citation("民事诉讼法第二条"), "2022-01-01", today=TODAY).status == "renumbered"
    assert citation_currency(None, cite) is None
    assert citation_currency(lib, Citation("Art. 100 BGG")) is None
