"""Statutory prison ranges on the Criminal Law's own wording: 拘役 (art. 42), 管制 (art. 38), a fixed term
(art. 45), tiers without an upper bound, the combined term of several crimes (art. 69), and the amended articles
(第X条之一) that JuDGE's law corpus lacks, checked against the national corpus when it is present."""

from __future__ import annotations

import json
import re

import pytest

from legalrag.judgment.ranges import (AMENDED_ARTICLES, AMENDED_CHARGES, COMBINED_DETENTION, COMBINED_FIXED,
                                      COMBINED_FIXED_LONG, COMBINED_LONG_FROM, COMBINED_SUPERVISION, DETENTION,
                                      FIXED_TERM, SUPERVISION, combined_range, statutory_range)
from legalrag.numerals import to_chinese, to_int

# The articles' wording, as the national corpus (中华人民共和国刑法) gives it.
ART_38 = "管制的期限，为三个月以上二年以下。"
ART_42 = "拘役的期限，为一个月以上六个月以下。"
ART_45 = "有期徒刑的期限，除本法第五十条、第六十九条规定外，为六个月以上十五年以下。"
ART_69 = ("判决宣告以前一人犯数罪的，除判处死刑和无期徒刑的以外，应当在总和刑期以下、数刑中最高刑期以上，酌情决定执行的"
          "刑期，但是管制最高不能超过三年，拘役最高不能超过一年，有期徒刑总和刑期不满三十五年的，最高不能超过二十年，"
          "总和刑期在三十五年以上的，最高不能超过二十五年。")
ART_133 = ("违反交通运输管理法规，因而发生重大事故，致人重伤、死亡或者使公私财产遭受重大损失的，处三年以下有期徒刑或者拘役；"
           "交通运输肇事后逃逸或者有其他特别恶劣情节的，处三年以上七年以下有期徒刑；因逃逸致人死亡的，处七年以上有期徒刑。")
ART_133_1 = ("在道路上驾驶机动车，有下列情形之一的，处拘役，并处罚金：（一）追逐竞驶，情节恶劣的；（二）醉酒驾驶机动车的；"
             "（三）从事校车业务或者旅客运输，严重超过额定乘员载客，或者严重超过规定时速行驶的；（四）违反危险化学品安全管理"
             "规定运输危险化学品，危及公共安全的。")
ART_264 = ("盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃、携带凶器盗窃、扒窃的，处三年以下有期徒刑、拘役或者管制，并处或者"
           "单处罚金；数额巨大或者有其他严重情节的，处三年以上十年以下有期徒刑，并处罚金；数额特别巨大或者有其他特别严重情节的，"
           "处十年以上有期徒刑或者无期徒刑，并处罚金或者没收财产。")
ART_280_1 = ("在依照国家规定应当提供身份证明的活动中，使用伪造、变造的或者盗用他人的居民身份证、护照、社会保障卡、驾驶证等依法"
             "可以用于证明身份的证件，情节严重的，处拘役或者管制，并处或者单处罚金。")
ART_234 = ("故意伤害他人身体的，处三年以下有期徒刑、拘役或者管制。犯前款罪，致人重伤的，处三年以上十年以下有期徒刑；致人死亡"
           "或者以特别残忍手段致人重伤造成严重残疾的，处十年以上有期徒刑、无期徒刑或者死刑。")
ART_348 = ("非法持有鸦片一千克以上、海洛因或者甲基苯丙胺五十克以上或者其他毒品数量大的，处七年以上有期徒刑或者无期徒刑，并处"
           "罚金；非法持有鸦片二百克以上不满一千克、海洛因或者甲基苯丙胺十克以上不满五十克或者其他毒品数量较大的，处三年以下"
           "有期徒刑、拘役或者管制，并处罚金；情节严重的，处三年以上七年以下有期徒刑，并处罚金。")

_NUM = "零一二两三四五六七八九十百"


def _months(phrase: str) -> int:
    """``三个月`` -> 3, ``二年`` -> 24, ``十五年`` -> 180."""
    m = re.fullmatch(rf"([{_NUM}]+)(个月|年)", phrase)
    assert m, phrase
    n = to_int(m.group(1).replace("两", "二"))
    return n if m.group(2) == "个月" else 12 * n


def _limits(text: str) -> tuple[int, int]:
    m = re.search(rf"为([{_NUM}]+(?:个月|年))以上([{_NUM}]+(?:个月|年))以下", text)
    return _months(m.group(1)), _months(m.group(2))


def test_the_general_limits_are_the_articles_own():
    assert _limits(ART_38) == SUPERVISION, "管制 is three months to two years (art. 38)"
    assert _limits(ART_42) == DETENTION, "拘役 is one to six months (art. 42)"
    assert _limits(ART_45) == FIXED_TERM, "a fixed term is six months to fifteen years (art. 45)"


