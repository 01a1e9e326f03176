"""Property-based fuzzing of the citation parser and extractor: arbitrary text never raises (anything but the
documented ValueError of ``parse_citation``), and canonical forms of Chinese (numerals, 之一, 款/项), Swiss and
US citations parse back to the same citation."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from legalrag.citecheck import (ChineseCitation, SwissCitation, USCitation, check_citations, extract_citations,
                                parse_chinese, parse_citation, parse_swiss, parse_us)
from legalrag.types import Document
from support.fuzz_support import FUZZ, tried  # noqa: E402

# Pieces of real citations, so random text reaches the deep branches of the grammar, not only the first regex.
PIECES = ["第", "条", "之", "款", "项", "（", "）", "(", ")", "、", "，", "及", "和", "《", "》", "〈", "〉", "﹤", "﹥",
          "一", "二", "十", "百", "千", "万", "零", "〇", "两", "0", "1", "9", "０", "至", "。", "\n", " ",
          "中华人民共和国", "刑法", "民法典", "依照", "根据", "最高人民法院", "关于", "解释", "法", "规定",
          "Art.", "art.", "Abs.", "al.", "lit.", "let.", "Ziff.", "ch.", "n.", "cpv.", "bis", "BGG", "BV", "ZGB",
          "Cst.", "U.S.C.", "USC", "C.F.R.", "§", "§§", "Fed. R. Evid.", "FRCP", "Rule", "and", ",", "-", "."]
CITATION_TEXT = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), max_size=40).map("".join)
ANY_TEXT = st.one_of(st.text(max_size=400), CITATION_TEXT)
NUMBER = st.integers(min_value=1, max_value=9999)
SMALL = st.integers(min_value=1, max_value=99)
LAWS = st.sampled_from(["中华人民共和国刑法", "刑法", "民法典", "中华人民共和国劳动合同法",
                        "最高人民法院关于适用〈中华人民共和国民事诉讼法〉的解释", "治安管理处罚法"])


@FUZZ
@given(ANY_TEXT)
def test_extract_never_raises_and_spans_hold(text):
    tried("citations: extract on arbitrary text")
    for m in extract_citations(text):
        assert 0 <= m.start <= m.end <= len(text)
        assert str(m.citation)  # every found citation has a canonical form


@FUZZ
@given(ANY_TEXT)
def test_parse_raises_only_value_error(text):
    tried("citations: parse on arbitrary text")
    try:
        c = parse_citation(text)
    except ValueError:
        return
    assert parse_citation(str(c)) == c or parse_citation(c.canonical(brackets=True) if c.system == "zh" else str(c))


@FUZZ
@given(ANY_TEXT, st.lists(st.sampled_from(["刑法第一条", "民法典第一百八十八条", "Art. 8 BV"]), max_size=3))
def test_check_citations_never_raises(text, titles):
    tried("citations: check against documents")
    docs = [Document(id=f"d{i}", text=t, title=t) for i, t in enumerate(titles)]
    for c in check_citations(text, docs, [d.id for d in docs]):
        assert c.resolved in (True, False)


@FUZZ
@given(LAWS, NUMBER, st.one_of(st.none(), SMALL), st.one_of(st.none(), SMALL), st.one_of(st.none(), SMALL))
def test_chinese_canonical_round_trip(law, article, sub, para, item):
    tried("citations: Chinese canonical round trip")
    c = ChineseCitation(law=law, article=article, sub_article=sub, paragraph=para, item=item)
    text = c.canonical(brackets=True)
    back = parse_chinese(text)
    # the law comes back with inner marks as 《》 (〈〉 is only how marks inside marks are written)
    assert back.canonical(brackets=True) == text
    assert (back.article, back.sub_article, back.paragraph, back.item) == (article, sub, para, item)


_SUFFIX = st.sampled_from(["", "", "", "a", "bis", "ter"])


@FUZZ
@given(st.sampled_from(["BGG", "BV", "ZGB", "StGB", "OR", "LTF", "EMRK"]), NUMBER, _SUFFIX,
       st.one_of(st.none(), SMALL.map(str)), st.one_of(st.none(), st.sampled_from("abcdefg")),
       st.one_of(st.none(), SMALL.map(str)), st.sampled_from(["de", "fr"]))
def test_swiss_canonical_round_trip(law, article, suffix, para, letter, number, lang):
    tried("citations: Swiss canonical round trip")
    c = SwissCitation(law=law, article=f"{article}{suffix}", paragraph=para, letter=letter, number=number, lang=lang)
    assert parse_swiss(str(c)) == c


@FUZZ
@given(st.one_of(st.integers(min_value=1, max_value=54), st.none()), NUMBER,
       st.lists(st.sampled_from(["a", "b", "1", "2", "A", "i", "iv"]), max_size=3))
def test_us_canonical_round_trip(title, section, subs):
    tried("citations: US canonical round trip")
    if title is None:
        c = USCitation(code="Fed. R. Evid.", section=str(section % 1200), subdivisions=tuple(subs))
    else:
        c = USCitation(code="U.S.C.", section=str(section), title=title, subdivisions=tuple(subs))
    assert parse_us(str(c)) == c
