"""Fact features: amounts (Arabic, Chinese numerals, 万), drug grams, people, circumstances with spans."""

from legalrag.judgment.features import COLUMNS, extract_features


def _vals(facts):
    return extract_features(facts).values


def test_amounts_in_arabic_chinese_and_wan_with_spans():
    facts = "被告人王某盗窃被害人李某某的手机一部，价值人民币一万二千元，另窃得现金3,500元及2.3万余元。"
    f = extract_features(facts)
    amounts = [m for m in f.matches if m.name == "amount"]
    assert [m.value for m in amounts] == [12000.0, 3500.0, 23000.0]
    for m in amounts:  # every span points at the text it was read from
        assert facts[m.start:m.end] == m.text
    assert f.values["amount_max"] == 23000.0
    assert f.values["amount_sum"] == 12000.0 + 3500.0 + 23000.0


def test_total_is_preferred_and_contradictory_totals_are_flagged():
    f = extract_features("窃得现金1000元、2000元，共计3000元。后查明共计人民币5000元。")
    assert f.values["amount_total"] == 5000.0
    assert f.values["contradictory_amounts"] == 1.0
    assert any("contradictory amounts" in n for n in f.notes)
    assert "contradictory_amounts" not in _vals("窃得现金1000元、2000元，共计3000元。")


def test_no_amount_is_a_note_not_an_error():
    f = extract_features("被告人张某在公共场所随意殴打他人。")
    assert "amount_max" not in f.values
    assert any("no amount" in n for n in f.notes)
    assert extract_features("").values["fact_chars"] == 0.0


def test_drug_grams_only_in_drug_sentences():
    f = extract_features("民警查获甲基苯丙胺2包，净重1.2千克。被告人体重65公斤。")
    assert f.values["drug_grams"] == 1200.0
    assert "drug_grams" not in _vals("被告人体重65公斤。")


def test_circumstances_and_negation():
    facts = ("被告人赵某某系累犯。到案后如实供述犯罪事实，当庭自愿认罪，签署认罪认罚具结书，已退赔被害人"
             "全部损失并取得谅解。其不构成自首，无前科。作案时系未成年人，在共同犯罪中起次要作用，系从犯，"
             "犯罪未遂，有立功表现。")
    v = _vals(facts)
    for name in ("累犯", "坦白", "当庭自愿认罪", "认罪认罚", "退赃退赔", "谅解", "未成年", "从犯", "未遂", "立功"):
        assert v.get(name, 0) >= 1, name
    assert "自首" not in v and "前科" not in v
    f = extract_features(facts)
    negated = {m.name for m in f.matches if m.negated}
    assert {"自首", "前科"} <= negated
    assert f.evidence("累犯")[0].text == "累犯"


def test_victims_and_defendants_are_counted_once_each():
    v = _vals("被告人甲1殴打被害人刘某某，被告人乙2殴打被害人王某1，被告人甲1又殴打被害人刘某某。")
    assert v["defendants"] == 2.0 and v["victims"] == 2.0


def test_long_facts_are_truncated_with_a_note():
    f = extract_features("盗窃现金100元。" + "某" * 10_000, max_chars=500)
    assert f.values["fact_chars"] == 500.0
    assert any("truncated" in n for n in f.notes)


def test_columns_cover_every_circumstance():
    from legalrag.judgment.features import CIRCUMSTANCES

    assert set(CIRCUMSTANCES) <= set(COLUMNS)
