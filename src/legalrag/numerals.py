"""Chinese numerals <-> integers, in the official style used for article numbers.

``to_int("一百零五") == 105``; ``to_chinese(1020) == "一千零二十"``; ``to_chinese(10) == "十"`` (not 一十);
``两`` is accepted as 2 on input (两千).
"""

from __future__ import annotations

DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
UNITS = {"十": 10, "百": 100, "千": 1000}
BIG_UNITS = {"万": 10_000, "亿": 100_000_000}
_DIGIT_CHARS = "零一二三四五六七八九"
NUMERAL_CHARS = "".join(DIGITS) + "".join(UNITS) + "".join(BIG_UNITS)


def to_int(text: str) -> int:
    """Parse a Chinese numeral (or ASCII/full-width digits). Raises ValueError on anything else."""
    s = text.strip()
    if not s:
        raise ValueError("empty numeral")
    ascii_s = s.translate(str.maketrans("０１２３４５６７８９", "0123456789"))
    if ascii_s.isdigit():
        return int(ascii_s)
    # high: groups already scaled by 亿; mid: the 万 group of the current 亿 group; section: below 10,000.
    high, mid, section, digit = 0, 0, 0, None
    for ch in s:
        if ch in DIGITS:
            if digit is not None and digit != 0 and DIGITS[ch] != 0:
                raise ValueError(f"not a Chinese numeral: {text!r}")
            digit = DIGITS[ch]
        elif ch in UNITS:
            section += (1 if digit is None else digit) * UNITS[ch]
            digit = None
        elif ch == "万":
            mid = (mid + section + (digit or 0) or 1) * 10_000
            section, digit = 0, None
        elif ch == "亿":  # 亿 scales everything before it, so 一万亿 is 10**12
            high = (high + mid + section + (digit or 0) or 1) * 100_000_000
            mid, section, digit = 0, 0, None
        else:
            raise ValueError(f"not a Chinese numeral: {text!r}")
    return high + mid + section + (digit or 0)


def _below_10000(n: int, leading: bool) -> str:
    out, zero_pending = [], False
    for unit, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d = n // unit % 10
        if d == 0:
            if out:
                zero_pending = True
            continue
        if zero_pending:
            out.append("零")
            zero_pending = False
        if unit == 10 and d == 1 and not out and leading:
            out.append("十")  # 十, 十五 rather than 一十, 一十五 at the start of a number
        else:
            out.append(_DIGIT_CHARS[d] + name)
    return "".join(out)


def to_chinese(n: int) -> str:
    """Format a non-negative integer as an official-style Chinese numeral (十五, 一百一十, 一万零一, 一万零一亿)."""
    if n < 0:
        raise ValueError("negative numbers are not article numbers")
    if n == 0:
        return "零"
    return _format(n, leading=True)


def _format(n: int, leading: bool) -> str:
    if n < 10_000:
        return _below_10000(n, leading)
    big, name = (100_000_000, "亿") if n >= 100_000_000 else (10_000, "万")
    high, low = divmod(n, big)
    out = _format(high, leading) + name
    if low == 0:
        return out
    if low < big // 10:  # the digit just below the unit is zero: 一万零一, 一亿零五百万
        out += "零"
    return out + _format(low, leading=False)
