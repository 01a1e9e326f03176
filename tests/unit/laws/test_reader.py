"""The reader of the dated-Markdown law format, on tiny fixture files of each folder's shape."""

from __future__ import annotations

from collections import Counter

import pytest

from legalrag.errors import InputError
from legalrag.laws.reader import effective_in, read_folder
from support.paths import REPO

MINI = REPO / "tests" / "data" / "laws-2025-mini"


@pytest.fixture(scope="module")
def good():
    return read_folder(MINI / "good")


def by_path(folder, path):
    return next(f for f in folder.files if f.path == path)


def test_articles_with_numbers_paths_and_paragraphs(good):
    f = by_path(good, "民法商法/公司法(2023-12-29).md")
    assert f.title == "公司法" and f.full_title == "中华人民共和国公司法"
    assert f.version == "2023-12-29" and f.version_source == "file_name"
    assert [a.number for a in f.articles] == ["1", "2", "3", "4", "5", "5-1", "6"]
    five = f.articles[4]
    assert five.label == "第五条"
    assert five.path == ("第三章 有限责任公司的设立和组织机构",)
    assert five.text.count("\n\n") == 1 and five.text.endswith("\n")  # two paragraphs, the 2023 corpus's shape
    assert f.articles[0].path == ("第一章 总 则",)  # the ideographic space of the heading is one space


def test_nested_headings_give_the_whole_path(good):
    f = next(x for x in good.files if x.path == "民法典/物权编.md")
    assert f.title == "中华人民共和国民法典" and f.subtitle == "物权编"
    assert f.articles[0].path == ("第二编 物权", "第一分编 通则", "第一章 一般规定")
    assert f.version == "2020-05-28" and f.version_source == "history"  # not the 施行 line's date


def test_effective_date_sources(good):
    company = by_path(good, "民法商法/公司法(2023-12-29).md")
    assert company.last_article_effective == "2024-07-01" and company.header_effective is None
    interp = by_path(good, "司法解释/最高人民法院关于适用《民事诉讼法》的解释(2022-04-01).md")
    assert interp.header_effective == "2022-04-10"
    civil = by_path(good, "诉讼与非诉讼程序法/民事诉讼法(2023-09-01).md")
    assert civil.last_article_on_promulgation and civil.last_article_effective is None


def test_dates_in_chinese_numerals_and_full_width_digits():
    assert effective_in("本法自一九九七年十月一日起施行。") == ("1997-10-01", False)
    assert effective_in("本条例自二○○四年十月一日起施行") == ("2004-10-01", False)
    assert effective_in("本办法自２０１３年７月１日起施行") == ("2013-07-01", False)
    assert effective_in("本解释自发布之日起施行。") == (None, True)
    assert effective_in("本法自2023年2月30日起施行") == (None, False)


def test_cases_indexes_and_the_template_are_skipped_and_said_so(good):
    skipped = dict(good.skipped)
    assert "guiding case" in skipped["案例/民法典/某某诉某某网络服务合同案.md"]
    assert "法律法规模版.md" in skipped and "_index.md" in skipped
    assert all(not f.path.startswith("案例/") for f in good.files)


def test_an_amendment_without_articles_is_reported(good):
    assert [(p.path, p.kind) for p in good.problems] == [("刑法/刑法修正案（十二）(2023-12-29).md", "no_articles")]
    assert good.problems[0].line == 6


def test_bad_files_are_reported_by_file_and_line():
    folder = read_folder(MINI / "bad")
    kinds = {(p.path, p.kind): p for p in folder.problems}
    assert kinds[("行政法/没有标题(2020-01-01).md", "missing_title")].line == 1
    assert kinds[("行政法/没有条文(2020-01-01).md", "no_articles")].line == 6
    assert kinds[("行政法/日期错误(2020-02-30).md", "bad_date")].line == 0
    hist = kinds[("行政法/历史日期错误(2020-01-01).md", "bad_date")]
    assert hist.line == 3 and "YYYY年M月D日" in hist.message
    assert "行政法/没有标题(2020-01-01).md:1: missing_title" in str(kinds[("行政法/没有标题(2020-01-01).md",
                                                                       "missing_title")])


def test_a_folder_of_another_layout_is_refused(tmp_path):
    (tmp_path / "notes.md").write_text("just some notes\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected layout"):
        read_folder(tmp_path)
    with pytest.raises(InputError, match="no such folder"):
        read_folder(tmp_path / "missing")


def test_the_whole_2025_checkout_reads_with_counted_sources():
    from support.paths import SHARED_DATA

    root = SHARED_DATA / "laws-2025"
    if not root.is_dir():
        pytest.skip(f"the laws-2025 data is not here ({root}); set LEGALRAG_DATA")
    folder = read_folder(root)
    assert len(folder.files) > 1400
    assert Counter(p.kind for p in folder.problems).keys() <= {"no_articles", "duplicate_article"}
