"""The clause splitter and the quotes cut from it, pinned where mutation testing found them unpinned: where a clause
ends in Chinese and in English, where an item starts, which lines are paragraphs, which clauses are exceptions,
and how far a quote reaches for its rule and its exceptions."""

from __future__ import annotations

import pytest

from legalrag.clauses import Clause, Quote, clauses, is_exception, quote, split_clauses


def _rows(text, lang="zh"):
    return [(c.paragraph, c.text, c.start, c.end, c.item) for c in clauses(text, lang)]


def test_a_chinese_clause_ends_after_each_sentence_mark_and_before_an_item():
    assert _rows("甲应当付款！乙应当交货？丙应当验收;丁应当签字；戊可以拒绝?己可以解除!庚。（一）第一项（二）第二项") == [
        (1, "甲应当付款！", 0, 6, ""), (1, "乙应当交货？", 6, 12, ""), (1, "丙应当验收;", 12, 18, ""),
        (1, "丁应当签字；", 18, 24, ""), (1, "戊可以拒绝?", 24, 30, ""), (1, "己可以解除!", 30, 36, ""),
        (1, "庚。", 36, 38, ""), (1, "（一）第一项", 38, 44, "（一）"), (1, "（二）第二项", 44, 50, "（二）")]


def test_paragraphs_are_non_empty_lines_and_an_item_line_belongs_to_the_paragraph_before():
    text = "  甲应当付款。 \r\n\r\n（十一）第十一项；\n乙应当交货。\n（二）第二项。"
    assert _rows(text) == [(1, "甲应当付款。", 2, 8, ""), (1, "（十一）第十一项；", 13, 22, "（十一）"),
                           (2, "乙应当交货。", 23, 29, ""), (2, "（二）第二项。", 30, 37, "（二）")]
    # an article that opens with an item still has a first paragraph
    assert _rows("（三）项在首行。\n甲。") == [(1, "（三）项在首行。", 0, 8, "（三）"), (2, "甲。", 9, 11, "")]
    assert clauses("") == [] and clauses("\n \n") == []


def test_an_english_clause_ends_before_a_capital_an_opening_bracket_or_a_quote():
    text = "The tenant shall pay. (a) on time; and (b) in full: \"Rent\" is due? 'Yes' it is! Then stop. lower case."
    assert [(c.text, c.item) for c in clauses(text, "en")] == [
        ("The tenant shall pay.", ""), ("(a) on time; and", "(a)"), ("(b) in full:", "(b)"), ("\"Rent\" is due?", ""),
        ("'Yes' it is!", ""), ("Then stop. lower case.", "")]
    for c in clauses(text, "en"):
        assert text[c.start:c.end] == c.text


@pytest.mark.parametrize("number", ["(a)", "(zz)", "(1)", "(12)", "(iv)", "(viii)"])
def test_english_item_numbers(number):
    text = f"The landlord shall repair {number} the roof\n{number} the walls."
    cs = clauses(text, "en")
    assert [(c.paragraph, c.item) for c in cs] == [(1, ""), (1, number), (1, number)]
    assert cs[1].text == f"{number} the roof"


def test_an_english_line_that_is_no_item_is_a_paragraph_of_its_own():
    assert [c.paragraph for c in clauses("Rent is due.\n(a) monthly.\n(abc) not an item.\nAbc.", "en")] == [1, 1, 2, 3]
    assert [c.item for c in clauses("Pay (123) now.", "en")] == [""]


def test_a_chinese_text_split_as_english_and_back():
    assert [c.text for c in clauses("甲。乙。", "en")] == ["甲。乙。"]
    assert [c.text for c in clauses("Pay. Then go.", "zh")] == ["Pay. Then go."]


def test_split_clauses_gives_paragraph_and_text():
    assert split_clauses("甲。乙；\n丙。") == [(1, "甲。"), (1, "乙；"), (2, "丙。")]
    assert split_clauses("Pay. Then go.", "en") == [(1, "Pay."), (1, "Then go.")]


@pytest.mark.parametrize("clause", ["但是经出租人同意的", "但承租人同意的", "然而不行", " 当事人另有约定的除外 ", "除外；",
                                    "除外。", "除外;", "不在此限。", "不在此限", "法律另有规定的，从其规定", "另有规定的,从其规定",
                                    "另有规定的从其规定。"])
def test_chinese_exceptions(clause):
    assert is_exception(clause) and is_exception(clause, "zh")


@pytest.mark.parametrize("clause", ["出租人应当维修", "除外了", "不在此限的情形", "这但是", "除外情形。"])
def test_chinese_clauses_that_are_no_exception(clause):
    assert not is_exception(clause)


