"""Property tests for the Chinese numeral round trip (legalrag.numerals)."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from legalrag.numerals import NUMERAL_CHARS, to_chinese, to_int

ARTICLE_NUMBERS = st.integers(min_value=0, max_value=5_000)
ANY_NUMBERS = st.integers(min_value=0, max_value=10**16 - 1)


@settings(max_examples=500)
@given(ANY_NUMBERS)
def test_int_to_chinese_and_back(n):
    assert to_int(to_chinese(n)) == n


@settings(max_examples=300)
@given(ARTICLE_NUMBERS)
def test_chinese_to_int_and_back_is_identity_on_official_forms(n):
    text = to_chinese(n)
    assert to_chinese(to_int(text)) == text


@given(ANY_NUMBERS)
def test_official_style(n):
    text = to_chinese(n)
    assert set(text) <= set(NUMERAL_CHARS)
    assert not text.startswith("一十")  # 十五, never 一十五
    assert "零零" not in text  # one 零 stands for any run of zeros
    assert n == 0 or not text.endswith("零")
    assert "两" not in text and "〇" not in text  # output uses 二 and 零 only


@given(st.integers(min_value=1, max_value=9_999))
def test_inner_tens_keep_their_one(n):
    # 一百一十 (110) and 一千零一十 (1010): 一十 is written out except at the very start.
    text = to_chinese(n)
    if n >= 100 and n // 10 % 10 == 1:
        assert "一十" in text


@given(st.integers(min_value=1, max_value=9))
def test_liang_is_two_only_as_input(k):
    # 两千 / 两百 / 两万 are common spoken forms; they parse like 二千 / 二百 / 二万.
    for unit, value in (("百", 100), ("千", 1000), ("万", 10_000)):
        assert to_int("两" + unit) == 2 * value
    assert to_int("两千零" + to_chinese(k)) == 2000 + k


@given(ANY_NUMBERS)
def test_ascii_and_fullwidth_digits(n):
    assert to_int(str(n)) == n
    assert to_int(str(n).translate(str.maketrans("0123456789", "０１２３４５６７８９"))) == n


@given(st.text(alphabet="条款项之第abc ", min_size=1, max_size=6))
def test_non_numerals_are_rejected(text):
    if not re.fullmatch(r"\s*", text):
        try:
            to_int(text)
        except ValueError:
            return
        raise AssertionError(f"accepted {text!r}")
