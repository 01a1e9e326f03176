"""The quoted legal basis: quotes cut verbatim from their articles with their exceptions, the limitation-period
article for a claim, the number check, and the honest fallback of a selection that decides nothing."""

from __future__ import annotations

import pytest
from support.selector import selector

from legalrag.answer.basis import (amounts, asks_quantity, basis_block, build_basis, decisive_quote, fallback_text, is_claim,
                                   limitation_article, unquoted_amounts, unquoted_note)
from legalrag.types import Document, Hit


def _doc(i, law, label, article, text):
    return Document(id=str(i), text=text, title=f"{law}{label}",
                    metadata={"law": law, "article": article, "article_label": label})


DISMISS = _doc(1, "中华人民共和国劳动合同法", "第四十二条", "42",
               "劳动者有下列情形之一的，用人单位不得依照本法第四十条、第四十一条的规定解除劳动合同：\n"
               "（一）从事接触职业病危害作业的劳动者未进行离岗前职业健康检查，或者疑似职业病病人在诊断或者医学观察期间的；\n"
               "（二）在本单位患职业病或者因工负伤并被确认丧失或者部分丧失劳动能力的；\n"
               "（三）患病或者非因工负伤，在规定的医疗期内的；\n"
               "（四）女职工在孕期、产期、哺乳期的；")
REPAIR = _doc(2, "中华人民共和国民法典", "第七百一十二条", "712",
              "出租人应当履行租赁物的维修义务，但是当事人另有约定的除外。")
SUBLET = _doc(3, "中华人民共和国民法典", "第七百一十六条", "716",
              "承租人经出租人同意，可以将租赁物转租给第三人。承租人转租的，承租人与出租人之间的租赁合同继续有效；第三人造成租赁物"
              "损失的，承租人应当赔偿损失。\n承租人未经出租人同意转租的，出租人可以解除合同。但是，出租人知道或者应当知道承租人"
              "转租，但是在六个月内未提出异议的除外。")
DOUBLE = _doc(4, "中华人民共和国劳动合同法", "第八十二条", "82",
              "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。\n"
              "用人单位违反本法规定不与劳动者订立无固定期限劳动合同的，自应当订立无固定期限劳动合同之日起向劳动者每月支付二倍的工资。")
LIMITATION = _doc(187, "中华人民共和国民法典", "第一百八十八条", "188",
                  "向人民法院请求保护民事权利的诉讼时效期间为三年。法律另有规定的，依照其规定。\n"
                  "诉讼时效期间自权利人知道或者应当知道权利受到损害以及义务人之日起计算。法律另有规定的，依照其规定。但是，自权利受到"
                  "损害之日起超过二十年的，人民法院不予保护，有特殊情况的，人民法院可以根据权利人的申请决定延长。")
ALL = (DISMISS, REPAIR, SUBLET, DOUBLE, LIMITATION)


def _hits(*docs):
    return [Hit(d, 1.0 / (i + 1), i + 1) for i, d in enumerate(docs)]


@pytest.mark.parametrize("question", ["我怀孕了公司能辞退我吗？", "房东不修漏水的房子怎么办？", "二房东没经过房东同意转租，房东能解约吗？",
                                      "没签劳动合同能要双倍工资吗？", "欠款多久不能起诉了？", "完全无关的问题"])
def test_every_quote_is_a_verbatim_substring_of_its_article(question):
    basis = build_basis(question, _hits(*ALL), k=3)
    assert 1 <= len(basis.quotes) <= 3
    for q in basis.quotes:
        doc = next(d for d in ALL if d.id == q.document_id)
        assert q.citation == f"《{doc.metadata['law']}》{doc.metadata['article_label']}"  # named as the corpus names it
        pieces = [doc.text[a:b] for a, b in q.spans]
        assert all(p and p in doc.text for p in pieces)
        assert q.text.replace("…", "") == "".join(pieces)  # the shown quote is the pieces, nothing written in


def test_a_quoted_rule_keeps_its_exception():
    q = decisive_quote("房东不同意转租，能解除合同吗", SUBLET)
    assert q.text == ("承租人未经出租人同意转租的，出租人可以解除合同。但是，出租人知道或者应当知道承租人转租，但是在六个月内未提出异议的除外。")
    assert q.exceptions == 1
    repair = decisive_quote("房东不修", REPAIR)
    assert repair.text.endswith("但是当事人另有约定的除外。")


def test_a_numbered_item_is_quoted_after_the_sentence_that_opens_its_list():
    q = decisive_quote("女职工在孕期被辞退", DISMISS)
    assert q.text.startswith("劳动者有下列情形之一的，用人单位不得") and q.text.endswith("（四）女职工在孕期、产期、哺乳期的；")
    assert len(q.spans) == 2 and "…" in q.text


def test_a_claim_gets_the_limitation_article_and_other_questions_do_not():
    assert is_claim("公司拖欠工资，我想讨薪") and is_claim("房东不退押金，我该怎么办？")
    assert is_claim("我能要求公司支付双倍工资吗") and not is_claim("喝了酒开车被查了，会坐牢吗？")
    found = limitation_article(ALL)
    assert found is LIMITATION
    claim = build_basis("没签劳动合同，我要求公司支付双倍工资", _hits(DOUBLE, DISMISS, REPAIR), limitation=found)
    assert [q.document_id for q in claim.quotes] == [DOUBLE.id, DISMISS.id, LIMITATION.id]  # at most 3, it last
    assert claim.quotes[-1].role == "limitation"
    assert claim.quotes[-1].text == "向人民法院请求保护民事权利的诉讼时效期间为三年。法律另有规定的，依照其规定。"
    other = build_basis("醉驾会坐牢吗", _hits(DOUBLE, DISMISS), limitation=found)
    assert LIMITATION.id not in other.ids