@pytest.mark.parametrize("clause,expected", [("But not here.", True), ("HOWEVER, no.", True), ("Except here.", True),
                                             ("Unless agreed.", True), ("Provided that it rains.", True),
                                             ("It applies except when.", True), ("unless otherwise agreed", True),
                                             ("Butter is good.", False), ("Nothing more.", False),
                                             ("但是经同意", False)])
def test_english_exceptions(clause, expected):
    assert is_exception(clause, "en") is expected


ART = ("承租人不得擅自转租。但是经出租人同意的除外；法律另有规定的，从其规定。出租人应当维修。\n"
       "承租人可以解除合同。但是当事人另有约定的除外。")


def test_a_quote_takes_every_following_exception_of_its_paragraph_and_stops_at_a_rule():
    cs = clauses(ART)
    q = quote(ART, cs[0])
    assert q == Quote("承租人不得擅自转租。但是经出租人同意的除外；法律另有规定的，从其规定。", 0, 35, 1, 2)
    assert ART[q.start:q.end] == q.text
    # matched on the last exception, the quote reaches back over the first to the rule
    assert quote(ART, cs[2]) == Quote(q.text, 0, 35, 1, 2)
    assert quote(ART, cs[1]).text == q.text and quote(ART, cs[1]).exceptions == 2
    assert quote(ART, cs[3]) == Quote("出租人应当维修。", 35, 43, 1, 0)
    # never into the next paragraph, whether forward or back
    second = quote(ART, cs[5])
    assert second == Quote("承租人可以解除合同。但是当事人另有约定的除外。", 44, 67, 2, 1)
    assert quote(ART, cs[4]) == second


def test_an_exception_opening_a_paragraph_does_not_reach_into_the_one_before():
    text = "承租人不得转租。\n但是经同意的除外。"
    cs = clauses(text)
    assert quote(text, cs[1]) == Quote("但是经同意的除外。", 9, 18, 2, 0)
    assert quote(text, cs[0]) == Quote("承租人不得转租。", 0, 8, 1, 0)


def test_a_following_item_is_not_taken_as_an_exception():
    text = "有下列情形之一的，可以解除：（一）但是经同意的；（二）其他。"
    cs = clauses(text)
    assert quote(text, cs[0]).text == "有下列情形之一的，可以解除："


def test_a_quote_uses_the_clauses_given_and_refuses_a_clause_not_of_the_article():
    cs = clauses(ART)
    assert quote(ART, cs[0], parts=cs) == quote(ART, cs[0])
    with pytest.raises(ValueError, match="the clause is not one of this article's clauses: '别的。'"):
        quote(ART, Clause(1, "别的。", 3, 6))
    with pytest.raises(ValueError):
        quote(ART, Clause(1, cs[0].text, cs[0].start, cs[0].end + 1))


def test_an_english_quote_keeps_its_exception():
    text = "The tenant shall not sublet. Unless the landlord agrees. The landlord shall repair."
    cs = clauses(text, "en")
    assert quote(text, cs[0], "en") == Quote("The tenant shall not sublet. Unless the landlord agrees.", 0, 56, 1, 1)
    assert quote(text, cs[1], "en").text == "The tenant shall not sublet. Unless the landlord agrees."


def test_offsets_follow_each_line_even_where_a_clause_repeats_an_earlier_text():
    assert _rows("甲应当付款。\n甲应当付款。\n甲应当付款。") == [(1, "甲应当付款。", 0, 6, ""), (2, "甲应当付款。", 7, 13, ""),
                                                     (3, "甲应当付款。", 14, 20, "")]
    # a clause that repeats the end of the line before is found on its own line, after every line break
    assert _rows("甲。\n乙。\n丙丁。\n丁。")[-1] == (4, "丁。", 10, 12, "")
    assert _rows("丙丁。\r\n\r\n丁。")[-1] == (2, "丁。", 7, 9, "")


def test_an_exception_after_a_clause_that_follows_an_item_is_taken_in():
    text = "有下列情形之一的：\n（一）甲的；乙应当赔偿；但是另有约定的除外。"
    cs = clauses(text)
    assert [c.item for c in cs] == ["", "（一）", "", ""]
    assert quote(text, cs[2]).text == "乙应当赔偿；但是另有约定的除外。" and quote(text, cs[2]).exceptions == 1


def test_a_quote_is_cut_along_the_clauses_it_is_given():
    text = "The tenant pays. Unless agreed. The landlord repairs."
    en = clauses(text, "en")
    # the clauses of the English split, read with the Chinese exception rule: "Unless" is no exception there
    assert quote(text, en[0], "zh", parts=en) == Quote("The tenant pays.", 0, 16, 1, 0)
    assert quote(text, en[0], "en", parts=en) == Quote("The tenant pays. Unless agreed.", 0, 31, 1, 1)
