"""An article's clauses carry their offsets, and a quote keeps its rule's exceptions, verbatim."""

from hypothesis import given, strategies as st

from legalrag.clauses import clauses, is_exception, quote, split_clauses

ART = ("用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。\n"
       "用人单位不得解除劳动合同。但是，劳动者严重违反规章制度的除外。\n"
       "有下列情形之一的，可以解除：\n（一）协商一致的；\n（二）严重失职的。")
RENT = "承租人不得擅自转租，但是经出租人同意的除外。出租人应当履行租赁物的维修义务。"


def test_clauses_have_paragraphs_items_and_offsets():
    cs = clauses(ART)
    assert [c.paragraph for c in cs] == [1, 2, 2, 3, 3, 3]
    assert [c.item for c in cs] == ["", "", "", "", "（一）", "（二）"]
    for c in cs:
        assert ART[c.start:c.end] == c.text


def test_quote_takes_the_following_exception_of_the_same_paragraph():
    cs = clauses(ART)
    q = quote(ART, cs[1])
    assert q.text == "用人单位不得解除劳动合同。但是，劳动者严重违反规章制度的除外。"
    assert q.exceptions == 1 and ART[q.start:q.end] == q.text
    # matched on the exception alone, the quote reaches back to its rule
    assert quote(ART, cs[2]).text == q.text
    # a rule without exception is quoted alone, and never crosses into the next paragraph
    assert quote(ART, cs[0]).text == cs[0].text


def test_an_exception_inside_one_sentence_stays_in_the_clause():
    cs = clauses(RENT)
    assert cs[0].text == "承租人不得擅自转租，但是经出租人同意的除外。"
    assert is_exception(cs[0].text)
    assert quote(RENT, cs[1]).text == "出租人应当履行租赁物的维修义务。"


def test_split_clauses_pairs_match_clauses():
    assert split_clauses(ART) == [(c.paragraph, c.text) for c in clauses(ART)]


def test_english_exceptions():
    text = "A tenant may sublet the premises. Unless the lease says otherwise, notice is required."
    cs = clauses(text, "en")
    assert quote(text, cs[0], "en").text == text


@given(st.lists(st.sampled_from(["甲应当支付。", "但是乙除外。", "（一）丙；", "丁的，", "\n", " ", "不在此限。"]),
                min_size=1, max_size=12))
def test_every_clause_and_quote_is_a_verbatim_substring(pieces):
    text = "".join(pieces)
    cs = clauses(text)
    for c in cs:
        assert text[c.start:c.end] == c.text and c.text.strip() == c.text
        q = quote(text, c, parts=cs)
        assert text[q.start:q.end] == q.text and c.text in q.text