def test_a_number_absent_from_the_quotes_is_marked():
    quotes = [DOUBLE.text, "自用工之日起满一个月的次日至满一年的前一日应当向劳动者每月支付两倍的工资"]
    answer = ("结论：可以要求二倍工资。从满一个月的次日至满一年的前一日，最多可以要十一个月。\n"
              "怎么做：诉讼时效为一年，请在十五日内申请仲裁。你每月工资5000元。")
    found = unquoted_amounts(answer, quotes, question="我每月工资5000元，没签合同")
    assert [a.text for a in found] == ["一年", "十五日"]  # 一年 is in the quotes, but not about 诉讼时效
    note = unquoted_note(found, answer)
    assert note.startswith("〔不是出自法条〕") and "“一年”（怎么做：诉讼时效为一年，请在十五日内申请仲裁）" in note
    # the limitation article quoted: its three years is from the law, one year is not
    limit = [LIMITATION.text[:24]]
    assert unquoted_amounts("诉讼时效为三年。", limit) == []
    assert [a.text for a in unquoted_amounts("诉讼时效为二年。", limit)] == ["二年"]
    # a computed value without the working shown is marked
    assert [a.text for a in unquoted_amounts("最多十一个月。", quotes)] == ["十一个月"]
    # article numbers, dates and years are not periods
    assert amounts("依据第一百八十八条，2023年3月1日起") == []


def test_basis_block_and_fallback_name_every_article_with_its_quote():
    basis = build_basis("房东不修", _hits(REPAIR, SUBLET))
    block = basis_block(basis)
    assert block.splitlines()[0] == "法律依据："
    assert "[1] 《中华人民共和国民法典》第七百一十二条：“出租人应当履行租赁物的维修义务，但是当事人另有约定的除外。”" in block
    text = fallback_text(basis)
    assert "不能下结论" in text and "结论：" not in text and "需要核对" in text and "《中华人民共和国民法典》第七百一十六条" in text
    assert "可以" not in text.split("需要核对")[0].replace("可以将", "")  # no conclusion stated


def test_a_low_probability_selection_gives_a_low_basis_of_the_best_ranked():
    low = build_basis("房东不修", _hits(REPAIR, SUBLET, DOUBLE, DISMISS), selector(-4.0).select("房东不修", _hits(
        REPAIR, SUBLET, DOUBLE, DISMISS)))
    assert low.low and low.selected and len(low.quotes) == 3 and {q.role for q in low.quotes} == {"related"}
    high = build_basis("房东不修", _hits(REPAIR, SUBLET), selector(4.0).select("房东不修", _hits(REPAIR, SUBLET)))
    assert not high.low and high.ids == [REPAIR.id, SUBLET.id]
    assert all(q.probability is not None and q.probability > 0.9 for q in high.quotes)


CAPITAL = Document(id="公司法第四十七条@2023-12-29", title="公司法第四十七条", metadata={"law": "公司法", "article": "47"},
                   text="有限责任公司的注册资本为在公司登记机关登记的全体股东认缴的出资额。全体股东认缴的出资额由股东按照公司章程"
                        "的规定自公司成立之日起五年内缴足。\n\n法律、行政法规以及国务院决定对有限责任公司注册资本实缴、"
                        "注册资本最低限额、股东出资期限另有规定的，从其规定。")


def test_a_question_asking_how_long_is_quoted_the_clause_that_states_the_period():
    asked = decisive_quote("有限责任公司的股东认缴的出资额应当在多长时间内缴足？", CAPITAL)
    assert "五年内缴足" in asked.text and asked.text in CAPITAL.text
    # the same words without asking for a period: the earliest of the tied clauses, as before
    plain = decisive_quote("有限责任公司的股东认缴的出资额怎么缴足？", CAPITAL)
    assert "五年内缴足" not in plain.text and plain.text.startswith("有限责任公司的注册资本")


@pytest.mark.parametrize("question,asks", [("试用期最长多久", True), ("要赔多少钱", True), ("几个月的工资", True),
                                           ("How long is the limitation period?", True), ("能不能解除合同", False),
                                           ("公司不签合同怎么办", False)])
def test_which_questions_ask_for_a_period_or_an_amount(question, asks):
    assert asks_quantity(question) is asks


TRANSFER = Document(id="11781", title="农村土地承包法第四十二条", metadata={"law": "农村土地承包法", "article": "42"},
                    text="承包方不得单方解除土地经营权流转合同，但受让方有下列情形之一的除外：\n\n（一）擅自改变土地的农业用途；\n\n"
                         "（二）弃耕抛荒连续两年以上；\n\n（三）给土地造成严重损害或者严重破坏土地生态环境；\n\n（四）其他严重违约行为。")


def test_an_exception_that_opens_a_list_is_quoted_with_the_item_the_question_names():
    q = decisive_quote("土地经营权流转中，受让方擅自改变土地用途，承包方可以解除合同吗？", TRANSFER)
    assert q.text.startswith("承包方不得单方解除") and q.text.endswith("（一）擅自改变土地的农业用途；")
    assert all(TRANSFER.text[a:b] in q.text for a, b in q.spans) and len(q.spans) == 2
    other = decisive_quote("受让方弃耕抛荒连续两年以上，承包方能解除流转合同吗？", TRANSFER)
    assert other.text.endswith("（二）弃耕抛荒连续两年以上；")
