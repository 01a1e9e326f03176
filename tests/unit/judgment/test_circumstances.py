"""The circumstance extractor: rules over the statutory definitions, each finding with its sentence."""

from __future__ import annotations

from legalrag.judgment.circumstances import circumstance_names, find_circumstances, stated_in_reasoning


def test_a_confession_after_arrest_is_tanbai_not_zishou():
    facts = "被告人张某于2023年5月1日在某超市窃取商品价值800元，后被民警抓获。案发后，被告人张某到案后如实供述了自己的罪行。"
    found = find_circumstances(facts)
    assert [c.name for c in found] == ["坦白"]
    assert found[0].sentence == "案发后，被告人张某到案后如实供述了自己的罪行。"
    assert found[0].provision == ("中华人民共和国刑法", "67", 3)
    assert facts[found[0].start:found[0].end] == found[0].matched


def test_a_surrender_is_zishou_and_excludes_tanbai():
    assert circumstance_names("被告人李某于案发后主动到派出所投案，如实供述犯罪事实。") == {"自首"}
    assert circumstance_names("案发后被告人郭某电话报警，并在现场等候民警处理，到案后如实供述。") == {"自首"}


def test_negations_and_the_defences_claims_do_not_count():
    assert circumstance_names("被告人王某不构成自首。") == set()
    assert circumstance_names("辩护人提出被告人系从犯，请求从轻处罚。") == set()
    assert circumstance_names("被告人王某在共同犯罪中起次要作用。") == {"从犯"}


def test_each_statutory_circumstance():
    assert circumstance_names("被告人检举揭发他人犯罪行为，经查证属实。") == {"立功"}
    assert circumstance_names("公诉机关认为被告人系累犯。") == {"累犯"}
    assert circumstance_names("因被害人反抗，被告人意志以外的原因未得逞。") == {"未遂"}
    assert circumstance_names("被告人自愿认罪认罚并签署具结书。") == {"认罪认罚"}
    # recidivism from the dates: released from a fixed-term sentence, a new crime within five years
    prior = "被告人曾因犯盗窃罪于2015年被判处有期徒刑二年，2017年3月1日刑满释放。2019年5月2日，被告人窃取电动车一辆。"
    assert circumstance_names(prior) == {"累犯"}
    late = "被告人曾因犯盗窃罪被判处有期徒刑二年，2010年3月1日刑满释放。2019年5月2日，被告人窃取电动车一辆。"
    assert circumstance_names(late) == set()


def test_no_circumstance_in_facts_that_state_none_or_odd_text():
    assert find_circumstances("") == [] and find_circumstances("The defendant took a bicycle.") == []
    assert circumstance_names("被告人赵某盗窃手机一部。" * 3000) == set()  # 30,000 characters: read, no error


def test_the_gold_reasoning_labels():
    assert stated_in_reasoning("被告人到案后如实供述自己的罪行，依法可以从轻处罚。") == {"坦白"}
    assert stated_in_reasoning("被告人主动投案，如实供述，系自首。依照第六十七条第一款之规定") == {"自首"}
    assert stated_in_reasoning("辩护人提出系自首，经查不能认定为自首。依照第六十七条第三款") == {"坦白"}
    assert stated_in_reasoning("依照《中华人民共和国刑法》第二百六十四条、第六十五条第一款之规定") == {"累犯"}


def test_several_defendants_each_get_their_own_circumstances():
    facts = ("被告人张某、李某共同盗窃电动车三辆。被告人张某在共同犯罪中起次要作用。被告人李某于案发后主动到派出所投案，如实供述犯罪事实。"
             "被告人张某到案后如实供述。")
    found = {(c.name, c.defendant) for c in find_circumstances(facts)}
    assert found == {("从犯", "张某"), ("自首", "李某"), ("坦白", "张某")}
