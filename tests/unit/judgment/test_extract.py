"""Section splitting, number reading, field extraction and penalty metrics on small inline judgments."""

from __future__ import annotations

import pytest

from legalrag.judgment.extract import (DEATH_MONTHS, LIFE_MONTHS, CitedArticle, charge_names, charges_in,
                                       extract_fields, normalize_charge, term_months)
from legalrag.judgment.metrics import evaluate_judgments, penalty_score, recall_precision
from legalrag.judgment.numbers import numbers_in
from legalrag.judgment.sections import normalize, split_sections

DOC = (
    "张三盗窃罪一审刑事判决书\n某省某县人民法院 刑事判决书 （2018）某0101刑初12号\n"
    "公诉机关某县人民检察院。\n被告人张三，男。\n某县人民检察院以起诉书指控被告人张三犯盗窃罪，"
    "本院依法适用简易程序，公开开庭审理了本案。现已审理终结。\n"
    "某县人民检察院指控，2018年1月1日，被告人张三窃取他人手机一部，价值人民币3000元。\n"
    "本院认为，被告人张三以非法占有为目的，秘密窃取他人财物，数额较大，其行为已构成盗窃罪。"
    "被告人到案后如实供述，依照《中华人民共和国刑法》第二百六十四条、第六十七条第三款、第五十二条、"
    "第五十三条之规定，判决如下：\n"
    "被告人张三犯盗窃罪，判处有期徒刑一年六个月，缓刑二年，并处罚金人民币二万元。\n"
    "如不服本判决，可在接到判决书的第二日起十日内提出上诉。\n审判员 李四\n二〇一八年三月一日\n书记员 王五"
)


def test_split_sections_finds_every_part():
    s = split_sections(DOC)
    assert s.heading.endswith("现已审理终结。")
    assert s.facts.lstrip().startswith("某县人民检察院指控")
    assert s.reasoning.startswith("本院认为") and s.reasoning.endswith("判决如下：")
    assert s.result.strip().startswith("被告人张三犯盗窃罪") and "如不服本判决" not in s.result
    assert s.appendix.startswith("如不服本判决") and "书记员" in s.appendix
    assert s.parsed


@pytest.mark.parametrize("marker", ["判决如下：", "判决如下，", "判决如下\n", "判决如下", "裁定如下："])
def test_reasoning_end_markers(marker):
    s = split_sections(f"审理终结。事实。本院认为，构成盗窃罪，{marker}被告人甲犯盗窃罪，判处拘役三个月。")
    assert s.reasoning.endswith(marker.strip("\n") if marker.endswith("\n") else marker) or s.reasoning.endswith(marker)
    assert "拘役三个月" in s.result


@pytest.mark.parametrize("tail,cut", [
    ("如不服本判决，可上诉。", "如不服本判决"),
    ("\n本判决为终审判决。", "本判决为终审判决"),
    ("\n审 判 长 赵六", "审 判 长".replace(" ", "")),  # spaces are removed by normalisation
    ("\n代理审判员 赵六", "代理审判员"),
    ("附：本判决适用的法律条文", "附："),
    ("附录", "附录"),
    ("\n《中华人民共和国刑法》第二百六十四条", "《中华人民共和国"),
])
def test_result_end_markers(tail, cut):
    s = split_sections("审理终结。本院认为，构成盗窃罪，判决如下：被告人甲犯盗窃罪，判处拘役三个月。" + tail)
    assert s.result.strip() == "被告人甲犯盗窃罪，判处拘役三个月。"
    assert cut in s.appendix


def test_heading_falls_back_to_prosecution_marker_and_missing_markers_are_empty():
    s = split_sections("某县人民法院刑事判决书。公诉机关某县人民检察院指控被告人甲犯盗窃罪。本院认为构成盗窃罪。判决如下：甲犯盗窃罪。")
    assert s.heading == "某县人民法院刑事判决书。"
    assert s.facts.startswith("公诉机关某县人民检察院指控")
    bare = split_sections("一段没有任何标记的文字。")
    assert bare.heading == bare.facts == "" and not bare.parsed


