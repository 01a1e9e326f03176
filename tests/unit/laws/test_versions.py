"""Versions, intervals in force, supersession, repeal and as-of selection, on the fixture files."""

from __future__ import annotations

import pytest

from legalrag.errors import InputError
from legalrag.laws.reader import read_folder
from legalrag.laws.versions import add_snapshot, build_library
from support.paths import REPO

MINI = REPO / "tests" / "data" / "laws-2025-mini"


@pytest.fixture(scope="module")
def lib():
    return build_library(read_folder(MINI / "good"), repeal_table=None)


def test_a_newer_version_supersedes_the_older_from_its_effective_date(lib):
    old, new = lib.law("《中华人民共和国公司法》").versions
    assert (old.version, old.in_force_until, old.ended_by) == ("2018-10-26", "2024-07-01", "superseded")
    assert (new.version, new.effective, new.effective_source, new.in_force_until) == \
        ("2023-12-29", "2024-07-01", "last_article", None)
    law = lib.law("公司法")
    assert law.as_of("2020-01-01").version is old
    assert law.as_of("2024-03-01").version is old  # promulgated, not yet in force
    assert law.as_of("2024-07-01").version is new


def test_the_table_gives_dates_the_texts_do_not_state(lib):
    old, new = lib.law("民事诉讼法").versions
    assert (old.effective_source, old.in_force_from) == ("unknown", "2021-12-24")  # 自公布之日起 of 1991
    assert (new.effective, new.effective_source) == ("2024-01-01", "table")
    assert lib.law("中华人民共和国刑法").latest.in_force_from == "2024-03-01"


def test_formatting_only_duplicates_are_one_version(lib):
    law = lib.law("最高人民法院关于适用《民事诉讼法》的解释")
    assert len(law.versions) == 1
    v = law.versions[0]
    assert v.version == "2022-04-01" and v.merged == ("司法解释/最高人民法院关于适用《民事诉讼法》的解释(2022-04-02).md",)
    assert (v.effective, v.effective_source) == ("2022-04-10", "header")


def test_the_books_of_one_code_are_one_version(lib):
    (v,) = lib.law("民法典").versions
    assert [a.number for a in v.articles] == ["1", "2", "205"]
    assert v.files == ("民法典/总则.md", "民法典/物权编.md")
    assert v.in_force_from == "2021-01-01" and v.effective_source == "header"


def test_a_repeal_clause_ends_a_law(lib):
    law = lib.law("印花税暂行条例")
    assert law.repealed.by == "印花税法" and law.repealed.on == "2022-07-01"
    assert law.latest.in_force_until == "2022-07-01" and law.latest.ended_by == "repealed"
    assert "经济法/印花税法(2021-06-10).md 第二条" == law.repealed.source
    assert law.as_of("2021-01-01").note == ""
    assert "repealed on 2022-07-01" in law.as_of("2023-01-01").note
    assert "印花税暂行条例" not in {v.title for v in lib.in_force("2023-01-01")}
    assert lib.law("民事诉讼法").repealed is None  # 民事诉讼法（试行） is not held: nothing to end


def test_before_the_oldest_version_the_oldest_answers_and_says_so(lib):
    sel = lib.law("公司法").as_of("2000-01-01")
    assert sel.version.version == "2018-10-26"
    assert sel.note.startswith("no version held for 2000-01-01; the oldest held is 2018-10-26")


@pytest.mark.parametrize("day, message", [("1948-12-31", "before 1949-10-01"), ("2024-13-01", "not a date"),
                                          ("yesterday", "not a date")])
def test_dates_before_1949_or_not_dates_are_refused(lib, day, message):
    with pytest.raises(InputError, match=message):
        lib.law("公司法").as_of(day)


def test_a_future_date_selects_what_will_be_in_force_on_the_law_held(lib):
    assert lib.law("公司法").as_of("2030-01-01").version.version == "2023-12-29"


def test_in_force_lists_one_version_a_law(lib):
    titles = [v.title for v in lib.in_force("2023-01-01")]
    assert len(titles) == len(set(titles))
    assert "中华人民共和国公司法" not in titles and "公司法" in titles


def test_counts(lib):
    c = lib.counts()
    assert c["superseded_versions"] == 2 and c["repealed_laws"] == 1 and c["merged_duplicates"] == 1
    assert c["effective_source"]["table"] == 2
    assert c["problems"] == {"no_articles": 1}


def test_same_date_two_folders_and_dates_going_backwards_are_reported():
    lib = build_library(read_folder(MINI / "bad"), repeal_table=None)
    kinds = {(p.kind, p.path) for p in lib.problems}
    assert ("two_folders", "行政法规/同日两版(2020-01-01).md") in kinds
    assert ("same_date", "行政法/同日两版(2020-01-01).md") in kinds or \
        ("same_date", "行政法/同日两版 (2020-01-01).md") in kinds
    assert ("dates_backwards", "行政法/倒退(2020-01-01).md") in kinds
    assert len(lib.law("同日两版").versions) == 1  # the first file is kept, the others reported


def test_an_older_snapshot_adds_the_criminal_law_before_its_amendment(lib):
    older = [{"name": "中华人民共和国刑法第一百六十五条", "content": "国有公司、企业的董事、经理利用职务便利，"
              "自己经营或者为他人经营与其所任职公司、企业同类的营业，获取非法利益，数额巨大的，处三年以下有期徒刑或者拘役。\n"},
             {"name": "中华人民共和国刑法第四百五十二条", "content": "本法自1997年10月1日起施行。\n"}]
    both = add_snapshot(lib, older, "2023-06-05", titles=["中华人民共和国刑法"])
    law = both.law("刑法")
    assert [v.version for v in law.versions] == ["2020-12-26", "2023-12-29"]
    assert law.versions[0].in_force_from == "2021-03-01" and law.versions[0].in_force_until == "2024-03-01"
    assert law.as_of("2023-06-01").version.version == "2020-12-26"
    assert add_snapshot(lib, older, "2023-06-05", titles=["公司法"]).law("刑法").versions == lib.law("刑法").versions


def test_a_law_whose_first_text_took_effect_after_the_day_was_not_yet_in_force(lib):
    code = lib.law("民法典")
    assert code.enacted == "2020-05-28" and code.original_held
    sel = code.as_of("2020-06-01")
    assert not sel.in_force
    assert sel.note.startswith("中华人民共和国民法典 was not yet in force on 2020-06-01 (adopted 2020-05-28, in force "
                               "from 2021-01-01)")
    assert code.as_of("2021-01-01").in_force and not code.as_of("2021-01-01").note
    company = lib.law("公司法")  # adopted 1993; the oldest text held is the 2018 one
    assert company.original_held is False and company.as_of("2000-01-01").in_force
    assert company.in_force_before_held("2000-01-01") is True and company.in_force_before_held("1990-01-01") is False
    assert not company.as_of("1990-01-01").in_force
