"""Statutory ranges read from the statute corpus: the least and most months of custody an article allows across
its tiers, the combined range of several crimes (art. 69), and the articles and charges renamed by amendments,
so that a predicted term can be kept within what the law allows.
"""

from __future__ import annotations

import re
from typing import Sequence

from legalrag.types import Document

_CN_NUM = "零一二两三四五六七八九十百"
_UPPER = re.compile(rf"([{_CN_NUM}]+)年以下有期徒刑")
_LOWER = re.compile(rf"([{_CN_NUM}]+)年以上")
_OPEN = re.compile(rf"[{_CN_NUM}]+年以上有期徒刑")  # a tier with no upper bound of its own

# The Criminal Law's general limits (arts. 38, 42, 45): 管制 3 months to 2 years, 拘役 1 to 6 months, a fixed
# term 6 months to 15 years; life (or death) counts as 240 months, the benchmark's convention (extract.LIFE_MONTHS).
SUPERVISION = (3, 24)
DETENTION = (1, 6)
FIXED_TERM = (6, 180)
LIFE = 240
# Art. 69: the combined term of several crimes at most 3 years of 管制, 1 year of 拘役, and of a fixed term
# 20 years, or 25 when the terms add up to 35 years or more.
COMBINED_SUPERVISION, COMBINED_DETENTION = 36, 12
COMBINED_FIXED, COMBINED_FIXED_LONG, COMBINED_LONG_FROM = 240, 300, 420


def statutory_range(article_text: str) -> tuple[int, int] | None:
    """(least, most) months an article allows across its tiers, or None when it states no custodial penalty.

    ``处三年以下有期徒刑、拘役或者管制；数额巨大的，处三年以上十年以下有期徒刑`` -> (1, 120); ``处拘役，并处罚金``
    -> (1, 6) (art. 42); ``处二年以下管制`` alone -> (3, 24) (art. 38); a tier without an upper bound
    (``七年以上有期徒刑``) reaches 15 years (art. 45); a tier with 无期徒刑 or 死刑 raises the most to 240 (life,
    the benchmark's convention). The least is one month with 拘役, three with 管制, else the lowest tier's
    floor or six months."""
    from legalrag.numerals import to_int

    fixed, detention, supervision = "有期徒刑" in article_text, "拘役" in article_text, "管制" in article_text
    life = "无期徒刑" in article_text or "死刑" in article_text
    if not (fixed or detention or supervision or life):
        return None
    uppers = [to_int(m.replace("两", "二")) * 12 for m in _UPPER.findall(article_text)]
    lowers = [to_int(m.replace("两", "二")) * 12 for m in _LOWER.findall(article_text)] if fixed or life else []
    if detention:
        least = DETENTION[0]
    elif supervision:
        least = SUPERVISION[0]
    else:
        least = min(lowers) if lowers else FIXED_TERM[0]
    if life:
        most = LIFE
    elif fixed:
        most = max(uppers + lowers) if uppers or lowers else FIXED_TERM[1]
        if not uppers or _OPEN.search(article_text):
            most = FIXED_TERM[1]
    else:  # 拘役 and/or 管制 only
        most = max(DETENTION[1] if detention else 0, SUPERVISION[1] if supervision else 0)
    return (least, max(least, most))


def combined_range(article_texts: Sequence[str]) -> tuple[int, int] | None:
    """The range of the term executed for several crimes, each under its article's text (art. 69): at least the
    highest floor, at most the sum of the maxima, capped at one year when every article allows only 拘役,
    three years when none allows a fixed term (管制 is served after 拘役, art. 69 para. 2), else 20 years (25 when
    the maxima add up to 35 years or more). None when an article states no custodial penalty."""
    ranges = [statutory_range(t) for t in article_texts]
    if not ranges or any(r is None for r in ranges):
        return None
    least, total = max(lo for lo, _ in ranges), sum(hi for _, hi in ranges)
    if all(hi <= DETENTION[1] for _, hi in ranges):
        cap = COMBINED_DETENTION
    elif not any("有期徒刑" in t or "无期徒刑" in t or "死刑" in t for t in article_texts):
        cap = COMBINED_DETENTION + COMBINED_SUPERVISION
    else:
        cap = COMBINED_FIXED_LONG if total >= COMBINED_LONG_FROM else COMBINED_FIXED
    return (least, max(least, min(total, cap)))


# Criminal Law articles added by amendment (第X条之一) that define a charge JuDGE's cases are convicted of but
# JuDGE's 452-article law corpus lacks (its cases cite them under the base article's number, so a 危险驾驶 case
# "cites 133", 交通肇事's article). Article -> its penalty clause in the national corpus's wording (STARD
# corpus.jsonl, 中华人民共和国刑法 as amended; tests/unit/judgment/test_ranges.py checks each clause is verbatim there),
# and charge -> the article that defines it.
AMENDED_ARTICLES: dict[str, str] = {
    "133-1": "在道路上驾驶机动车，有下列情形之一的，处拘役，并处罚金",
    "177-1": "有下列情形之一，妨害信用卡管理的，处三年以下有期徒刑或者拘役，并处或者单处一万元以上十万元以下罚金；"
             "数量巨大或者有其他严重情节的，处三年以上十年以下有期徒刑，并处二万元以上二十万元以下罚金",
    "205-1": "虚开本法第二百零五条规定以外的其他发票，情节严重的，处二年以下有期徒刑、拘役或者管制，并处罚金；"
             "情节特别严重的，处二年以上七年以下有期徒刑，并处罚金",
    "224-1": "扰乱经济社会秩序的传销活动的，处五年以下有期徒刑或者拘役，并处罚金；情节严重的，处五年以上有期徒刑，"
             "并处罚金",
    "253-1": "违反国家有关规定，向他人出售或者提供公民个人信息，情节严重的，处三年以下有期徒刑或者拘役，并处或者单处"
             "罚金；情节特别严重的，处三年以上七年以下有期徒刑，并处罚金",
    "276-1": "经政府有关部门责令支付仍不支付的，处三年以下有期徒刑或者拘役，并处或者单处罚金；造成严重后果的，处三年"
             "以上七年以下有期徒刑，并处罚金",
    "307-1": "以捏造的事实提起民事诉讼，妨害司法秩序或者严重侵害他人合法权益的，处三年以下有期徒刑、拘役或者管制，"
             "并处或者单处罚金；情节严重的，处三年以上七年以下有期徒刑，并处罚金",
}
AMENDED_CHARGES: dict[str, str] = {
    "危险驾驶罪": "133-1", "妨害信用卡管理罪": "177-1", "窃取、收买、非法提供信用卡信息罪": "177-1",
    "虚开发票罪": "205-1", "组织、领导传销活动罪": "224-1", "侵犯公民个人信息罪": "253-1",
    "拒不支付劳动报酬罪": "276-1", "虚假诉讼罪": "307-1",
}


def statutory_ranges(statutes: Sequence[Document]) -> dict[str, tuple[int, int]]:
    """Article number (as text) -> range, for every article of the corpus that states a prison term."""
    out = {}
    for d in statutes:
        rng = statutory_range(d.text)
        if rng is not None:
            out[str(d.id)] = rng
    return out