def test_the_combined_caps_are_art_69s_own():
    caps = re.search(rf"管制最高不能超过([{_NUM}]+年)，拘役最高不能超过([{_NUM}]+年)，有期徒刑总和刑期不满([{_NUM}]+年)的，"
                     rf"最高不能超过([{_NUM}]+年)，总和刑期在\3以上的，最高不能超过([{_NUM}]+年)", ART_69)
    assert caps, "art. 69's wording changed"
    assert [_months(g) for g in caps.groups()] == [COMBINED_SUPERVISION, COMBINED_DETENTION, COMBINED_LONG_FROM,
                                                    COMBINED_FIXED, COMBINED_FIXED_LONG]


@pytest.mark.parametrize("text, expected", [
    (ART_133_1, (1, 6)),     # 处拘役 only: 1-6 months, not 1-180
    (ART_280_1, (1, 24)),    # 拘役或者管制: up to 管制's two years
    ("处二年以下管制。", (3, 24)),  # 管制 alone starts at three months
    (ART_133, (1, 180)),     # 七年以上有期徒刑 has no upper bound of its own: fifteen years
    (ART_264, (1, 240)),     # 无期徒刑: life, 240 by the benchmark's convention
    (ART_234, (1, 240)),     # 死刑
    (ART_348, (1, 240)),
    ("处三年以上十年以下有期徒刑。", (36, 120)),
    ("处五年以下有期徒刑或者拘役；情节严重的，处五年以上有期徒刑。", (1, 180)),
])
def test_statutory_range_on_the_statutes_wording(text, expected):
    assert statutory_range(text) == expected, f"{text[:30]}…"


def test_statutory_range_without_a_custodial_penalty():
    assert statutory_range("犯罪以后自动投案，如实供述自己的罪行的，是自首。") is None
    assert statutory_range("判处罚金，应当根据犯罪情节决定罚金数额。") is None


def test_combined_range_follows_art_69():
    assert combined_range([ART_133_1, ART_133_1]) == (1, COMBINED_DETENTION), "two 拘役-only crimes: at most one year"
    assert combined_range([ART_133_1] * 3) == (1, COMBINED_DETENTION), "three 拘役-only crimes: still one year"
    assert combined_range([ART_133_1]) == (1, 6)
    assert combined_range([ART_280_1, ART_133_1]) == (1, 30), "拘役 and 管制 crimes add up (管制 served after 拘役)"
    assert combined_range([ART_280_1, ART_280_1, ART_280_1]) == (1, COMBINED_DETENTION + COMBINED_SUPERVISION)
    assert combined_range(["处三年以下有期徒刑。", ART_133_1]) == (6, 42), "the sum of the maxima, the highest floor"
    assert combined_range(["处三年以上十年以下有期徒刑。", "处三年以上十年以下有期徒刑。", "处三年以下有期徒刑。"]) \
        == (36, COMBINED_FIXED), "maxima adding up to 23 years: at most 20"
    assert combined_range([ART_264, ART_234]) == (1, COMBINED_FIXED_LONG), "maxima adding up to 35 years or more: 25"
    assert combined_range([ART_264, "是自首。"]) is None


@pytest.mark.shared_data
def test_amended_articles_are_the_national_corpus_wording(shared_data):
    corpus = shared_data / "stard" / "corpus.jsonl"
    if not corpus.exists():
        pytest.skip(f"{corpus} not found")
    names = {f"中华人民共和国刑法第{to_chinese(int(a.split('-')[0]))}条之{to_chinese(int(a.split('-')[1]))}": a
             for a in AMENDED_ARTICLES}
    names.update({f"中华人民共和国刑法第{to_chinese(n)}条": str(n) for n in (38, 42, 45, 69, 133, 264)})
    texts = {}
    with corpus.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["name"] in names:
                texts[names[row["name"]]] = row["content"].replace("\n", "")
    assert set(texts) >= set(AMENDED_ARTICLES), "the national corpus lacks an amended article"
    for art, clause in AMENDED_ARTICLES.items():
        assert clause in texts[art], f"art. {art}'s penalty clause is not the national corpus's wording"
        assert statutory_range(clause) == statutory_range(texts[art]), art
    for art, ours in (("38", ART_38), ("42", ART_42), ("45", ART_45), ("69", ART_69), ("133", ART_133),
                      ("264", ART_264)):
        assert texts[art].startswith(ours), f"art. {art}: the test's copy is not the national corpus's wording"
    assert statutory_range(texts["133-1"]) == DETENTION
    assert set(AMENDED_CHARGES.values()) == set(AMENDED_ARTICLES)
