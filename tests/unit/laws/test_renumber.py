"""The old -> new article map by text alignment, on the fixture's two Company Law versions."""

from __future__ import annotations

from legalrag.laws.reader import Article, read_folder
from legalrag.laws.renumber import align, renumbering
from legalrag.laws.versions import build_library
from support.paths import REPO

MINI = REPO / "tests" / "data" / "laws-2025-mini" / "good"


def test_the_company_law_map_follows_the_text_not_the_number():
    lib = build_library(read_folder(MINI, only=["民法商法/公司法(2018-10-26).md", "民法商法/公司法(2023-12-29).md"]))
    old, new = lib.law("公司法").versions
    m = renumbering(old, new)
    assert m["4"].new == "5" and m["4"].renumbered and not m["4"].unchanged  # registered capital: 5-year limit added
    assert m["5"].new == "5-1"
    assert m["1"].new == "1" and not m["1"].renumbered
    assert m["3"].new is None  # the conditions of setting up: deleted
    assert m["6"].new == "6"


def test_a_moved_article_is_found_out_of_order():
    old = [Article("1", "第一条", "甲乙丙丁戊己庚辛壬癸子丑寅卯"), Article("2", "第二条", "天地玄黄宇宙洪荒日月盈昃辰宿列张"),
           Article("3", "第三条", "寒来暑往秋收冬藏闰余成岁律吕调阳")]
    new = [Article("1", "第一条", "寒来暑往秋收冬藏闰余成岁律吕调阳"), Article("2", "第二条", "甲乙丙丁戊己庚辛壬癸子丑寅卯"),
           Article("3", "第三条", "天地玄黄宇宙洪荒日月盈昃辰宿列张")]
    got = {m.old: (m.new, m.moved, m.unchanged) for m in align(old, new)}
    assert got["1"][0] == "2" and got["2"][0] == "3" and got["3"] == ("1", True, True)
