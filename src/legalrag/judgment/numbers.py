"""Pull every number out of a short phrase such as ``有期徒刑一年六个月`` or ``罚金人民币1.5万元``.

The JuDGE evaluation reads sentence lengths and fines with a generic "numbers in a string" routine; the
quirks below are the ones its figures depend on, so they are reproduced deliberately:

- Arabic numbers may carry a decimal part and Chinese units after them (``1.5万`` = 15000, ``5千`` = 5000;
  ``2万5千`` is two numbers, 20000 and 5000); full-width digits are *not* read.
- A run of Chinese numerals is one number (``一万零五百`` = 10500, ``零六`` = 6); financial forms
  (壹贰…拾佰仟) are read; a digit after a unit is the colloquial next order (``三万五`` = 35000); ``点``
  starts a decimal part (``四点五万`` = 45000).
- ``两`` counts only before a unit (``两万`` = 20000, but ``两年`` and ``两个月`` yield nothing); a unit
  without a digit (``万元``) and ``半`` yield nothing.
- ``1年零6个月`` yields three numbers (1, 0, 6): the 零 between Arabic numbers stands alone.
"""

from __future__ import annotations

import re

_FIN = str.maketrans("壹贰叁肆伍陆柒捌玖拾佰仟〇", "一二三四五六七八九十百千零")
_DIG = {"零": 0, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "两": 2}
_SMALL = {"十": 10, "百": 100, "千": 1000}
_BIG = {"万": 10_000, "亿": 100_000_000}
_CN = "零〇一二三四五六七八九两十百千万亿壹贰叁肆伍陆柒捌玖拾佰仟点"
_TOKEN = re.compile(rf"([0-9]+(?:\.[0-9]+)?)([十百千万亿拾佰仟]*)|([{_CN}]+)")


def _int_part(s: str) -> float:
    """Value of a Chinese integer numeral (already in simplified form, no 点)."""
    total, section, digit, last_unit = 0.0, 0.0, None, None
    for ch in s:
        if ch in _DIG:
            digit = _DIG[ch]
        elif ch in _SMALL:
            section += (1 if digit is None else digit) * _SMALL[ch]
            digit, last_unit = None, _SMALL[ch]
        else:  # 万 / 亿
            section += digit or 0
            total += (section or 1) * _BIG[ch]
            section, digit, last_unit = 0.0, None, _BIG[ch]
    if digit is not None:
        # 三万五 / 一千五: a lone digit right after a unit is one order below it (not after 零: 一万零五).
        if last_unit and last_unit >= 100 and len(s) >= 2 and s[-2] not in _DIG:
            digit *= last_unit // 10
        section += digit
    return total + section


def _chinese_value(run: str) -> float | None:
    s = run.translate(_FIN)
    # 两 is a numeral only before a unit; drop it elsewhere (两年, 两个月).
    s = re.sub(r"两(?![十百千万亿])", "", s)
    if not any(ch in _DIG or ch == "十" for ch in s) or s.startswith("点"):
        return None
    if "点" in s:
        whole, _, frac = s.partition("点")
        scale = 1
        while frac and frac[-1] in _BIG or frac and frac[-1] in _SMALL:
            scale *= _BIG.get(frac[-1]) or _SMALL[frac[-1]]
            frac = frac[:-1]
        digits = "".join(str(_DIG[c]) for c in frac if c in _DIG)
        value = _int_part(whole) if whole else 0
        return (value + (float("0." + digits) if digits else 0)) * scale
    return _int_part(s)


def numbers_in(text: str) -> list[float]:
    """Every number in ``text``, in order (see the module docstring for the reading rules)."""
    out: list[float] = []
    for m in _TOKEN.finditer(text):
        if m.group(1) is not None:
            value = float(m.group(1))
            units = m.group(2).translate(_FIN)
            for u in units:
                value *= _SMALL.get(u) or _BIG[u]
            out.append(value)
        else:
            value = _chinese_value(m.group(3))
            if value is not None:
                out.append(value)
    return out