def test_extra_markers_are_fallbacks_only():
    text = "审理终结。查明事实。本院经审理认为，构成盗窃罪，判处如下：被告人甲犯盗窃罪，判处拘役三个月。\n书记员 某"
    strict, broad = split_sections(text), split_sections(text, extra_markers=True)
    assert strict.facts == "" and broad.facts == "查明事实。"
    assert broad.reasoning.endswith("判处如下：") and broad.result.endswith("判处拘役三个月。")
    assert broad.parsed and not strict.parsed


def test_normalize_punctuation_and_markup():
    assert normalize(" a(b):c,d 1,000<p>x</p>") == "a（b）：c，d1,000x"
    assert normalize("甲\u3000乙&amp;丙") == "甲 乙&丙"


@pytest.mark.parametrize("text,expected", [
    ("有期徒刑一年六个月", [1, 6]), ("有期徒刑1年6个月", [1, 6]), ("有期徒刑一年零六个月", [1, 6]),
    ("有期徒刑两年", []), ("罚金人民币两万元", [20000]), ("有期徒刑一年半", [1]), ("有期徒刑十一个月", [11]),
    ("罚金人民币1.5万元", [15000]), ("罚金人民币一万五千元", [15000]), ("罚金5千元", [5000]),
    ("罚金人民币壹万元", [10000]), ("罚金人民币贰仟元", [2000]), ("罚金三万五元", [35000]),
    ("罚金2万5千元", [20000, 5000]), ("罚金万元", []), ("罚金人民币四点五万元", [45000]),
    ("罚金人民币3000.00元", [3000]), ("有期徒刑1年零6个月", [1, 0, 6]), ("罚金人民币一万零五百元", [10500]),
    ("罚金人民币６０００元", []), ("罚金人民币一亿元", [100000000]), ("第一百零二条", [102]),
])
def test_numbers_in(text, expected):
    assert numbers_in(text) == [float(x) for x in expected]


def test_numbers_in_agrees_with_chinese2digits():
    c2d = pytest.importorskip("chinese2digits")
    for text in ["有期徒刑三年二个月", "拘役一个月", "罚金人民币一千五百元", "有期徒刑十年零八个月", "管制二年",
                 "罚金人民币二千元（已缴纳", "罚金RMB2000元", "罚金人民币5000元", "罚金人民币0.5万元"]:
        assert numbers_in(text) == [float(x) for x in c2d.takeNumberFromString(text)["digitsStringList"]], text


@pytest.mark.parametrize("phrase,months", [
    ("有期徒刑一年六个月", 18), ("有期徒刑三年", 36), ("拘役五个月", 5), ("管制一年", 12), ("有期徒刑十五年", 180),
    ("无期徒刑", LIFE_MONTHS), ("死刑", DEATH_MONTHS), ("免予刑事处罚", 0), ("无罪", 0),
])
def test_term_months(phrase, months):
    assert term_months(phrase) == months


def test_extract_fields_on_a_full_judgment():
    f = extract_fields(DOC)
    assert f.charges == ("盗窃罪",)
    assert f.prison_months == 18  # the probation (缓刑二年) is ignored
    assert f.fine_yuan == 20000
    assert CitedArticle(67, None, 3) in f.articles
    assert f.article_numbers == (52, 53, 67, 264)


def test_multiple_defendants_and_arabic_amounts():
    doc = ("审理终结。本院认为，构成诈骗罪，依照《刑法》第二百六十六条、第二十五条第一款之规定，判决如下：\n"
           "一、被告人甲犯诈骗罪，判处有期徒刑二年，并处罚金人民币5,000元；\n"
           "二、被告人乙犯诈骗罪，判处有期徒刑一年，并处罚金人民币3000元。\n如不服本判决，可上诉。")
    f = extract_fields(doc)
    assert f.charges == ("诈骗罪",) and f.prison_months == 36 and f.fine_yuan == 8000
    assert f.article_numbers == (25, 266)


def test_articles_with_zhi_yi_count_as_base_number_and_other_laws_are_ignored():
    doc = ("审理终结。本院认为，构成危险驾驶罪，依照《中华人民共和国刑法》第一百三十三条之一第一款第（二）项、"
           "《中华人民共和国道路交通安全法》第九十一条之规定，判决如下：被告人甲犯危险驾驶罪，判处拘役二个月，"
           "并处罚金人民币三千元。")
    f = extract_fields(doc)
    assert [a.key for a in f.articles] == ["133-1"] and f.article_numbers == (133,)
    assert f.charges == ("危险驾驶罪",) and f.prison_months == 2 and f.fine_yuan == 3000


