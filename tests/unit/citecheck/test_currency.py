"""The "amended" currency mark: version cited vs version in force, the short diff and the new number."""

from __future__ import annotations

import pytest

from legalrag.citecheck.currency import currency, short_diff
from legalrag.laws.reader import read_folder
from legalrag.laws.versions import build_library
from support.paths import REPO

MINI = REPO / "tests" / "data" / "laws-2025-mini" / "good"
TODAY = "2025-04-19"


@pytest.fixture(scope="module")
def lib():
    return build_library(read_folder(MINI), repeal_table=None)


def test_a_citation_dated_before_the_revision_is_amended_with_its_new_number_and_text(lib):
    c = currency(lib, "中华人民共和国公司法", "4", "2022-05-01", today=TODAY)
    assert c.status == "amended" and c.label == "amended 2023-12-29"
    assert (c.cited_version, c.current_version, c.new_article, c.in_force_from) == \
        ("2018-10-26", "2023-12-29", "5", "2024-07-01")
    assert "五年内缴足" in c.text_now and "五年内缴足" in c.diff and c.diff.startswith("+")
    assert "now 第五条" in c.describe() and "as of 2022-05-01" in c.describe()


def test_an_undated_citation_is_read_as_of_today_and_says_so(lib):
    c = currency(lib, "公司法", "3", None, today=TODAY)  # the 2023 law's own 第三条: revoking resolutions
    assert c.status == "current" and not c.dated and c.as_of == TODAY
    assert "undated, read as of today (2025-04-19)" in c.describe()


def test_unchanged_text_is_current_and_a_deleted_article_has_no_new_number(lib):
    assert currency(lib, "公司法", "1", "2022-01-01", today=TODAY).status == "amended"  # its wording changed
    assert currency(lib, "民事诉讼法", "1", "2022-01-01", today=TODAY).status == "current"
    gone = currency(lib, "公司法", "3", "2022-01-01", today=TODAY)
    assert gone.status == "amended" and gone.new_article is None
    assert "no counterpart" in gone.describe()


def test_a_renumbered_article_with_the_same_text(lib):
    c = currency(lib, "民事诉讼法", "2", "2022-01-01", today=TODAY)  # 本法自公布之日起施行… moved from 2 to 3
    assert (c.status, c.new_article, c.label) == ("renumbered", "3", "renumbered 2023-09-01")


def test_repealed_stays_a_currency_status_with_its_successor(lib):
    c = currency(lib, "印花税暂行条例", "1", "2020-01-01", today=TODAY)
    assert c.status == "repealed" and c.successor == "印花税法" and c.label == "repealed → 印花税法"


def test_unknown_law_or_article(lib):
    assert currency(lib, "不存在法", "1", today=TODAY).status == "unknown"
    assert currency(lib, "公司法", "99", "2022-01-01", today=TODAY).status == "unknown"


def test_short_diff_names_what_was_removed_and_added():
    assert short_diff("甲乙丙", "甲丁丙") == "-乙 +丁"
    assert short_diff("同样", "同样") == ""


def test_a_law_not_yet_in_force_on_the_day_cited_says_so(lib):
    c = currency(lib, "民法典", "1", "2020-06-01", today=TODAY)  # adopted 2020-05-28, in force from 2021-01-01
    assert c.status == "not_in_force" and c.label == "not yet in force on 2020-06-01"
    assert c.in_force_from == "2021-01-01" and "adopted 2020-05-28" in c.describe()
    assert currency(lib, "民法典", "1", "2021-06-01", today=TODAY).status == "current"
    assert currency(lib, "公司法", "4", "2000-01-01", today=TODAY).status == "amended"  # an older text was in force
