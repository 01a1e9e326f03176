"""Statutory ranges at their edges: 两 read as 二 in every tier, 死刑 alone counts as life, 拘役 and 管制 alone
give their general limits, the combined term's 25-year cap from exactly 35 years of maxima, and the corpus
table holds every article that states a term and no other."""

from __future__ import annotations

import pytest

from legalrag.judgment.ranges import (COMBINED_DETENTION, COMBINED_FIXED, COMBINED_FIXED_LONG, COMBINED_LONG_FROM,
                                      COMBINED_SUPERVISION, DETENTION, FIXED_TERM, LIFE, SUPERVISION, combined_range,
                                      statutory_range, statutory_ranges)
from legalrag.types import Document


@pytest.mark.parametrize("text, expected", [
    ("处两年以下有期徒刑", (FIXED_TERM[0], 24)),
    ("处两年以上七年以下有期徒刑", (24, 84)),
    ("处两年以上有期徒刑", (24, FIXED_TERM[1])),  # no upper bound of its own: art. 45
    ("处死刑，并处没收财产", (FIXED_TERM[0], LIFE)),
    ("处十年以上有期徒刑或者死刑", (120, LIFE)),
    ("处无期徒刑", (FIXED_TERM[0], LIFE)),
    ("处拘役，并处罚金", DETENTION),
    ("处管制", SUPERVISION),
    ("处拘役或者管制", (DETENTION[0], SUPERVISION[1])),
    ("处有期徒刑", FIXED_TERM),
    ("处三年以下有期徒刑、拘役或者管制", (DETENTION[0], 36)),
    ("处二年以上罚金", None),  # 年以上 without a custodial penalty is no term
])
def test_statutory_range_of_each_kind_of_penalty(text, expected):
    assert statutory_range(text) == expected


def test_years_above_are_floors_only_of_fixed_terms():
    # 管制 with a money clause "二年以上" is not a fixed-term floor
    assert statutory_range("处管制，并处二年以上的罚金") == SUPERVISION


def test_the_combined_cap_rises_to_25_years_from_exactly_35_years_of_maxima():
    fifteen, twenty = "处十五年以下有期徒刑", "处二十年以下有期徒刑"  # 180 + 240 = 420 months = 35 years
    assert statutory_range(fifteen) == (6, 180)
    assert 180 + 240 == COMBINED_LONG_FROM
    assert combined_range([fifteen, twenty]) == (6, COMBINED_FIXED_LONG)
    just_under = "处十九年以下有期徒刑"  # 180 + 228 = 408 < 420
    assert combined_range([fifteen, just_under]) == (6, COMBINED_FIXED)


@pytest.mark.parametrize("texts, cap", [
    (["处拘役", "处拘役"], 12),
    (["处拘役", "处管制"], COMBINED_DETENTION + COMBINED_SUPERVISION),
    (["处管制", "处死刑"], COMBINED_FIXED),
    (["处管制", "处无期徒刑"], COMBINED_FIXED),
])
def test_the_combined_cap_follows_the_kinds_of_penalty(texts, cap):
    least, most = combined_range(texts)
    total = sum(statutory_range(t)[1] for t in texts)
    assert most == min(total, cap)


def test_the_corpus_table_holds_every_article_that_states_a_term():
    docs = [Document("264", "处三年以下有期徒刑、拘役或者管制"), Document("999", "本法自公布之日起施行。"),
            Document("133-1", "处拘役，并处罚金")]
    assert statutory_ranges(docs) == {"264": (1, 36), "133-1": DETENTION}
    assert statutory_ranges([]) == {}