def test_death_and_life_sentences():
    life = extract_fields("审理终结。本院认为构成故意杀人罪。判决如下：被告人甲犯故意杀人罪，判处无期徒刑，剥夺政治权利终身。")
    death = extract_fields("审理终结。本院认为构成故意杀人罪。判决如下：被告人甲犯故意杀人罪，判处死刑，剥夺政治权利终身。")
    assert life.prison_months == LIFE_MONTHS and death.prison_months == DEATH_MONTHS
    assert penalty_score(death.prison_months, life.prison_months) == 0.0
    assert penalty_score(death.prison_months, death.prison_months) == 1.0


def test_charge_normalisation():
    names = charge_names()
    assert len(names) > 400 and "盗窃罪" in names
    assert normalize_charge("贩卖毒品罪") == "走私、贩卖、运输、制造毒品罪"
    assert normalize_charge("非法持有枪支罪") == "非法持有、私藏枪支、弹药罪"
    assert normalize_charge("盗切罪") == "盗窃罪"  # edit distance 1 of 3
    assert normalize_charge("了一个完全不像任何罪名的东西罪") == ""
    assert charges_in("被告人甲犯盗窃罪，判处拘役三个月；被告人乙犯故意伤害罪。撤销原判犯抢劫罪") == ["盗窃罪", "故意伤害罪"]


def test_penalty_score_rules():
    assert penalty_score(12, 24) == 0.5
    assert penalty_score(0, 0) == 1.0
    assert penalty_score(None, None) is None
    assert penalty_score(None, 12) == 0.0 and penalty_score(0, 12) == 0.0


def test_recall_precision_empty_sets():
    assert recall_precision([], []) == (0.0, 0.0)
    assert recall_precision([1, 2], [2]) == (1.0, 0.5)


def test_evaluate_aggregates_like_the_benchmark():
    gold = {"a": DOC, "b": DOC.replace("一年六个月", "二年").replace("二万元", "一万元")}
    pred = {"a": DOC, "b": None}  # b missing: scores zero everywhere, listed as unparsed
    r = evaluate_judgments(pred, gold)
    assert r.n == 2 and r.unparsed == ("b",)
    assert r.prison == pytest.approx(0.5) and r.fine == pytest.approx(0.5)
    assert r.charge_precision == pytest.approx(0.5) and r.charge_f1 == pytest.approx(0.5)
    assert r.article_recall == pytest.approx(0.5)


def test_evaluate_missing_prediction_is_not_unparsed():
    gold = {"a": DOC, "b": DOC}
    r = evaluate_judgments({"a": DOC}, gold)  # b has no prediction line at all: scored as empty, listed as missing
    assert r.n == 2 and r.missing == ("b",) and r.unparsed == () and r.charge_f1 == pytest.approx(0.5)
    r = evaluate_judgments({"a": DOC}, gold, skip_missing=True)
    assert r.n == 1 and r.missing == ("b",) and r.charge_f1 == 1.0 and not r.missing_scored


@pytest.mark.parametrize("marker", ["作出如下判决：", "裁判结论：", "判处如下："])
def test_extra_reasoning_end_markers_used_by_llm_drafts(marker):
    text = f"审理终结。事实。本院认为，构成贩卖毒品罪，{marker}\n被告人甲犯贩卖毒品罪，判处有期徒刑六个月。\n如不服本判决，可上诉。"
    assert not split_sections(text).parsed
    broad = split_sections(text, extra_markers=True)
    assert broad.parsed and broad.result.strip() == "被告人甲犯贩卖毒品罪，判处有期徒刑六个月。"


def test_numbers_in_reads_every_official_numeral():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from legalrag.numerals import to_chinese

    @settings(max_examples=300, deadline=None)
    @given(st.integers(min_value=1, max_value=10**9))
    def check(n):
        assert numbers_in(f"罚金人民币{to_chinese(n)}元") == [float(n)]
        assert numbers_in(f"罚金人民币{n}元") == [float(n)]

    check()
