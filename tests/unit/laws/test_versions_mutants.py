"""Versions and their intervals in force, pinned at the boundaries a single example let a wrong value pass: the
day a version takes effect and the day before, the effective date's source (header, last article, promulgation,
table, unknown) at equality, the books of a code dated by the last, formatting-only duplicates, the problems a
person is told (undated files, two texts of one date, dates going backwards), what a repeal clause
"本法自…起施行。《X》…同时废止" and the repealed-laws table end (and what they must not), the older versions a
snapshot adds, the notes of ``as_of`` and ``held_notes``, the errors naming the day or the file, ``title_key``.

Every library is built inside its test from tiny hand-written texts (no shared fixture: each test reads what it
checks)."""

from __future__ import annotations

import json
import locale
from datetime import date, timedelta
from types import SimpleNamespace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from legalrag.errors import InputError
from legalrag.laws.reader import Article, Problem, read_folder
from legalrag.laws.select import both, has_versions, held_notes, in_force_filter
from legalrag.laws.store import library_from_records
from legalrag.laws.versions import (EARLIEST, Law, Repealed, Version, add_snapshot, build_library, check_day,
                                    title_key)
from legalrag.types import Document

from unit.laws.test_store import doc  # a document of 公司法 with an interval


def write(root, rel, *articles, history=(), title=None):
    """A law file in the dated-Markdown format: ``# title``, history lines, then one article a paragraph."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    stem = path.stem.split("(")[0].strip()
    head = [f"# {title or '中华人民共和国' + stem}", ""] + [f"{h}\n" for h in history]
    path.write_text("\n".join(head + ["<!-- INFO END -->", ""] + [f"{a}\n" for a in articles]), encoding="utf-8")
    return path


def build(root, table=None, **kw):
    return build_library(read_folder(root), repeal_table=table, **kw)


def interval(v):
    return v.in_force_from, v.in_force_until, v.ended_by


# --- intervals and as_of -----------------------------------------------------------------------------------------

def three_versions(root):
    write(root, "法律/某法(2010-01-01).md", "第一条 甲。", "第二条 本法自2010年3月1日起施行。",
          history=("2005年1月1日 通过", "2010年1月1日 修正"))
    write(root, "法律/某法(2015-01-01).md", "第一条 乙。", "第二条 本法自2015年6月1日起施行。")
    write(root, "法律/某法(2020-01-01).md", "第一条 丙。", "第二条 本法自2020年7月1日起施行。")
    return build(root).law("某法")


def test_each_version_is_in_force_until_the_next_takes_effect(tmp_path):
    law = three_versions(tmp_path)
    assert [interval(v) for v in law.versions] == [("2010-03-01", "2015-06-01", "superseded"),
                                                   ("2015-06-01", "2020-07-01", "superseded"),
                                                   ("2020-07-01", None, "")]
    assert law.as_of("2015-05-31").version is law.versions[0]
    assert law.as_of("2015-06-01").version is law.versions[1]
    assert law.as_of("2020-06-30").version is law.versions[1]
    assert law.as_of("2020-07-01").version is law.versions[2] and law.as_of("2020-07-01").note == ""


def test_the_version_answering_a_day_is_the_one_whose_interval_holds_it(tmp_path):
    law = three_versions(tmp_path)

    @settings(max_examples=150, deadline=None)
    @given(st.dates(min_value=date(1949, 10, 1), max_value=date(2035, 12, 31)))
    @example(date(2010, 3, 1))
    @example(date(2010, 2, 28))
    def check(d):
        day = d.isoformat()
        sel = law.as_of(day)
        holding = [v for v in law.versions if v.in_force_from <= day and (v.in_force_until is None
                                                                           or day < v.in_force_until)]
        if holding:
            assert [sel.version] == holding and sel.note == "" and sel.in_force
        else:  # before the oldest held took effect
            assert day < "2010-03-01" and sel.version is law.versions[0] and sel.note

    check()


def test_before_the_oldest_held_the_note_says_whether_the_law_was_then_in_force(tmp_path):
    law = three_versions(tmp_path)  # adopted 2005, the oldest text held is the 2010 revision
    assert law.enacted == "2005-01-01" and law.original_held is False
    sel = law.as_of("2007-01-01")
    assert sel.in_force and sel.version is law.versions[0]
    assert sel.note == "no version held for 2007-01-01; the oldest held is 2010-01-01 (in force from 2010-03-01)"
    sel = law.as_of("2004-12-31")
    assert sel.in_force is False and sel.version is law.versions[0]
    assert sel.note == ("某法 was not yet in force on 2004-12-31 (adopted 2005-01-01, in force from "
                        "2010-03-01); its oldest text held (2010-01-01) is shown")
    assert law.as_of("2005-01-01").in_force  # adopted that day: the oldest held answers for it


def test_a_law_repealed_the_day_its_version_took_effect_reads_as_repealed_that_day():
    v = Version("某法", "2020-01-01", "2020-01-01", "header", ("某法.md",), (Article("1", "第一条", "甲。\n"),),
                in_force_from="2020-01-01", in_force_until="2020-01-01", ended_by="repealed")
    law = Law("某法", (v,), Repealed("某法", "新法", "2020-01-01", "新法.md 第二条"), enacted="2020-01-01")
    sel = law.as_of("2020-01-01")
    assert sel.version is v and sel.in_force
    assert sel.note == "某法 was repealed on 2020-01-01 by 新法; its last version (2020-01-01) is shown"


def test_a_single_undated_file_is_one_undated_version_answering_every_day(tmp_path):
    write(tmp_path, "法规/某条例.md", "第一条 甲。", "第二条 乙。")
    lib = build(tmp_path)
    (v,) = lib.law("某条例").versions
    assert (v.version, v.label, v.in_force_from, v.effective_source) == (None, "undated", None, "unknown")
    assert lib.law("某条例").as_of(EARLIEST).version is v and lib.law("某条例").as_of("2030-01-01").note == ""
    assert not lib.problems
    assert v.describe() == "某条例 (undated): effective date unknown; 2 articles"


def test_an_undated_file_beside_dated_versions_is_reported_and_left_out(tmp_path):
    write(tmp_path, "法规/某条例.md", "第一条 甲。")
    write(tmp_path, "法规/某条例(2020-01-01).md", "第一条 乙。")
    lib = build(tmp_path)
    assert [v.version for v in lib.law("某条例").versions] == ["2020-01-01"]
    assert lib.problems == (Problem("法规/某条例.md", 0, "bad_date", "no date in the file name nor in its history "
                                    "lines, beside dated versions of the same title; name it "
                                    "<title>(YYYY-MM-DD).md"),)


def test_versions_are_ordered_by_date_not_by_folder(tmp_path):
    write(tmp_path, "a/某法(2020-01-01).md", "第一条 新。")
    write(tmp_path, "b/某法(2010-01-01).md", "第一条 旧。")
    law = build(tmp_path).law("某法")
    assert [(v.version, v.folder) for v in law.versions] == [("2010-01-01", "b"), ("2020-01-01", "a")]
    assert law.as_of("2015-01-01").version.articles[0].text == "旧。\n"
    assert law.latest.full_title == "中华人民共和国某法" and law.latest.title == "某法"


# --- the effective date and its source -----------------------------------------------------------------------------

EFFECTIVE = {
    "header line on the version date": ("某法(2020-01-01).md", ("第一条 甲。",), ("2020年1月1日 通过", "2020年1月1日 施行"),
                                        ("2020-01-01", "header")),
    "an enactment's header line older than the revision": ("某法(2010-01-01).md", ("第一条 甲。",),
                                                           ("1995年1月1日 施行", "2010年1月1日 修正"), (None, "unknown")),
    "last article on the version date": ("某法(2020-01-01).md", ("第一条 甲。", "第二条 本法自2020年1月1日起施行。"), (),
                                         ("2020-01-01", "last_article")),
    "a last article before the version date": ("某法(2020-01-01).md", ("第一条 甲。", "第二条 本法自2019年1月1日起施行。"),
                                               (), (None, "unknown")),
    "on promulgation, never revised": ("某法(2020-01-01).md", ("第一条 甲。", "第二条 本法自公布之日起施行。"),
                                       ("2020年1月1日 通过",), ("2020-01-01", "last_article_promulgation")),
    "on promulgation, no history": ("某法(2020-01-01).md", ("第一条 甲。", "第二条 本法自公布之日起施行。"), (),
                                    ("2020-01-01", "last_article_promulgation")),
    "on promulgation, kept by a revision": ("某法(2020-01-01).md", ("第一条 甲。", "第二条 本法自公布之日起施行。"),
                                            ("2010年1月1日 通过", "2020年1月1日 修正"), (None, "unknown")),
    "nothing said, one history line": ("某法(2020-01-01).md", ("第一条 甲。",), ("2020年1月1日 通过",),
                                       (None, "unknown")),
    "the table": ("民事诉讼法(2023-09-01).md", ("第一条 甲。",), (), ("2024-01-01", "table")),
    "undated file, last article": ("某法.md", ("第一条 甲。", "第二条 本法自2020年1月1日起施行。"), (),
                                   ("2020-01-01", "last_article")),
}


@pytest.mark.parametrize("name", list(EFFECTIVE))
def test_the_effective_date_and_where_it_was_read(tmp_path, name):
    rel, articles, history, expected = EFFECTIVE[name]
    write(tmp_path, f"法律/{rel}", *articles, history=history)
    (law,) = build(tmp_path).laws.values()
    (v,) = law.versions
    assert (v.effective, v.effective_source) == expected
    assert v.in_force_from == (expected[0] or v.version)
    if expected[1] == "unknown":
        assert "(its version date: the effective date is not stated)" in v.describe()
    else:
        assert "not stated" not in v.describe()


def books(root, *dates):
    """The books of the 民法典 (one version), each with a header 施行 line when a date is given."""
    names = [("总则", 1), ("物权编", 205), ("合同编", 463)]
    for (name, first), day in zip(names, dates):
        y, m, d = day.split("-") if day else ("", "", "")
        history = ("2020年5月28日 通过",) + ((f"{int(y)}年{int(m)}月{int(d)}日 施行",) if day else ())
        write(root, f"民法典/{name}.md", f"第{first}条 甲{first}。", f"第{first + 1}条 乙{first}。", history=history)
    return build(root).law("民法典").versions


def test_a_code_in_books_is_one_version_dated_by_its_last_book(tmp_path):
    (v,) = books(tmp_path, "2020-10-01", "2020-11-01", "2021-01-01")
    assert v.files == ("民法典/总则.md", "民法典/物权编.md", "民法典/合同编.md")
    assert [a.number for a in v.articles] == ["1", "2", "205", "206", "463", "464"]
    assert (v.effective, v.effective_source, v.in_force_from) == ("2021-01-01", "header", "2021-01-01")


def test_of_two_books_the_last_dates_the_code(tmp_path):
    (v,) = books(tmp_path, "2020-10-01", "2021-01-01")
    assert (v.effective, v.effective_source) == ("2021-01-01", "header")


def test_a_code_whose_last_book_states_no_date_takes_an_earlier_books(tmp_path):
    (v,) = books(tmp_path, "2020-10-01", None)
    assert (v.effective, v.effective_source) == ("2020-10-01", "header")


def test_a_code_whose_books_state_no_date_is_dated_by_its_version(tmp_path):
    (v,) = books(tmp_path, None, None)
    assert (v.effective, v.effective_source, v.in_force_from) == (None, "unknown", "2020-05-28")


def test_a_book_titled_as_the_table_lists_it_dates_a_code_whose_other_title_it_does_not(tmp_path):
    write(tmp_path, "法律/刑法(2023-12-29).md", "第一条 甲。", "第二条 乙。")
    write(tmp_path, "法律/中华人民共和国刑法(2023-12-29).md", "第三条 丙。")  # the table's title for this date
    (v,) = build(tmp_path).law("刑法").versions
    assert len(v.files) == 2 and (v.effective, v.effective_source) == ("2024-03-01", "table")


# --- duplicates and the problems reported --------------------------------------------------------------------------

def test_formatting_only_duplicates_are_merged_and_a_later_real_version_kept(tmp_path):
    write(tmp_path, "a/某法(2020-01-01).md", "第一条 甲，乙。")
    write(tmp_path, "b/某法(2020-01-01).md", "第一条 甲,乙。")  # same day, another folder, half-width comma
    write(tmp_path, "a/某法(2020-02-01).md", "第一条 甲， 乙。")  # a later date, a space more
    write(tmp_path, "a/某法(2021-01-01).md", "第一条 丙。")
    lib = build(tmp_path)
    law = lib.law("某法")
    assert [v.version for v in law.versions] == ["2020-01-01", "2021-01-01"]
    assert law.versions[0].merged == ("b/某法(2020-01-01).md", "a/某法(2020-02-01).md")
    assert law.versions[0].files == ("a/某法(2020-01-01).md",)
    assert lib.counts()["merged_duplicates"] == 2 and not lib.problems


def test_two_texts_of_one_date_are_reported_and_the_first_kept(tmp_path):
    write(tmp_path, "a/某法(2020-01-01).md", "第一条 甲。")
    write(tmp_path, "a/某法 (2020-01-01).md", "第一条 乙。")
    write(tmp_path, "b/某法(2020-01-01).md", "第一条 丙。")
    lib = build(tmp_path)
    (v,) = lib.law("某法").versions
    assert v.files == ("a/某法 (2020-01-01).md",) and v.articles[0].text == "乙。\n"
    kept = "a/某法 (2020-01-01).md"
    assert set(lib.problems) == {
        Problem("a/某法(2020-01-01).md", 0, "same_date", f"某法 (2020-01-01) is also in {kept} with a different "
                f"text; {kept} is kept: remove or re-date one of them"),
        Problem("b/某法(2020-01-01).md", 0, "two_folders", f"某法 (2020-01-01) is also in {kept} with a different "
                f"text; {kept} is kept: remove or re-date one of them")}


def test_a_version_taking_effect_before_the_older_one_is_reported_but_the_same_day_is_not(tmp_path):
    write(tmp_path, "a/某法(2010-01-01).md", "第一条 甲。", "第二条 本法自2014年1月1日起施行。")
    write(tmp_path, "a/某法(2011-01-01).md", "第一条 乙。", "第二条 本法自2014年1月1日起施行。")
    write(tmp_path, "a/某法(2013-01-01).md", "第一条 丙。", "第二条 本法自2013年6月1日起施行。")
    lib = build(tmp_path)
    assert lib.problems == (Problem("a/某法(2013-01-01).md", 0, "dates_backwards", "takes effect on 2013-06-01, "
                                    "before the older version 2011-01-01 (2014-01-01); check the dates"),)


# --- repeals -------------------------------------------------------------------------------------------------------

def old_and_new(root, clause="本法自2022年7月1日起施行。《中华人民共和国旧条例》同时废止。", *, old="旧条例(2011-01-08).md",
                new_history=()):
    write(root, f"行政法规/{old}", "第一条 旧。")
    write(root, "法律/新法(2021-06-10).md", "第一条 新。", f"第二条 {clause}", history=new_history)


def test_a_repeal_clause_ends_the_repealed_law_on_its_day(tmp_path):
    old_and_new(tmp_path)
    lib = build(tmp_path)
    law = lib.law("旧条例")
    assert law.repealed == Repealed("旧条例", "新法", "2022-07-01", "法律/新法(2021-06-10).md 第二条")
    assert interval(law.latest) == ("2011-01-08", "2022-07-01", "repealed")
    assert law.as_of("2022-06-30").note == "" and law.as_of("2022-06-30").version is law.latest
    assert law.as_of("2022-07-01").note == "旧条例 was repealed on 2022-07-01 by 新法; its last version (2011-01-08) is shown"
    assert "旧条例" not in {v.title for v in lib.in_force("2022-07-01")}
    assert "旧条例" in {v.title for v in lib.in_force("2022-06-30")}
    assert lib.law("新法").repealed is None and lib.counts()["repealed_laws"] == 1


def test_a_clause_naming_a_title_not_held_first_still_repeals_the_next(tmp_path):
    old_and_new(tmp_path, "本法自2022年7月1日起施行。《中华人民共和国新法（草案）》、《某暂行办法》和《旧条例》同时废止。")
    assert build(tmp_path).law("旧条例").repealed.on == "2022-07-01"


def test_a_clause_naming_its_own_title_first_still_repeals_the_next(tmp_path):
    old_and_new(tmp_path, "本法自2022年7月1日起施行。《新法》、《旧条例》同时废止。")
    lib = build(tmp_path)
    assert lib.law("新法").repealed is None and lib.law("旧条例").repealed.by == "新法"


@pytest.mark.parametrize("old, repealed", [("旧条例(2022-06-30).md", True), ("旧条例(2022-07-01).md", False),
                                           ("旧条例(2023-01-01).md", False)])
def test_a_version_of_the_repealed_title_dated_on_or_after_the_repeal_is_not_ended(tmp_path, old, repealed):
    old_and_new(tmp_path, old=old)
    law = build(tmp_path).law("旧条例")
    assert (law.repealed is not None) is repealed
    assert law.latest.in_force_until == ("2022-07-01" if repealed else None)


def test_a_repealed_titles_version_in_force_after_the_repeal_is_not_ended(tmp_path):
    write(tmp_path, "行政法规/旧条例(2021-12-01).md", "第一条 旧。", "第二条 本条例自2022年8月1日起施行。")
    write(tmp_path, "法律/新法(2021-06-10).md", "第一条 新。", "第二条 本法自2022年7月1日起施行。《旧条例》同时废止。")
    law = build(tmp_path).law("旧条例")
    assert law.repealed is None and interval(law.latest) == ("2022-08-01", None, "")


def test_a_clause_skipping_a_newer_title_still_repeals_the_next(tmp_path):
    write(tmp_path, "行政法规/甲条例(2023-01-01).md", "第一条 甲。")
    old_and_new(tmp_path, "本法自2022年7月1日起施行。《甲条例》、《旧条例》同时废止。")
    lib = build(tmp_path)
    assert lib.law("甲条例").repealed is None and lib.law("旧条例").repealed.on == "2022-07-01"


def test_a_clause_in_force_on_promulgation_repeals_on_the_day_the_law_took_effect(tmp_path):
    old_and_new(tmp_path, "本法自公布之日起施行。《旧条例》同时废止。", new_history=("2021年6月10日 通过", "2021年9月1日 施行"))
    lib = build(tmp_path)
    assert lib.law("新法").latest.effective == "2021-09-01"
    assert lib.law("旧条例").repealed.on == "2021-09-01"


def test_the_clauses_own_date_is_the_repeal_day_in_a_fourth_last_article_but_not_a_fifth(tmp_path):
    tail = ("第三条 丙。", "第四条 丁。", "第五条 戊。")
    write(tmp_path, "行政法规/旧条例(2011-01-08).md", "第一条 旧。")
    write(tmp_path, "法律/新法(2021-06-10).md", "第一条 新。", "第二条 本法自2022年7月1日起施行。《旧条例》同时废止。", *tail)
    lib = build(tmp_path)
    assert lib.law("新法").latest.effective is None  # the reader looks at the last three articles only
    assert lib.law("旧条例").repealed.on == "2022-07-01"
    write(tmp_path, "法律/新法(2021-06-10).md", "第一条 新。", "第二条 本法自2022年7月1日起施行。《旧条例》同时废止。", *tail,
          "第六条 己。")
    assert build(tmp_path).law("旧条例").repealed is None


def test_an_undated_repealed_law_is_ended_on_the_repeal_day(tmp_path):
    old_and_new(tmp_path, old="旧条例.md")
    law = build(tmp_path).law("旧条例")
    assert law.repealed.on == "2022-07-01" and interval(law.latest) == (None, "2022-07-01", "repealed")
    assert law.as_of("2000-01-01").note == ""
    assert law.as_of("2023-01-01").note == "旧条例 was repealed on 2022-07-01 by 新法; its last version (undated) is shown"


def test_a_repeal_on_the_day_the_last_version_takes_effect_does_not_end_it():
    recs = [{"name": "某法第一条", "content": "旧", "version": "2010-01-01"},
            {"name": "某法第一条", "content": "新", "version": "2020-01-01", "effective": "2020-06-01",
             "repealed_by": "新法", "repealed_on": "2020-06-01"}]
    law = library_from_records(enumerate(recs, 1)).law("某法")
    assert law.repealed.on == "2020-06-01" and interval(law.latest) == ("2020-06-01", None, "")
    recs[1]["repealed_on"] = "2020-06-02"
    law = library_from_records(enumerate(recs, 1)).law("某法")
    assert interval(law.latest) == ("2020-06-01", "2020-06-02", "repealed")


def table(tmp_path, *entries, raw=None):
    path = tmp_path / "repealed.json"
    path.write_text(raw if raw is not None else json.dumps({"laws": list(entries)}, ensure_ascii=False),
                    encoding="utf-8")
    return path


def entry(law, on, successor="新法", source="国务院令第1号"):
    e = {"law": law, "successor": successor, "source": source}
    if on is not None:
        e["repealed_on"] = on
    return e


def test_the_repealed_laws_table_ends_the_laws_it_lists(tmp_path):
    root = tmp_path / "laws"
    write(root, "a/甲条例(2010-01-01).md", "第一条 甲。")
    write(root, "a/乙条例(2010-01-01).md", "第一条 乙。", "第二条 本条例自2015年1月1日起施行。")  # in force after
    write(root, "a/丙条例(2010-01-01).md", "第一条 丙。")
    write(root, "a/丁条例(2012-01-01).md", "第一条 丁。")  # its version is the repeal day
    write(root, "a/戊条例(2011-01-01).md", "第一条 戊。")  # a newer version than the repeal
    write(root, "a/己条例.md", "第一条 己。")  # undated
    write(root, "a/庚条例(2010-01-01).md", "第一条 庚。")  # no date of repeal known
    t = table(tmp_path, entry("某未收录条例", "2011-01-01"), entry("中华人民共和国戊条例", "2010-06-01"),
              entry("中华人民共和国 甲条例", "2012-01-01", "甲法", "国务院令第2号"), entry("乙条例", "2012-01-01"),
              entry("丙条例", "2012-01-01"), entry("丁条例", "2012-01-01"), entry("己条例", "2012-01-01"),
              entry("庚条例", None))
    lib = build(root, t, snapshot="2025-01-01")
    assert lib.snapshot == "2025-01-01"
    assert lib.law("甲条例").repealed == Repealed("甲条例", "甲法", "2012-01-01", "repealed-laws table (国务院令第2号)")
    assert interval(lib.law("甲条例").latest) == ("2010-01-01", "2012-01-01", "repealed")
    assert lib.law("乙条例").repealed is None and lib.law("丁条例").repealed is None
    assert lib.law("戊条例").repealed is None
    assert lib.law("丙条例").repealed.on == "2012-01-01"
    assert lib.law("己条例").repealed.on == "2012-01-01" and lib.law("己条例").latest.in_force_until == "2012-01-01"
    assert lib.law("庚条例").repealed == Repealed("庚条例", "新法", None, "repealed-laws table (国务院令第1号)")
    assert interval(lib.law("庚条例").latest) == ("2010-01-01", None, "")
    assert lib.law("某未收录条例") is None


def test_a_repeal_clause_held_wins_over_the_table(tmp_path):
    root = tmp_path / "laws"
    old_and_new(root)
    t = table(tmp_path, entry("旧条例", "2023-01-01", "别的法"))
    assert build(root, t).law("旧条例").repealed.source == "法律/新法(2021-06-10).md 第二条"
    assert build(root, None).law("旧条例").repealed.on == "2022-07-01"


def test_the_table_is_read_as_utf8_whatever_the_locale(tmp_path):
    root = tmp_path / "laws"
    write(root, "a/甲条例(2010-01-01).md", "第一条 甲。")
    t = table(tmp_path, entry("甲条例", "2012-01-01", "甲法"))
    saved = locale.setlocale(locale.LC_CTYPE)
    try:
        locale.setlocale(locale.LC_CTYPE, "C")  # an ASCII locale: the table's Chinese must still be read
        law = build(root, t).law("甲条例")
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert law.repealed.by == "甲法"


def test_a_table_without_laws_or_missing_ends_nothing(tmp_path):
    root = tmp_path / "laws"
    write(root, "a/甲条例(2010-01-01).md", "第一条 甲。")
    assert build(root, table(tmp_path, raw="{}")).law("甲条例").repealed is None
    assert build(root, tmp_path / "absent.json").law("甲条例").repealed is None


def test_a_table_that_is_not_json_is_refused_naming_the_file(tmp_path):
    root = tmp_path / "laws"
    write(root, "a/甲条例(2010-01-01).md", "第一条 甲。")
    bad = table(tmp_path, raw='{"laws": [')
    with pytest.raises(InputError) as err:
        build(root, bad)
    assert err.value.path == str(bad)
    assert str(err.value).startswith(f"{bad}: not valid JSON (")


# --- a snapshot's older versions -----------------------------------------------------------------------------------

def snapshot_library(root):
    write(root, "法律/某法(2023-01-01).md", "第一条 新。", history=("2010年1月1日 通过", "2020年12月26日 修正",
                                                                 "2023年1月1日 修正"))
    write(root, "刑法/中华人民共和国刑法(2023-12-29).md", "第一条 刑新。",
          history=("1997年3月14日 修订", "2020年12月26日 修正", "2021年3月1日 施行", "2023年12月29日 修正"),
          title="中华人民共和国刑法")
    write(root, "法律/戊法(2022-01-01).md", "第一条 戊新。", history=("2015年1月1日 通过", "2015年7月1日 施行",
                                                                 "2022年1月1日 修正"))
    write(root, "法律/乙法(2019-01-01).md", "第一条 乙，一。", history=("2019年1月1日 通过",))
    write(root, "法律/丙法(2022-01-01).md", "第一条 丙新。", history=("2022年1月1日 通过",))
    write(root, "法律/丁法(2019-01-01).md", "第一条 丁新。", history=("2019年1月1日 通过",))
    return build(root)


RECORDS = [{"name": "没有条号的记录", "content": "x"},
           {"name": "某法第一二条", "content": "not a numeral"},
           {"name": "无此法第一条", "content": "x"},
           {"name": "乙法第一条", "content": "乙, 一。"},  # the text held, formatted otherwise
           {"name": "丙法第一条", "content": "丙旧。"},  # no history line on or before the snapshot
           {"name": "丁法第一条", "content": "丁旧。"},  # dated as the version held
           {"name": "中华人民共和国某法第一条", "content": "旧一。\n"},
           {"name": "中华人民共和国某法第五条之一", "content": "旧五之一。\n"},
           {"name": "中华人民共和国刑法第一条", "content": "刑旧。\n"},
           {"name": "戊法第一条", "content": "戊旧。\n"}]


def test_a_snapshot_adds_older_versions_where_its_texts_differ(tmp_path):
    lib = snapshot_library(tmp_path)
    out = add_snapshot(lib, RECORDS, "2020-12-26")
    old, new = out.law("某法").versions
    assert (old.title, old.version, old.effective, old.effective_source, old.files, old.folder, old.full_title,
            old.merged, old.history) == ("某法", "2020-12-26", None, "unknown", ("snapshot:中华人民共和国某法",), "法律",
                                         "中华人民共和国某法", (), (("2010-01-01", "通过"), ("2020-12-26", "修正")))
    assert [(a.number, a.label, a.text) for a in old.articles] == [("1", "第一条", "旧一。\n"),
                                                                   ("5-1", "第五条之一", "旧五之一。\n")]
    assert old.article("5-1").text == "旧五之一。\n" and old.article("5") is None
    assert interval(old) == ("2020-12-26", "2023-01-01", "superseded") and interval(new) == ("2023-01-01", None, "")
    assert out.law("某法").as_of("2022-12-31").version is old and out.law("某法").as_of("2023-01-01").version is new
    crim = out.law("刑法").versions[0]
    assert (crim.version, crim.effective, crim.effective_source, crim.files) == \
        ("2020-12-26", "2021-03-01", "table", ("snapshot:中华人民共和国刑法",))
    assert interval(crim) == ("2021-03-01", "2024-03-01", "superseded")
    assert out.law("刑法").latest.ended_by == ""
    assert [v.version for v in out.law("戊法").versions] == ["2015-01-01", "2022-01-01"]  # not its 施行 line
    for title in ("乙法", "丙法", "丁法"):
        assert out.law(title).versions == lib.law(title).versions
    assert out.law("无此法") is None
    assert out.problems == lib.problems + (Problem("snapshot:丁法", 0, "same_date", "the snapshot's text of 丁法 is "
                                                   "dated 2019-01-01, as a version already held with another "
                                                   "text; left out"),)


def test_a_snapshot_limited_to_some_titles_and_named_by_its_source(tmp_path):
    lib = snapshot_library(tmp_path)
    out = add_snapshot(lib, RECORDS[::-1], "2020-12-26", titles=["中华人民共和国某法"], source="corpus-2020")
    assert out.law("某法").versions[0].files == ("corpus-2020:中华人民共和国某法",)
    for title in ("刑法", "戊法", "丁法"):
        assert out.law(title).versions == lib.law(title).versions
    assert out.problems == lib.problems
    assert add_snapshot(lib, RECORDS, "2020-12-25", titles=["某法"]).law("某法").versions[0].version == "2010-01-01"


# --- the day, titles, documents ------------------------------------------------------------------------------------

def test_the_first_day_answered_is_1949_10_01():
    assert check_day(EARLIEST) == "1949-10-01"
    with pytest.raises(InputError) as err:
        check_day("1949-09-30")
    assert str(err.value) == ("1949-09-30 is before 1949-10-01: the law held is that of the People's Republic of "
                              "China; give a date on or after 1949-10-01") and err.value.field == "as_of"


@pytest.mark.parametrize("day", ["2024-02-30", "yesterday", "", None])
def test_a_day_that_is_not_a_date_is_refused_naming_it(day):
    with pytest.raises(InputError) as err:
        check_day(day)
    assert str(err.value) == f"{day!r} is not a date; write it as YYYY-MM-DD (e.g. 2020-01-01)"
    assert err.value.field == "as_of"


@settings(max_examples=100, deadline=None)
@given(st.dates(min_value=date(1949, 10, 1), max_value=date(9999, 12, 31)))
def test_every_day_from_1949_10_01_is_answered_and_every_day_before_refused(d):
    assert check_day(d.isoformat()) == d.isoformat()
    before = date(1949, 10, 1) - timedelta(days=(d - date(1949, 10, 1)).days % 5000 + 1)
    with pytest.raises(InputError, match="before 1949-10-01"):
        check_day(before.isoformat())


NO_PREFIX = st.text(st.characters(blacklist_categories=("Z", "Cc", "Cs"), blacklist_characters="《》()（） \t\n\u3000"),
                    min_size=1, max_size=20).filter(lambda t: not t.startswith("中华人民共和国"))


@settings(max_examples=200, deadline=None)
@given(NO_PREFIX)
@example("XX法")
@example("最高人民法院关于适用某法的解释")
def test_a_title_without_prefix_spaces_or_brackets_is_its_own_key_and_the_prefixed_one_the_same(t):
    assert title_key(t) == t
    assert title_key(f"《中华人民共和国{t}》") == t
    assert title_key(f" 中华人民共和国 {t} ") == t


def test_title_key_unifies_bracket_widths_and_keeps_a_bare_prefix():
    assert title_key("某法(试行)") == title_key("某法（试行）") == "某法（试行）"
    assert title_key("中华人民共和国") == "中华人民共和国"
    assert title_key("") == "" and title_key(None) == ""


def test_versions_describe_their_interval():
    v = Version("某法", "2020-01-01", "2020-06-01", "last_article", ("某法.md",),
                (Article("1", "第一条", "甲。\n"), Article("2", "第二条", "乙。\n")), in_force_from="2020-06-01",
                in_force_until="2021-01-01", ended_by="superseded")
    assert v.describe() == "某法 (2020-01-01): in force from 2020-06-01 until 2021-01-01 (superseded); 2 articles"
    assert v.article("2").label == "第二条" and v.article("3") is None
    u = Version("某法", "2020-01-01", None, "unknown", ("某法.md",), v.articles[:1], in_force_from="2020-01-01")
    assert u.describe() == ("某法 (2020-01-01): in force from 2020-01-01 (its version date: the effective date is not "
                            "stated); 1 articles")
    assert Version("某法", None, None, "unknown", (), ()).describe() == "某法 (undated): effective date unknown; 0 articles"


def held(i, *, law="某法", start="2020-01-01", enacted="2010-01-01", original=False, version="2020-01-01", **extra):
    meta = {"in_force_from": start, "oldest_held": True, "enacted": enacted, "original": original, **extra}
    if law is not None:
        meta["law"] = law
    if version is not None:
        meta["version"] = version
    return Document(id=str(i), text="x", metadata=meta)


def test_before_the_oldest_held_the_filter_keeps_it_only_while_the_law_was_in_force():
    assert in_force_filter("2010-01-01")(held(1))  # adopted that day, an older text not held
    assert not in_force_filter("2009-12-31")(held(1))
    assert not in_force_filter("2015-01-01")(held(2, original=True))  # its first text: not yet in force
    assert in_force_filter("2019-12-31")(held(3, original=None))  # not known: the oldest answers
    assert in_force_filter("2000-01-01")(held(4, original=None))
    assert in_force_filter("2000-01-01")(held(5, enacted=None, original=False))
    assert not in_force_filter("2000-01-01")(Document(id="6", text="x", metadata={"in_force_from": "2020-01-01"}))


def test_documents_without_metadata_are_kept_and_noted_nowhere():
    bare = SimpleNamespace(title="某法第一条")
    assert in_force_filter("2020-01-01")(bare)
    assert held_notes([bare], "2000-01-01") == ()
    assert has_versions([bare]) is False


def test_held_notes_name_each_law_once_and_skip_days_in_force():
    docs = [held(1, start="2000-01-01"),  # in force that day
            held(2, law="公司法（2018-10-26版）", start="2018-10-26", version="2018-10-26"),
            held(3, law="公司法", start="2018-10-26", version="2018-10-26"),
            held(4, law=None, version=None, start="2016-01-01"),
            doc(5, "2016-01-01")]  # not the oldest held
    docs[3] = Document(id="4", text="x", title="某规定第一条", metadata=docs[3].metadata)
    assert held_notes(docs, "2015-01-01") == (
        "no version of 公司法 held for 2015-01-01; the oldest held is 2018-10-26 (in force from 2018-10-26)",
        "no version of 某规定第一条 held for 2015-01-01; the oldest held is undated (in force from 2016-01-01)")
    assert held_notes(docs[1:2], "2018-10-26") == ()  # the day it took effect: in force
    untitled = SimpleNamespace(metadata={"in_force_from": "2016-01-01", "oldest_held": True})
    assert held_notes([untitled], "2015-01-01") == (
        "no version of  held for 2015-01-01; the oldest held is undated (in force from 2016-01-01)",)


def test_has_versions_probes_only_the_first_documents():
    plain = [doc(i, None) for i in range(200)]
    assert has_versions(plain + [doc(200, "2020-01-01")]) is False
    assert has_versions(plain[:199] + [doc(199, "2020-01-01")]) is True
    assert has_versions(plain[:10] + [doc(10, "2020-01-01")], probe=10) is False
    assert has_versions(plain) is False


def test_both_filters_or_either_alone():
    def keep(d):
        return d.id != "1"

    assert both(None, keep) is keep and both(keep, None) is keep and both(None, None) is None
    two = both(keep, lambda d: d.id != "2")
    assert [d.id for d in (doc(1, None), doc(2, None), doc(3, None)) if two(d)] == ["3"]
