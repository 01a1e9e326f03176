"""The words a person reads beside a mark: the clause a supported citation rests on and the closest clause of
one that does not bear (cut at 80 characters), the plain meaning of each mark in both languages, and when a
quotation after a citation counts as quoted word for word."""

from __future__ import annotations

import pytest

from legalrag.citecheck.marks import MEANINGS, Mark, mark_line, meaning, verbatim_quote
from legalrag.types import Citation

CLAUSE = "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。"
LONG = "第一句" * 30  # 90 characters


def _c(**kw):
    return Citation("《劳动合同法》第八十二条", **kw)


def test_a_supported_citation_names_its_clause_whole_up_to_80_characters_then_cut():
    assert mark_line(_c(mark="supported", support=0.91, clause=CLAUSE)) == \
        f"supported (support 0.91): by the clause 「{CLAUSE}」"
    assert mark_line(_c(mark="supported", clause="第一句\n  第二句")) == "supported: by the clause 「第一句 第二句」"
    assert mark_line(_c(mark="supported", clause=LONG)) == f"supported: by the clause 「{LONG[:79]}…」"
    exact = "字" * 80
    assert mark_line(_c(mark="supported", clause=exact)) == f"supported: by the clause 「{exact}」"
    assert mark_line(_c(mark="supported", support=0.5)) == "supported (support 0.50)"


def test_a_citation_that_does_not_bear_gives_the_clause_reason_and_the_closest_clause():
    c = _c(mark="exists", mark_reason="does_not_bear", support=0.12, clause=CLAUSE,
           clause_reason="no clause shares the claim's subject")
    assert mark_line(c) == ("exists, not shown to support this sentence: no clause shares the claim's subject, "
                            f"support 0.12; closest clause 「{CLAUSE}」")
    plain = _c(mark="exists", mark_reason="does_not_bear", clause=CLAUSE)
    assert mark_line(plain) == ("exists, not shown to support this sentence: its text does not bear on the claim; "
                                f"closest clause 「{CLAUSE}」")
    scored = _c(mark="exists", mark_reason="does_not_bear", support=0.3, clause_reason="best clause (support 0.30)")
    assert mark_line(scored) == "exists, not shown to support this sentence: best clause (support 0.30)"


def test_a_citation_not_retrieved_names_no_clause_even_when_it_has_one():
    c = _c(mark="exists", mark_reason="not_retrieved", clause=CLAUSE, clause_reason="unused")
    assert mark_line(c) == ("exists, not shown to support this sentence: not among the retrieved articles the "
                            "answer was given")


@pytest.mark.parametrize("mark", list(Mark))
def test_each_mark_means_one_plain_sentence_in_each_language(mark):
    c = _c(mark=mark.value)
    assert meaning(c) == MEANINGS[mark]["en"] and meaning(c, "en") == MEANINGS[mark]["en"]
    assert meaning(c, "zh") == MEANINGS[mark]["zh"] and meaning(c, "de") == MEANINGS[mark]["en"]
    assert meaning(c, "zh") != meaning(c, "en")


def test_a_citation_checked_for_existence_only_has_no_meaning():
    assert meaning(_c()) == "" and meaning(_c(), "zh") == ""
    assert meaning(_c(mark="supported"), "zh") == "该条有一句话说的正是这句话的内容（已引出该句）"


CITE = "《劳动合同法》第八十二条"


def _quote(after: str, article: str = CLAUSE) -> str:
    text = "依据" + CITE + after
    return verbatim_quote(text, text.index(CITE) + len(CITE), article)


def test_a_quotation_word_for_word_followed_only_by_punctuation_counts():
    quoted = "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的"
    assert _quote(f"：“{quoted}”。") == quoted
    assert _quote(f": \"{quoted}\"") == quoted
    assert _quote(f"：「{quoted}」；\n公司应当支付二倍工资。") == quoted  # the next line is another matter
    parts = "用人单位自用工之日起……应当向劳动者每月支付二倍的工资"
    assert _quote(f"：“{parts}”") == parts  # parts cut at an ellipsis, each word for word


def test_a_quotation_is_not_counted_when_it_differs_is_short_or_a_claim_follows():
    assert _quote("：“用人单位自用工之日起应当支付三倍的工资”") == ""  # not the article's words
    assert _quote("：“用人单位”") == ""  # under 8 characters
    assert _quote("：“用人单位自用工之日起超过一个月”，所以公司必须赔偿我十万元。") == ""  # a claim of its own
    assert _quote("用人单位自用工之日起超过一个月") == ""  # no quotation marks
    assert _quote("：“用人单位自用工之日起超过一个月”", article="") == ""
    assert _quote("：“……”") == ""  # nothing but the ellipsis
