"""The circumstance rules, pinned where mutation testing found them unpinned: what each finding states (its
provision, paragraph, sentence, span, tier, defendant), the order a draft lists them in, the tiers a caller asks
for, the negation window, the five-year window of 累犯 read from a release date (at and around 5 × 366 days, the
sentences and dates it reads), which defendant a finding belongs to, each branch of the tier rules, how 坦白 and
自首 exclude each other, where the facts are cut, and the gold labels read from a court's reasoning."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from legalrag.judgment.circumstances import (MAX_CHARS, NAMES, PROVISIONS, TIERS, Circumstance, circumstance_names,
                                             find_circumstances, stated_in_reasoning)

PRIOR = "被告人曾因犯盗窃罪被判处有期徒刑二年，"


def _found(facts, tiers=TIERS, defendants=None):
    return [(c.name, c.tier) for c in find_circumstances(facts, defendants, tiers=tiers)]


def _cn(d: date) -> str:
    return f"{d.year}年{d.month}月{d.day}日"


def _released(released: date, crime: date, prior: str = PRIOR, verb: str = "刑满释放") -> str:
    return f"{prior}{_cn(released)}{verb}。{_cn(crime)}，被告人窃取电动车一辆。"


# ----------------------------------------------------------------------------------------------- what a finding states

EACH = {
    "自首": "被告人主动到派出所投案，如实供述犯罪事实。",
    "坦白": "被告人到案后如实供述了自己的罪行。",
    "立功": "被告人检举揭发他人犯罪行为，经查证属实。",
    "累犯": "被告人系累犯。",
    "从犯": "被告人在共同犯罪中起次要作用。",
    "未遂": "被告人意志以外的原因未得逞。",
    "认罪认罚": "被告人自愿认罪认罚并签署具结书。",
}


@pytest.mark.parametrize("name", NAMES)
def test_each_finding_states_its_provision_sentence_and_span(name):
    facts = EACH[name]
    (c,) = find_circumstances(facts)
    law, article, paragraph = PROVISIONS[name]
    d = c.to_dict()
    assert d == {"name": name, "sentence": facts, "span": [c.start, c.end], "matched": facts[c.start:c.end],
                 "defendant": None, "law": law, "article": article, "paragraph": paragraph, "tier": "certain"}
    assert c.provision == PROVISIONS[name]


def test_the_provisions_a_draft_cites():
    assert PROVISIONS == {"自首": ("中华人民共和国刑法", "67", 1), "坦白": ("中华人民共和国刑法", "67", 3),
                          "立功": ("中华人民共和国刑法", "68", None), "累犯": ("中华人民共和国刑法", "65", 1),
                          "从犯": ("中华人民共和国刑法", "27", None), "未遂": ("中华人民共和国刑法", "23", None),
                          "认罪认罚": ("中华人民共和国刑事诉讼法", "15", None)}


def test_findings_come_in_the_statutory_order_whatever_the_order_of_the_facts():
    facts = "被告人签署认罪认罚具结书。被告人犯罪未遂。被告人系从犯。被告人系累犯。被告人有立功表现。被告人到案后如实供述。"
    assert [c.name for c in find_circumstances(facts)] == ["坦白", "立功", "累犯", "从犯", "未遂", "认罪认罚"]


def test_one_circumstance_of_several_defendants_in_the_order_of_the_facts():
    facts = "被告人李某系从犯。被告人张某系从犯。"
    found = find_circumstances(facts, ["张某", "李某"])
    assert [(c.name, c.defendant) for c in found] == [("从犯", "李某"), ("从犯", "张某")]


def test_the_sentence_is_stated_without_its_surrounding_whitespace():
    (c,) = find_circumstances("被告人张某盗窃。\n  被告人系累犯\n被告人张某被抓获。")
    assert c.sentence == "被告人系累犯"


# ----------------------------------------------------------------------------------------------- tiers asked for

def test_only_the_tiers_asked_for_are_returned():
    facts = "被告人到派出所投案。被告人系累犯。"
    assert _found(facts, ("certain",)) == [("累犯", "certain")]
    assert _found(facts, ("possible",)) == [("自首", "possible")]
    assert _found(facts, TIERS) == [("自首", "possible"), ("累犯", "certain")]
    assert _found(facts, ()) == []
    assert circumstance_names(facts) == {"累犯"}


def test_an_unknown_tier_is_named_with_the_known_ones():
    with pytest.raises(ValueError) as e:
        find_circumstances("被告人系累犯。", tiers=("certain", "likely", "maybe"))
    assert str(e.value) == "tiers: unknown tier 'likely' (expected one of ('certain', 'possible'))"


def test_a_possible_finding_is_replaced_by_a_certain_one_later_in_the_facts():
    facts = "被告人自愿认罪认罚。后被告人签署了具结书。"
    (c,) = find_circumstances(facts, tiers=TIERS)
    assert (c.tier, c.sentence) == ("certain", "后被告人签署了具结书。")
    facts = "被告人签署了认罪认罚具结书。后被告人表示认罪认罚。"
    (c,) = find_circumstances(facts, tiers=TIERS)
    assert (c.tier, c.sentence) == ("certain", "被告人签署了认罪认罚具结书。")


# ----------------------------------------------------------------------------------------------- negation

@settings(max_examples=25, deadline=None)
@given(neg=st.sampled_from(["不", "无", "未", "没有", "不能", "不具有", "不属于", "不构成", "否认", "是否"]),
       gap=st.integers(min_value=0, max_value=9))
def test_a_negation_counts_up_to_six_characters_before_the_word(neg, gap):
    facts = "被告人" + neg + "甲" * gap + "累犯。"
    assert (circumstance_names(facts) == set()) == (gap <= 6)


def test_a_negation_at_the_start_of_a_sentence_counts():
    assert circumstance_names("不构成累犯。") == set()
    assert circumstance_names("被告人盗窃。不构成累犯。") == set()
    assert circumstance_names("否认系从犯。") == set()


# ----------------------------------------------------------------------------------------------- 累犯 from the dates

RELEASED = date(2015, 3, 1)


def test_recidivism_at_and_around_five_times_366_days():
    at = RELEASED + timedelta(days=5 * 366)
    (c,) = find_circumstances(_released(RELEASED, at))
    assert (c.name, c.matched, c.defendant) == ("累犯", "2015年3月1日刑满释放", None)
    assert c.sentence == PRIOR + "2015年3月1日刑满释放。"
    facts = _released(RELEASED, at)
    assert facts[c.start:c.end] == c.matched
    assert circumstance_names(_released(RELEASED, at - timedelta(days=1))) == {"累犯"}
    assert circumstance_names(_released(RELEASED, at + timedelta(days=1))) == set()


@settings(max_examples=30, deadline=None)
@given(days=st.integers(min_value=1, max_value=3000))
def test_recidivism_is_a_new_crime_within_five_years_of_release(days):
    facts = _released(RELEASED, RELEASED + timedelta(days=days))
    assert ("累犯" in circumstance_names(facts)) == (days <= 5 * 366)


@pytest.mark.parametrize("verb", ["刑满释放", "释放", "出狱"])
def test_each_word_for_a_release(verb):
    assert circumstance_names(_released(RELEASED, date(2016, 3, 1), verb=verb)) == {"累犯"}


@pytest.mark.parametrize("prior", ["被告人曾因犯盗窃罪被判处有期徒刑二年，缓刑三年，", "被告人曾因犯盗窃罪被判处拘役六个月，",
                                   "被告人曾因犯盗窃罪被判处管制一年，有期徒刑，", "被告人曾因犯盗窃罪被判处罚金，"])
def test_no_recidivism_from_a_release_after_another_penalty(prior):
    assert circumstance_names(_released(RELEASED, date(2016, 3, 1), prior=prior)) == set()


def test_the_first_date_after_the_release_decides():
    later = _released(RELEASED, date(2016, 3, 1)) + "2030年3月1日，本案审理。"
    assert circumstance_names(later) == {"累犯"}
    # a date before the release, or the same day, is not the crime
    earlier = PRIOR + "2015年3月1日刑满释放。2014年3月1日另查明。2016年3月1日，被告人窃取电动车一辆。"
    assert circumstance_names(earlier) == {"累犯"}
    same_day = PRIOR + "2015年3月1日刑满释放。2015年3月1日另查明。2021年3月1日，被告人窃取电动车一辆。"
    assert circumstance_names(same_day) == set()
    # a date written without its day is read as the first of its month
    month = PRIOR + "2015年3月1日刑满释放。2020年3月，被告人窃取电动车一辆。"
    assert circumstance_names(month) == {"累犯"}


def test_a_date_without_its_day_is_the_first_of_its_month_at_the_five_year_boundary():
    released = date(2020, 3, 1) - timedelta(days=5 * 366)  # the 1st of March 2020 is the last day in the window
    facts = f"{PRIOR}{_cn(released)}刑满释放。2020年3月，被告人窃取电动车一辆。"
    assert circumstance_names(facts) == {"累犯"}
    # a month-only date in the month of the release is not after it (the 1st), the next date decides
    facts = PRIOR + "2015年3月1日刑满释放。2015年3月，2021年3月1日，被告人窃取电动车一辆。"
    assert circumstance_names(facts) == set()


def test_dates_are_read_only_after_the_release_sentence():
    facts = PRIOR + "2010年3月1日刑满释放，2012年3月1日离开本市。2019年3月1日，被告人窃取电动车一辆。"
    assert circumstance_names(facts) == set()


def test_an_impossible_date_is_skipped_not_fatal():
    # an impossible release date: the next release sentence is read
    facts = (PRIOR + "2015年2月30日刑满释放。" + PRIOR + "2016年3月1日刑满释放。2017年3月1日，被告人窃取电动车一辆。")
    (c,) = find_circumstances(facts)
    assert c.matched == "2016年3月1日刑满释放"
    # an impossible later date is no date: the next one decides
    facts = PRIOR + "2015年3月1日刑满释放。2016年2月30日，2025年3月1日，被告人窃取电动车一辆。"
    assert circumstance_names(facts) == set()


def test_the_word_is_the_evidence_when_the_facts_state_it():
    facts = "被告人系累犯。" + _released(RELEASED, date(2016, 3, 1))
    (c,) = find_circumstances(facts)
    assert (c.matched, c.sentence) == ("累犯", "被告人系累犯。")


# ----------------------------------------------------------------------------------------------- several defendants

def test_a_finding_belongs_to_the_last_defendant_named_before_it():
    names = ["张某", "李某"]
    facts = "被告人张某伙同被告人李某盗窃，李某起次要作用。"
    assert [(c.name, c.defendant) for c in find_circumstances(facts, names)] == [("从犯", "李某")]
    facts = "被告人李某伙同被告人张某盗窃，张某起次要作用。"
    assert [(c.name, c.defendant) for c in find_circumstances(facts, names)] == [("从犯", "张某")]


def test_the_last_mention_before_the_finding_decides_not_the_first():
    names = ["张某", "李某"]
    facts = "被告人李某伙同被告人张某盗窃，李某起次要作用。"
    assert [c.defendant for c in find_circumstances(facts, names)] == ["李某"]
    # a mention after the finding is not the one before it
    facts = "被告人李某伙同被告人张某盗窃，张某起次要作用，李某望风。"
    assert [c.defendant for c in find_circumstances(facts, names)] == ["张某"]


def test_a_name_opening_the_sentence_is_named_before_the_finding():
    names = ["张某", "李某"]
    assert [c.defendant for c in find_circumstances("张某起次要作用，李某未参与。", names)] == ["张某"]


def test_a_finding_before_any_name_belongs_to_the_only_name_after_it():
    names = ["张某", "李某"]
    assert [c.defendant for c in find_circumstances("起次要作用的是张某。", names)] == ["张某"]
    assert [c.defendant for c in find_circumstances("起次要作用的是张某和李某。", names)] == [None]
    assert [c.defendant for c in find_circumstances("起次要作用。", names)] == [None]


def test_one_defendant_given_is_no_attribution():
    assert [c.defendant for c in find_circumstances("被告人张某起次要作用。", ["张某"])] == [None]


def test_defendants_default_to_the_names_the_facts_give():
    facts = "被告人张某、李某共同盗窃。被告人张某起次要作用。被告人李某系累犯。"
    assert [(c.name, c.defendant) for c in find_circumstances(facts)] == [("累犯", "李某"), ("从犯", "张某")]


def test_each_defendant_named_in_one_sentence_keeps_their_own_circumstance():
    facts = "被告人张某系累犯，被告人李某亦系累犯。"
    found = find_circumstances(facts, ["张某", "李某"])
    assert [(c.name, c.defendant) for c in found] == [("累犯", "张某"), ("累犯", "李某")]


# ----------------------------------------------------------------------------------------------- tier rules

@pytest.mark.parametrize("facts, expected", [
    ("公诉机关认为被告人系从犯。", [("从犯", "possible")]),
    ("公诉机关认为被告人有立功表现。", [("立功", "possible")]),
    ("公诉机关认为被告人系自首。", [("自首", "possible")]),
    ("公诉机关认为被告人具有坦白情节，被告人如实供述。", [("坦白", "possible")]),
    ("检察院建议对被告人认罪认罚从宽。", [("认罪认罚", "possible")]),
    # 累犯 and 未遂 are the court's reading of dates and results, even in the prosecution's words
    ("公诉机关认为被告人系累犯。", [("累犯", "certain")]),
    ("公诉机关认为被告人系犯罪未遂。", [("未遂", "certain")]),
    # a signed undertaking is a fact, whoever reports it
    ("公诉机关认为被告人认罪认罚并签署具结书。", [("认罪认罚", "certain")]),
    # a description, not the name, is the facts' own
    ("公诉机关认为被告人起次要作用。", [("从犯", "certain")]),
    # an undertaking in the sentence settles the plea, not another name assessed there
    ("公诉机关认为被告人系从犯，已签署具结书。", [("从犯", "possible"), ("认罪认罚", "certain")]),
])
def test_the_name_in_an_assessment_is_possible(facts, expected):
    assert _found(facts) == expected


def test_a_plain_sentence_states_the_name_as_certain():
    assert _found("被告人系从犯。") == [("从犯", "certain")]
    assert _found("被告人有立功表现。") == [("立功", "certain")]
    assert _found("被告人系自首。") == [("自首", "certain")]


@pytest.mark.parametrize("surrender", ["主动投案", "自动投案", "主动到派出所说明"])
def test_a_voluntary_surrender_is_certain_with_an_admission_at_trial(surrender):
    assert _found(f"被告人{surrender}。后当庭认罪。") == [("自首", "certain")]
    assert _found(f"被告人{surrender}。后被告人如实供述。") == [("自首", "certain")]
    assert _found(f"被告人{surrender}。") == [("自首", "possible")]


@pytest.mark.parametrize("surrender", ["到派出所投案", "报警后在现场等候"])
def test_a_bare_surrender_needs_a_confession(surrender):
    assert _found(f"被告人{surrender}。后当庭认罪。") == [("自首", "possible")]
    assert _found(f"被告人{surrender}。后被告人如实供述。") == [("自首", "certain")]


def test_a_confession_of_other_crimes_unknown_to_the_police_is_certain_zishou():
    (c,) = find_circumstances("被告人如实供述了公安机关尚未掌握的其他罪行。", tiers=TIERS)
    assert (c.name, c.tier, c.matched) == ("自首", "certain", "如实供述了公安机关尚未掌握")


def test_the_confession_must_follow_the_surrender():
    assert _found("被告人如实供述。被告人到派出所投案。") == [("自首", "possible")]


def test_the_word_tanbai_needs_a_confession_in_its_sentence():
    assert _found("被告人具有坦白情节。") == [("坦白", "possible")]
    assert _found("被告人具有坦白情节，供认不讳。") == [("坦白", "certain")]
    assert _found("被告人具有坦白情节。被告人供认不讳。") == [("坦白", "possible")]


def test_the_plea_needs_its_undertaking_in_the_same_sentence():
    assert _found("被告人自愿认罪认罚。") == [("认罪认罚", "possible")]
    assert _found("被告人自愿认罪认罚，签字具结。") == [("认罪认罚", "certain")]
    assert _found("被告人具结书已在卷。") == [("认罪认罚", "certain")]


# ----------------------------------------------------------------------------------------------- 坦白 and 自首

def test_a_certain_zishou_removes_tanbai_and_a_possible_one_leaves_it_possible():
    certain = "被告人主动投案，到案后如实供述。"
    assert _found(certain) == [("自首", "certain")]
    possible = "被告人到派出所投案。被告人具有坦白情节，供认不讳。"  # the 供认 comes after: 自首 certain
    assert _found(possible) == [("自首", "certain")]
    possible = "被告人到派出所投案。后在其住处被抓获。被告人坦白。"
    assert _found(possible) == [("自首", "possible"), ("坦白", "possible")]


def test_the_zishou_of_one_defendant_leaves_the_others_tanbai():
    names = ["张某", "李某"]
    facts = "被告人张某主动投案，如实供述。被告人李某到案后如实供述。"
    assert [(c.name, c.defendant, c.tier) for c in find_circumstances(facts, names, tiers=TIERS)] == [
        ("自首", "张某", "certain"), ("坦白", "李某", "certain")]
    # a 自首 no defendant is named for removes every one's 坦白
    facts = "被告人张某与李某盗窃。经主动投案，如实供述。被告人李某到案后如实供述。"
    assert [(c.name, c.defendant) for c in find_circumstances(facts, names, tiers=TIERS)] == [("自首", None)]


# ----------------------------------------------------------------------------------------------- where the facts are cut

def test_the_facts_are_read_up_to_max_chars():
    assert circumstance_names("甲" * (MAX_CHARS - 2) + "累犯") == {"累犯"}
    assert circumstance_names("甲" * (MAX_CHARS - 1) + "累犯") == set()
    assert find_circumstances(None) == []


def test_a_party_claim_is_no_finding():
    for claim in ("辩护人提出被告人系从犯。", "被告人辩称其系从犯。", "被告人提出从轻处罚的意见，系从犯。", "要求从轻处罚，系从犯。"):
        assert circumstance_names(claim) == set(), claim


def test_circumstance_dataclass_default_tier_is_certain():
    c = Circumstance("累犯", "被告人系累犯。", 4, 6, "累犯")
    assert (c.tier, c.defendant) == ("certain", None)


# ----------------------------------------------------------------------------------------------- gold labels

@pytest.mark.parametrize("reasoning, expected", [
    ("被告人系自首。", {"自首"}),
    ("被告人到案后如实供述。", {"坦白"}),
    ("被告人有立功表现。", {"立功"}),
    ("被告人系累犯。", {"累犯"}),
    ("被告人系从犯。", {"从犯"}),
    ("被告人犯罪未遂。", {"未遂"}),
    ("被告人签署认罪认罚具结书。", {"认罪认罚"}),
    ("依照第六十七条第一款", {"自首"}),
    ("依照第六十七条第二款", {"自首"}),
    ("依照第六十七条第三款", {"坦白"}),
    ("依照第六十八条", {"立功"}),
    ("依照第六十五条", {"累犯"}),
    ("依照第二十七条", {"从犯"}),
    ("依照第二十三条", {"未遂"}),
    ("依照《中华人民共和国刑事诉讼法》第十五条", {"认罪认罚"}),
    ("", set()),
    (None, set()),
])
def test_each_gold_label(reasoning, expected):
    assert stated_in_reasoning(reasoning) == expected


def test_a_denied_circumstance_is_no_gold_label_unless_cited():
    assert stated_in_reasoning("被告人系从犯，但不认定为从犯。") == set()
    assert stated_in_reasoning("不能认定为自首。依照第六十七条第一款") == {"自首"}


def test_gold_zishou_excludes_tanbai_unless_its_paragraph_is_cited():
    assert stated_in_reasoning("被告人系自首，到案后如实供述。") == {"自首"}
    assert stated_in_reasoning("被告人系自首，如实供述。依照第六十七条第三款") == {"自首", "坦白"}


def test_gold_a_paragraph_listed_after_the_article_belongs_to_it():
    assert stated_in_reasoning("依照《中华人民共和国刑法》第六十七条、第三款之规定") == {"坦白"}


@pytest.mark.parametrize("citation", ["第六十七条第一、三款", "第六十七条第一款、第三款", "第六十七条第三、一款"])
def test_gold_joined_paragraphs_of_article_67(citation):
    assert stated_in_reasoning(f"依照《中华人民共和国刑法》{citation}之规定") == {"自首", "坦白"}


# ----------------------------------------------------------------------------------------------- reading on

def test_recidivism_is_read_past_sentences_that_state_no_release():
    facts = "被告人张某，男，无业。" + _released(RELEASED, date(2016, 3, 1))
    (c,) = find_circumstances(facts)
    assert (c.name, c.sentence) == ("累犯", PRIOR + "2015年3月1日刑满释放。")
    assert facts[c.start:c.end] == c.matched == "2015年3月1日刑满释放"


def test_no_recidivism_without_a_date_after_the_release():
    assert circumstance_names(PRIOR + "2015年3月1日刑满释放。") == set()
    assert circumstance_names("被告人张某，男。" + PRIOR + "2015年3月1日刑满释放。被告人又窃取电动车一辆。") == set()


def test_a_finding_in_a_later_sentence_keeps_its_span_in_the_facts():
    facts = "被告人张某盗窃电动车一辆。被告人张某在共同犯罪中起次要作用。"
    (c,) = find_circumstances(facts)
    assert facts[c.start:c.end] == c.matched == "次要作用"
    assert c.sentence == "被告人张某在共同犯罪中起次要作用。"


def test_a_party_claim_does_not_stop_the_findings_after_it():
    assert circumstance_names("辩护人提出被告人系从犯。被告人系累犯。") == {"累犯"}


def test_a_negated_mention_does_not_hide_a_later_one_in_the_sentence():
    found = find_circumstances("被告人张某不构成从犯，被告人李某系从犯。", ["张某", "李某"])
    assert [(c.name, c.defendant) for c in found] == [("从犯", "李某")]


def test_a_zishou_removes_only_tanbai():
    assert _found("被告人主动投案，如实供述。被告人系累犯，系从犯。") == [
        ("自首", "certain"), ("累犯", "certain"), ("从犯", "certain")]


def test_the_first_evidence_of_a_tier_is_kept_when_later_sentences_repeat_it():
    (c,) = find_circumstances("被告人系累犯。后查明被告人确系累犯。")
    assert c.sentence == "被告人系累犯。"
    (c,) = find_circumstances("被告人自愿认罪认罚。被告人表示认罪认罚。", tiers=TIERS)
    assert (c.tier, c.sentence) == ("possible", "被告人自愿认罪认罚。")
