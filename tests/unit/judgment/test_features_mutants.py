"""Fact features, pinned where mutation testing found them unpinned: which amounts count (1 元 does, 0 元 and an
unreadable ``数万元`` do not, a full-width thousands comma is read), which stated total is used and how a
contradiction is worded, drug grams in every unit and sentence, a negation at the very start of the facts, the
spans and values every match carries (what a prediction shows as its evidence), the people and dates counted, the
truncation boundary, and the serialised form."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from legalrag.judgment.features import CIRCUMSTANCES, FactFeatures, Match, extract_features


def _vals(facts):
    return extract_features(facts).values


def _named(f, name):
    return [m for m in f.matches if m.name == name]


def _spans_point_at_their_text(facts, f):
    for m in f.matches:
        assert facts[m.start:m.end] == m.text, m


# ----------------------------------------------------------------------------------------------- amounts

def test_one_yuan_is_an_amount_and_zero_yuan_is_not():
    f = extract_features("被告人窃得现金1元。")
    assert [m.value for m in _named(f, "amount")] == [1.0]
    assert f.values["amount_max"] == 1.0
    z = extract_features("被告人窃得现金0元。")
    assert _named(z, "amount") == []
    assert "amount_max" not in z.values
    assert z.notes == ("no amount in yuan found in the facts",)


def test_a_zero_amount_does_not_hide_the_amounts_after_it():
    f = extract_features("第一次窃得0元，第二次窃得现金500元。")
    assert [m.value for m in _named(f, "amount")] == [500.0]


def test_an_unreadable_amount_is_skipped_without_an_error():
    # "数万元": the number cannot be read; never fatal, and the readable amount after it still counts
    f = extract_features("造成经济损失数万元，其中现金300元。")
    assert [m.value for m in _named(f, "amount")] == [300.0]
    g = extract_features("造成经济损失数万元。")
    assert "amount_max" not in g.values and g.notes == ("no amount in yuan found in the facts",)


def test_full_width_thousands_comma_is_read_as_one_number():
    f = extract_features("窃得现金3，500元。")
    assert [m.value for m in _named(f, "amount")] == [3500.0]


def test_amount_count_counts_every_mention_and_sum_counts_each_value_once():
    v = _vals("窃得现金100元、100元、200元。")
    assert v["amount_count"] == 3.0
    assert v["amount_sum"] == 300.0
    assert v["amount_max"] == 200.0


def test_a_stated_total_is_used_even_when_a_larger_amount_is_mentioned():
    v = _vals("被告人共计盗窃现金2000元。被害人报案称损失5000元。")
    assert v["amount_max"] == 5000.0
    assert v["amount_total"] == 2000.0
    assert v["amount_log"] == math.log1p(2000.0)
    assert "contradictory_amounts" not in v


def test_without_a_total_the_largest_amount_is_the_total_and_its_log_is_kept():
    v = _vals("窃得现金100元、2000元。")
    assert v["amount_total"] == 2000.0
    assert v["amount_log"] == math.log1p(2000.0)


def test_a_total_at_the_very_start_of_the_facts_counts():
    # the total word is the first character: a second, different total is a contradiction
    f = extract_features("共3000元。后查明共计5000元。")
    assert f.values["contradictory_amounts"] == 1.0
    f2 = extract_features("共计3000元。后查明共计5000元。")
    assert f2.values["contradictory_amounts"] == 1.0


def test_contradictory_totals_note_states_them_in_order():
    f = extract_features("后查明共计人民币5000元。窃得现金1000元、2000元，共计3000元。")
    assert f.notes == ("contradictory amounts: different totals stated 3000, 5000; the largest is used",)
    assert f.values["amount_total"] == 5000.0


def test_amount_evidence_is_shared_by_every_amount_feature():
    facts = "窃得现金100元、200元。"
    f = extract_features(facts)
    amounts = _named(f, "amount")
    assert [m.text for m in amounts] == ["100元", "200元"]
    for name in ("amount_max", "amount_sum", "amount_total", "amount_log", "amount"):
        assert f.evidence(name) == amounts, name


# ----------------------------------------------------------------------------------------------- drugs

def test_drug_grams_in_grams_and_in_latin_units():
    assert _vals("查获海洛因5克。")["drug_grams"] == 5.0
    assert _vals("查获海洛因10g。")["drug_grams"] == 10.0
    assert _vals("查获冰毒0.5kg。")["drug_grams"] == 500.0
    assert _vals("查获冰毒2KG。")["drug_grams"] == 2000.0
    assert _vals("查获冰毒3公斤。")["drug_grams"] == 3000.0


def test_drug_log_is_log1p_of_the_grams():
    v = _vals("查获海洛因5克。")
    assert v["drug_log"] == math.log1p(5.0)


def test_a_sentence_without_drugs_does_not_stop_the_reading():
    facts = "被告人体重65公斤。民警在其住处查获海洛因5克。"
    f = extract_features(facts)
    drugs = _named(f, "drug_grams")
    assert [(m.value, m.text) for m in drugs] == [(5.0, "5克")]
    _spans_point_at_their_text(facts, f)
    assert f.evidence("drug_grams") == drugs and f.evidence("drug_log") == drugs


def test_an_unreadable_quantity_does_not_hide_the_next_one():
    f = extract_features("查获海洛因数百克，其中一包净重5克。")
    assert f.values["drug_grams"] == 5.0


# ----------------------------------------------------------------------------------------------- circumstances

def test_a_negation_at_the_start_of_the_facts_counts():
    assert "自首" not in _vals("不构成自首。")
    assert "前科" not in _vals("无前科。")
    f = extract_features("无前科。")
    assert [m.negated for m in _named(f, "前科")] == [True]
    assert f.evidence("前科") == []


def test_circumstance_matches_carry_value_one_and_their_span():
    facts = "被告人到案后如实供述，系累犯，系累犯。"
    f = extract_features(facts)
    _spans_point_at_their_text(facts, f)
    circ = [m for m in f.matches if m.name in CIRCUMSTANCES]
    assert circ and all(m.value == 1.0 for m in circ)
    assert f.values["累犯"] == 2.0
    assert [m.text for m in f.evidence("累犯")] == ["累犯", "累犯"]


def test_evidence_is_limited_to_three_by_default():
    f = extract_features("一次入户，二次入户，三次入户，四次入户。")
    assert f.values["入户"] == 4.0
    ev = f.evidence("入户")
    assert len(ev) == 3
    assert ev == _named(f, "入户")[:3]
    assert len(f.evidence("入户", limit=4)) == 4


def test_present_and_circumstances_in_their_declared_order():
    f = extract_features("被告人系累犯，到案后如实供述，其无前科。")
    assert f.present("累犯") and f.present("坦白")
    assert not f.present("前科") and not f.present("自首") and not f.present("no such feature")
    assert f.circumstances == [n for n in CIRCUMSTANCES if n in ("坦白", "累犯")]
    assert FactFeatures(values={"累犯": 1.0}).present("累犯")
    assert not FactFeatures(values={"累犯": 0.0}).present("累犯")
    assert FactFeatures(values={"累犯": 0.5}).present("累犯")


# ----------------------------------------------------------------------------------------------- people, dates

def test_victim_and_defendant_matches_name_the_person_with_their_span():
    facts = "被告人王某殴打被害人李某某，被告人王某又殴打被害人李某某。"
    f = extract_features(facts)
    _spans_point_at_their_text(facts, f)
    victims, defendants = f.evidence("victim"), f.evidence("defendant")
    assert [(m.text, m.value, m.start) for m in victims] == [("被害人李某某", 1.0, facts.index("被害人"))]
    assert [(m.text, m.value, m.start) for m in defendants] == [("被告人王某", 1.0, 0)]
    assert f.values["victims"] == 1.0 and f.values["defendants"] == 1.0


def test_facts_naming_no_defendant_count_one():
    assert _vals("某日在公共场所随意殴打他人。")["defendants"] == 1.0
    assert _vals("")["defendants"] == 1.0
    assert _vals("被告人甲1与被告人乙2共同殴打他人。")["defendants"] == 2.0


def test_incidents_count_distinct_dates():
    v = _vals("2019年3月5日窃得现金100元。2019年4月窃得现金200元。2019年3月5日又至该处。")
    assert v["incidents"] == 2.0
    assert _vals("某日窃得现金100元。")["incidents"] == 0.0


# ----------------------------------------------------------------------------------------------- length boundary

@settings(max_examples=30, deadline=None)
@given(n=st.integers(min_value=0, max_value=60))
def test_facts_of_exactly_max_chars_are_read_whole_and_one_more_is_truncated(n):
    facts = "某" * n
    whole = extract_features(facts, max_chars=n)
    assert whole.values["fact_chars"] == float(n)
    assert not any("truncated" in note for note in whole.notes)
    cut = extract_features(facts + "某", max_chars=n)
    assert cut.values["fact_chars"] == float(n)
    assert f"facts truncated from {n + 1} to {n} characters for feature extraction" in cut.notes


# ----------------------------------------------------------------------------------------------- serialised form

def test_to_dict_keeps_values_notes_and_every_match():
    facts = "被告人王某窃得现金100元，不构成自首。"
    f = extract_features(facts)
    d = f.to_dict()
    assert set(d) == {"values", "notes", "matches"}
    assert d["values"] == f.values
    assert d["notes"] == list(f.notes)
    assert d["matches"] == [m.to_dict() for m in f.matches]
    amount = next(m for m in d["matches"] if m["name"] == "amount")
    assert amount == {"name": "amount", "value": 100.0, "span": [facts.index("100"), facts.index("，")],
                      "text": "100元", "negated": False}
    surrender = next(m for m in d["matches"] if m["name"] == "自首")
    assert surrender["negated"] is True and surrender["text"] == "自首"


def test_match_to_dict():
    assert Match("累犯", 1.0, 3, 5, "累犯", negated=True).to_dict() == {
        "name": "累犯", "value": 1.0, "span": [3, 5], "text": "累犯", "negated": True}
