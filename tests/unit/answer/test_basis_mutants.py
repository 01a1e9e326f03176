"""The quoted legal basis, pinned where mutation testing found it unpinned: which clause a person is quoted (a short
article whole, a "；" sentence whole, the rule's own reservation, the quantity a how-long question asks for, the
item of a list an exception opens), how the basis is assembled (its size, the limitation article, its labels), how
it is printed, and which stated periods and amounts the number check marks."""

from __future__ import annotations

import pytest

from legalrag.answer.basis import (CONCLUSION_FLOOR, MAX_BASIS, Amount, Basis, amounts, asks_quantity, basis_block,
                                   build_basis, decisive_quote, fallback_text, is_claim, limitation_article,
                                   prompt_quotes, unquoted_amounts, unquoted_note)
from legalrag.types import Document, Hit, Quoted

LAW = "中华人民共和国测试法"


def _doc(i, text, law=LAW, article="1", label="第一条"):
    return Document(id=str(i), text=text, title=f"{law}{label}",
                    metadata={"law": law, "article": article, "article_label": label})


def _hits(*docs):
    return [Hit(d, 1.0 / (i + 1), i + 1) for i, d in enumerate(docs)]


LIMIT = _doc(188, "向人民法院请求保护民事权利的诉讼时效期间为三年。法律另有规定的，依照其规定。\n"
                  "诉讼时效期间自权利人知道或者应当知道权利受到损害以及义务人之日起计算。",
             law="中华人民共和国民法典", article="188", label="第一百八十八条")
A = _doc(1, "出租人应当履行租赁物的维修义务。")
B = _doc(2, "承租人应当按照约定的方法使用租赁物。", label="第二条")
C = _doc(3, "承租人应当妥善保管租赁物。", label="第三条")
D = _doc(4, "承租人应当按照约定的期限支付租金。", label="第四条")


# -- which clause is quoted ----------------------------------------------------------------------------------------

def test_a_short_article_is_quoted_whole_with_its_offsets_and_the_callers_probability_and_role():
    doc = _doc(9, "  出租人应当履行租赁物的维修义务。  ")
    q = decisive_quote("维修", doc, probability=0.7, role="related")
    assert q == Quoted("9", f"《{LAW}》第一条", "出租人应当履行租赁物的维修义务。", ((2, 18),), 0.7, "related", 0)


def test_an_article_of_two_lines_is_quoted_at_its_clause_not_whole():
    doc = _doc(9, "出租人应当履行租赁物的维修义务。\n承租人应当妥善保管租赁物。")
    q = decisive_quote("妥善保管", doc)
    assert q.text == "承租人应当妥善保管租赁物。" and q.spans == ((17, 30),)


def test_a_long_one_line_article_is_quoted_at_its_best_clause():
    text = ("出租人应当按照约定将租赁物交付承租人，并在租赁期限内保持租赁物符合约定的用途。"
            "承租人应当妥善保管租赁物，因保管不善造成租赁物毁损、灭失的，应当承担赔偿责任，但是不可抗力造成的损失由出租人承担。")
    assert len(text) > 90
    q = decisive_quote("保管不善 毁损 灭失 赔偿", _doc(9, text))
    assert q.text == "承租人应当妥善保管租赁物，因保管不善造成租赁物毁损、灭失的，应当承担赔偿责任，但是不可抗力造成的损失由出租人承担。"


SEMI = _doc(5, "用人单位应当按时足额支付劳动报酬；用人单位拖欠或者未足额支付劳动报酬的，劳动者可以依法向当地人民法院申请支付令。\n"
               "劳动者拒绝用人单位管理人员违章指挥、强令冒险作业的，不视为违反劳动合同。"
               "对危害生命安全和身体健康的劳动条件，有权对用人单位提出批评、检举和控告。")


def test_a_clause_cut_at_a_semicolon_is_quoted_with_the_whole_sentence():
    after = decisive_quote("拖欠 申请支付令", SEMI)
    assert after.text == ("用人单位应当按时足额支付劳动报酬；用人单位拖欠或者未足额支付劳动报酬的，劳动者可以依法向当地人民法院申请"
                          "支付令。") and after.spans == ((0, 56),)
    before = decisive_quote("按时足额", SEMI)
    assert before.text == after.text and before.spans == after.spans
    # a sentence ended by "。" does not take the one after it in
    alone = decisive_quote("批评 检举 控告", SEMI)
    assert alone.text == "对危害生命安全和身体健康的劳动条件，有权对用人单位提出批评、检举和控告。"


def test_a_semicolon_sentence_stays_within_its_paragraph():
    doc = _doc(6, "出租人应当履行维修义务；\n承租人应当支付租金；承租人应当妥善保管租赁物。")
    q = decisive_quote("妥善保管", doc)
    assert q.text == "承租人应当支付租金；承租人应当妥善保管租赁物。"
    first = decisive_quote("维修义务", doc)
    assert first.text == "出租人应当履行维修义务；"


def test_a_semicolon_sentence_longer_than_300_characters_is_quoted_at_its_clause():
    nouns = "房屋 车辆 设备 货物 仪器 船舶 机器 图书 家具 电脑 土地 钢材 粮食 药品 布匹".split()
    text = "；".join(f"承租人应当妥善保管所租的{n}并且承担因保管不善而发生的全部维修费用" for n in nouns) + "。\n出租人可以解除合同。"
    q = decisive_quote("船舶", _doc(7, text))
    assert q.text == "承租人应当妥善保管所租的船舶并且承担因保管不善而发生的全部维修费用；"


def test_the_rules_own_short_reservation_is_quoted_with_it_and_a_long_one_is_not():
    short = _doc(8, "当事人应当在知道撤销事由之日起一年内行使撤销权。\n"
                    "当事人自民事法律行为发生之日起五年内没有行使撤销权的，撤销权消灭。法律另有规定的，依照其规定。")
    q = decisive_quote("五年内没有行使撤销权", short)
    assert q.text == "当事人自民事法律行为发生之日起五年内没有行使撤销权的，撤销权消灭。法律另有规定的，依照其规定。"
    assert q.spans == ((25, 72),)
    long = _doc(8, "当事人应当在知道撤销事由之日起一年内行使撤销权。\n"
                   "当事人自民事法律行为发生之日起五年内没有行使撤销权的，撤销权消灭。法律、行政法规对撤销权另有规定的，依照其规定。")
    assert decisive_quote("五年内没有行使撤销权", long).text == "当事人自民事法律行为发生之日起五年内没有行使撤销权的，撤销权消灭。"
    # a reservation in the next paragraph is not the rule's own
    apart = _doc(8, "当事人应当在知道撤销事由之日起一年内行使撤销权。当事人自民事法律行为发生之日起五年内没有行使撤销权的，撤销权消灭。\n"
                    "法律另有规定的，依照其规定。")
    assert decisive_quote("五年内没有行使撤销权", apart).text == "当事人自民事法律行为发生之日起五年内没有行使撤销权的，撤销权消灭。"


def test_the_limitation_role_quotes_the_general_period_whatever_the_question():
    q = decisive_quote("权利人知道损害之日起计算", LIMIT, role="limitation")
    assert q.role == "limitation"
    assert q.text == "向人民法院请求保护民事权利的诉讼时效期间为三年。法律另有规定的，依照其规定。"
    # without the period's words, its first clause
    other = _doc(9, "权利人可以请求保护。\n诉讼时效期间自权利人知道之日起计算。")
    assert decisive_quote("计算", other, role="limitation").text == "权利人可以请求保护。"


CAPITAL = _doc(10, "有限责任公司的注册资本为在公司登记机关登记的全体股东认缴的出资额。全体股东认缴的出资额由股东按照公司章程"
                   "的规定自公司成立之日起五年内缴足。\n\n法律、行政法规以及国务院决定对有限责任公司注册资本实缴、"
                   "注册资本最低限额、股东出资期限另有规定的，从其规定。")


def test_the_quantity_preference_can_be_switched_off_and_needs_a_quantity_question():
    asked = "有限责任公司的股东认缴的出资额应当在多长时间内缴足？"
    assert "五年内缴足" in decisive_quote(asked, CAPITAL).text
    off = decisive_quote(asked, CAPITAL, quantity=False)
    assert off.text.startswith("有限责任公司的注册资本") and "五年" not in off.text


def test_a_clause_far_below_the_best_is_not_preferred_for_stating_a_period():
    doc = _doc(11, "用人单位解除劳动合同，应当事先将理由通知工会，工会认为不适当的，有权要求用人单位纠正。"
                   "劳动者应当在三十日内提出。\n用人单位应当研究工会的意见。")
    q = decisive_quote("用人单位解除劳动合同通知工会，工会认为不适当的，多久内要求纠正？", doc)
    assert q.text.startswith("用人单位解除劳动合同，应当事先将理由通知工会") and "三十日" not in q.text


TRANSFER = _doc(12, "承包方不得单方解除土地经营权流转合同，但受让方有下列情形之一的除外：\n\n（一）擅自改变土地的农业用途；\n\n"
                    "（二）弃耕抛荒连续两年以上；\n\n（三）给土地造成严重损害或者严重破坏土地生态环境；\n\n（四）其他严重违约行为。")


def test_the_list_item_an_exception_opens_can_be_switched_off():
    q = decisive_quote("受让方弃耕抛荒连续两年以上，承包方能解除流转合同吗？", TRANSFER)
    assert q.text == "承包方不得单方解除土地经营权流转合同，但受让方有下列情形之一的除外：…（二）弃耕抛荒连续两年以上；"
    assert q.spans[1] == (TRANSFER.text.index("（二）"), TRANSFER.text.index("（二）") + len("（二）弃耕抛荒连续两年以上；"))
    off = decisive_quote("承包方能不能单方解除流转合同", TRANSFER, list_item=False)
    assert off.text == "承包方不得单方解除土地经营权流转合同，但受让方有下列情形之一的除外：" and len(off.spans) == 1


def test_a_question_naming_no_item_gets_the_first_item_of_the_list():
    q = decisive_quote("承包方能不能单方解除流转合同", TRANSFER)
    assert q.text.endswith("…（一）擅自改变土地的农业用途；")


def test_the_list_of_an_exception_ends_at_the_first_clause_that_is_not_an_item():
    doc = _doc(13, "承包方不得单方解除合同，但受让方有下列情形之一的除外：\n（一）擅自改变用途；\n（二）弃耕抛荒；\n"
                   "受让方弃耕抛荒造成损失的，应当赔偿损失。")
    q = decisive_quote("承包方单方解除合同 受让方弃耕抛荒 损失赔偿", doc)
    assert q.text == "承包方不得单方解除合同，但受让方有下列情形之一的除外：…（二）弃耕抛荒；"


def test_an_item_is_quoted_after_the_lead_of_its_own_paragraph():
    doc = _doc(14, "用人单位可以解除劳动合同。\n劳动者有下列情形之一的，用人单位可以解除劳动合同：（一）在试用期间被证明不符合录用条件的；"
                   "（二）严重违反用人单位的规章制度的；")
    q = decisive_quote("严重违反规章制度", doc)
    assert q.text == "劳动者有下列情形之一的，用人单位可以解除劳动合同：…（二）严重违反用人单位的规章制度的；"
    lead = doc.text.index("劳动者有")
    assert q.spans[0] == (lead, doc.text.index("（一）"))


def test_tied_clauses_quote_the_earliest():
    doc = _doc(15, "承租人应当支付租金。\n承租人应当支付租金。\n出租人应当交付租赁物。")
    q = decisive_quote("承租人支付租金", doc)
    assert q.spans == ((0, 10),)


# -- the basis -----------------------------------------------------------------------------------------------------

def test_the_basis_is_at_most_three_articles_and_at_least_one():
    assert MAX_BASIS == 3
    assert build_basis("租赁物", _hits(A, B, C, D)).ids == ["1", "2", "3"]
    assert build_basis("租赁物", _hits(A, B, C, D), k=9).ids == ["1", "2", "3"]
    assert build_basis("租赁物", _hits(A, B, C, D), k=0).ids == ["1"]
    assert build_basis("租赁物", _hits(A, B, C, D), k=2).ids == ["1", "2"]


def test_the_unselected_basis_carries_no_probability_and_its_notice():
    basis = build_basis("租赁物", _hits(A, B), notice="selection unavailable")
    assert basis == Basis(basis.quotes, selected=False, low=False, threshold=None, notice="selection unavailable")
    assert [q.probability for q in basis.quotes] == [None, None] and {q.role for q in basis.quotes} == {"decisive"}


def test_a_claim_gets_the_limitation_article_appended_when_there_is_room():
    basis = build_basis("房东不退押金，我要起诉", _hits(A), limitation=LIMIT)
    assert basis.ids == ["1", "188"] and basis.quotes[1].role == "limitation"
    full = build_basis("房东不退押金，我要起诉", _hits(A, B, C), limitation=LIMIT, k=2)
    assert full.ids == ["1", "188"]


def test_the_limitation_article_is_not_added_twice_nor_to_a_low_basis_nor_to_other_questions():
    twice = build_basis("我要起诉", _hits(LIMIT, A), limitation=LIMIT)
    assert twice.ids == ["188", "1"] and twice.quotes[0].role == "decisive"
    assert build_basis("房东不修房子", _hits(A, B), limitation=LIMIT).ids == ["1", "2"]
    assert build_basis("我要起诉", _hits(A, B)).ids == ["1", "2"]


class _Cand:
    def __init__(self, doc, p):
        self.hit, self.probability = Hit(doc, 1.0, 1), p


class _Selection:  # an answer.select.ArticleSelection's shape: what build_basis reads of it
    def __init__(self, chosen, ranked, threshold):
        self.chosen, self.ranked, self.threshold = chosen, ranked, threshold


def test_a_selection_gives_its_chosen_with_their_probabilities_and_its_threshold():
    sel = _Selection([_Cand(B, 0.9), _Cand(A, 0.8)], [_Cand(B, 0.9), _Cand(A, 0.8), _Cand(C, 0.1)], 0.6)
    basis = build_basis("我要起诉房东", _hits(C, A, B), sel, limitation=LIMIT)
    assert basis.ids == ["2", "1", "188"] and basis.selected and not basis.low and basis.threshold == 0.6
    assert [q.probability for q in basis.quotes] == [0.9, 0.8, None]
    assert [q.role for q in basis.quotes] == ["decisive", "decisive", "limitation"]


def test_a_selection_that_chose_nothing_gives_its_best_ranked_as_related_with_no_limitation_article():
    sel = _Selection([], [_Cand(C, 0.3), _Cand(A, 0.2), _Cand(B, 0.1), _Cand(D, 0.05)], 0.6)
    basis = build_basis("我要起诉房东", _hits(A), sel, limitation=LIMIT)
    assert basis.ids == ["3", "1", "2"] and basis.low and basis.selected
    assert [q.role for q in basis.quotes] == ["related"] * 3 and [q.probability for q in basis.quotes] == [0.3, 0.2, 0.1]


def test_a_claim_is_the_wording_of_asking_for_money_or_suing():
    for q in ("我想告公司", "公司欠薪三个月", "老板不给工资", "我要求房东退还押金", "申请仲裁", "让他赔偿损失"):
        assert is_claim(q), q
    for q in ("公司可以调岗吗", "", None):
        assert not is_claim(q), q


def test_the_limitation_article_is_found_by_its_law_and_number():
    as_int = Document(id="x", text="t", metadata={"law": "中华人民共和国民法典", "article": 188})
    assert limitation_article([A, as_int]) is as_int
    assert limitation_article([A, _doc(5, "t", article="188")]) is None
    assert limitation_article([_doc(6, "t", law="中华人民共和国民法典", article="187")]) is None


@pytest.mark.parametrize("question", ["多长时间", "要赔多少", "几年", "几天", "几倍", "期限是什么", "时效", "最长",
                                      "最高", "赔偿比例", "上限", "HOW MUCH is it", "what is the deadline",
                                      "within what period"])
def test_questions_asking_for_a_quantity(question):
    assert asks_quantity(question)


def test_the_floor_of_a_conclusion_is_its_measured_value():
    assert CONCLUSION_FLOOR == 0.18


# -- printing --------------------------------------------------------------------------------------------------

def test_the_basis_block_and_the_prompt_in_each_language():
    basis = build_basis("维修 保管", _hits(A, C))
    assert basis_block(basis) == (f"法律依据：\n[1] 《{LAW}》第一条：“出租人应当履行租赁物的维修义务。”\n"
                                  f"[2] 《{LAW}》第三条：“承租人应当妥善保管租赁物。”")
    assert basis_block(basis, "en") == (f"Legal basis:\n[1] 《{LAW}》第一条: \"出租人应当履行租赁物的维修义务。\"\n"
                                        f"[2] 《{LAW}》第三条: \"承租人应当妥善保管租赁物。\"")
    assert prompt_quotes(basis) == (f"[1] 《{LAW}》第一条\n出租人应当履行租赁物的维修义务。\n\n"
                                    f"[2] 《{LAW}》第三条\n承租人应当妥善保管租赁物。")


def test_the_fallback_in_english_and_for_a_conclusion_that_does_not_follow():
    basis = build_basis("维修", _hits(A))
    en = fallback_text(basis, "en")
    assert en.startswith("I cannot give a conclusion: none of the retrieved provisions clearly decides this question. "
                         "The most relevant provisions found:\n"
                         f"[1] 《{LAW}》第一条: \"出租人应当履行租赁物的维修义务。\"\nWhat to check:\n1. ")
    assert "ask a lawyer or a legal aid office" in en
    assert "a conclusion could not be drawn from the quoted provisions alone" in fallback_text(basis, "en", "unsupported")
    zh = fallback_text(basis, "zh", "unsupported")
    assert zh.startswith("这个问题现在还不能下结论，因为仅凭所引法条推不出确定的结论。与你的问题最相关的法条是：\n"
                         f"[1] 《{LAW}》第一条：“出租人应当履行租赁物的维修义务。”\n需要核对：\n1. ")
    assert fallback_text(basis).startswith("这个问题现在还不能下结论，因为检索到的法条都不能明确决定这个问题。")


# -- the number check ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,family,value", [
    ("三年", "time", 36.0), ("一周年", "time", 12.0), ("六个月", "time", 6.0), ("六月", "time", 6.0),
    ("三周", "time", 0.7), ("两星期", "time", 14 / 30), ("两个星期", "time", 14 / 30), ("十五日", "time", 0.5),
    ("三十天", "time", 1.0), ("十二个工作日", "time", 0.4), ("三工作日", "time", 0.1), ("二十四小时", "time", 24 / 720),
    ("5000元", "money", 5000.0), ("1.5万元", "money", 15000.0), ("二倍", "times", 2.0), ("双倍", "times", 2.0),
    ("20%", "percent", 20.0), ("20％", "percent", 20.0), ("百分之二十", "percent", 20.0), ("半年", "time", 6.0),
    ("半个月", "time", 0.5), ("半月", "time", 0.5), ("半小时", "time", 1 / 1440), ("1899年", "time", 1899 * 12.0),
])
def test_each_unit_is_read_in_its_family_and_size(text, family, value):
    found = amounts(f"应当在{text}内")
    assert [(a.text, a.family) for a in found] == [(text, family)]
    assert found[0].value == pytest.approx(value) and (found[0].start, found[0].end) == (3, 3 + len(text))


@pytest.mark.parametrize("text", ["第三年", "1900年", "2023年", "半天", "半周", "半倍", "每月15日", "3月15日"])
def test_ordinals_years_dates_and_half_of_a_day_are_not_periods(text):
    assert amounts(f"自{text}起") == []


def test_a_period_after_a_date_is_read():
    assert [a.text for a in amounts("3月1日起十五日内")] == ["十五日"]
    assert [a.text for a in amounts("15日内")] == ["15日"]


def test_a_value_stated_about_a_named_period_must_come_from_a_sentence_about_it():
    assert unquoted_amounts("试用期为六个月。", ["劳动合同期限三年以上的，试用期不得超过六个月。"]) == []
    found = unquoted_amounts("试用期为六个月。", ["劳动合同期限为六个月。"])
    assert [(a.text, a.start, a.end) for a in found] == [("六个月", 4, 7)]
    # the person's own facts count whatever their topic
    assert unquoted_amounts("试用期为六个月。", ["劳动合同期限为三年。"], question="试用期六个月合法吗") == []
    # a sentence without a named period takes values from any quote
    assert unquoted_amounts("合同为六个月。", ["试用期为六个月。"]) == []


def test_a_value_computed_in_its_sentence_from_given_values_passes():
    assert unquoted_amounts("三年加两年共五年。", ["期限为三年", "延长两年"]) == []
    assert unquoted_amounts("三年减一年为两年。", ["期限为三年", "一年"]) == []
    assert unquoted_amounts("工资5000元，两倍是10000元。", ["支付二倍的工资"], question="工资5000元") == []
    # the same values without the working shown
    assert [a.text for a in unquoted_amounts("共五年。", ["期限为三年", "延长两年"])] == ["五年"]
    assert [a.text for a in unquoted_amounts("是10000元。", ["支付二倍的工资"], question="工资5000元")] == ["10000元"]
    # a value not derived from the shown ones
    assert [a.text for a in unquoted_amounts("三年加两年共七年。", ["期限为三年", "延长两年"])] == ["七年"]
    # a stated value that is itself not given does not make another derivable
    assert [a.text for a in unquoted_amounts("五年加两年共七年。", ["延长两年"])] == ["五年", "七年"]
    # twice a given value is a product shown by it
    assert unquoted_amounts("两年加两年共四年。", ["延长两年"]) == []


def test_a_value_of_another_family_is_not_given_by_the_same_number():
    assert [a.text for a in unquoted_amounts("赔偿三元。", ["期限为三年"])] == ["三元"]
    assert [a.text for a in unquoted_amounts("需要三年。", ["支付三倍"])] == ["三年"]


def test_the_offsets_of_a_marked_value_are_in_the_answer_and_its_note_names_its_sentence():
    answer = "可以解除。罚款三千元。"
    found = unquoted_amounts(answer, ["处五百元罚款"])
    assert [(a.text, answer[a.start:a.end]) for a in found] == [("三千元", "三千元")]
    assert unquoted_note(found, answer) == "〔不是出自法条〕以下期间或金额在所引法条中没有，也不能由其推算，请勿依赖：“三千元”（罚款三千元）"
    assert unquoted_note(found, answer, "en") == ("[not from the law] These periods or amounts are in no quoted "
                                                  "provision and do not follow from one: \"三千元\" (罚款三千元)")
    assert unquoted_note([], answer) == ""
    two = unquoted_amounts("罚款三千元，拘留十日。", [])
    assert unquoted_note(two, "罚款三千元，拘留十日。").endswith("：“三千元”（罚款三千元，拘留十日）；“十日”（罚款三千元，拘留十日）")


# -- further pins: the edges of each quote rule -----------------------------------------------------------------

def test_a_short_article_of_several_sentences_is_quoted_whole_up_to_ninety_characters():
    two = _doc(20, "承租人应当支付租金。出租人应当履行维修义务。")
    assert decisive_quote("维修义务", two).text == two.text and decisive_quote("维修义务", two).role == "decisive"
    exactly = _doc(21, "承租人应当支付租金。" + "出" * 73 + "租人应当维修。")
    assert len(exactly.text) == 90 and decisive_quote("维修", exactly).text == exactly.text
    longer = _doc(22, "承租人应当支付租金。" + "出" * 74 + "租人应当维修。")
    assert decisive_quote("支付租金", longer).text == "承租人应当支付租金。"


def test_an_empty_article_is_quoted_as_an_empty_span_at_its_start():
    q = decisive_quote("租金", _doc(23, "  "))
    assert q.text == "" and q.spans == ((0, 0),) and q.exceptions == 0


def test_a_reservation_of_twenty_characters_is_the_rules_own_and_one_of_twenty_one_is_not():
    rule = "当事人自民事法律行为发生之日起五年内没有行使撤销权的，撤销权消灭。"
    twenty, twenty_one = "法律或者行政法规另有规定的，依照其规定。", "法律或者行政法规另有规定的，依照其规定办。"
    assert (len(twenty), len(twenty_one)) == (20, 21)
    head = "当事人应当在知道撤销事由之日起一年内行使撤销权。\n"
    assert decisive_quote("五年内没有行使撤销权", _doc(24, head + rule + twenty)).text == rule + twenty
    assert decisive_quote("五年内没有行使撤销权", _doc(24, head + rule + twenty_one)).text == rule


def test_an_item_right_after_the_sentence_that_opens_its_list_is_joined_without_an_ellipsis():
    doc = _doc(25, "用人单位可以解除劳动合同。\n劳动者有下列情形之一的，用人单位可以解除劳动合同：（一）在试用期间被证明不符合录用条件的；"
                   "（二）严重违反用人单位的规章制度的；")
    q = decisive_quote("试用期间不符合录用条件", doc)
    assert q.text == "劳动者有下列情形之一的，用人单位可以解除劳动合同：（一）在试用期间被证明不符合录用条件的；"
    assert len(q.spans) == 2 and q.spans[0][1] == q.spans[1][0]


def test_an_item_with_no_sentence_before_it_in_its_paragraph_is_quoted_alone():
    doc = _doc(26, "（一）擅自改变土地用途的；（二）弃耕抛荒连续两年以上的。\n承包方可以解除合同。")
    q = decisive_quote("弃耕抛荒", doc)
    assert q.text == "（二）弃耕抛荒连续两年以上的。" and len(q.spans) == 1


def test_an_exception_whose_list_opens_with_an_ascii_colon_gets_its_item():
    doc = _doc(27, "承包方不得单方解除土地经营权流转合同，但受让方有下列情形之一的除外:\n（一）擅自改变土地的农业用途；\n"
                   "（二）弃耕抛荒连续两年以上；")
    q = decisive_quote("承包方能不能单方解除流转合同", doc)
    assert q.text == "承包方不得单方解除土地经营权流转合同，但受让方有下列情形之一的除外:…（一）擅自改变土地的农业用途；"


def _padded_sentence(total):
    """A one-paragraph sentence of clauses joined by "；", ``total`` characters long, its second clause naming 船舶."""
    first, second = "出租人应当交付所租的房屋；", "承租人应当妥善保管所租的船舶；"
    rest = total - len(first) - len(second) - 1
    return first + second + "甲" * rest + "。"


def test_a_sentence_of_exactly_three_hundred_characters_is_quoted_whole():
    text = _padded_sentence(300)
    assert len(text) == 300
    q = decisive_quote("船舶", _doc(28, text + "\n出租人可以解除合同。"))
    assert q.text == text
    assert decisive_quote("船舶", _doc(28, _padded_sentence(301) + "\n出租人可以解除合同。")).text == "承租人应当妥善保管所租的船舶；"


def test_a_semicolon_sentence_late_in_a_long_article_is_quoted_whole():
    lead = "出租人应当按照约定将租赁物交付承租人，并在租赁期限内保持租赁物符合约定的用途。" * 5
    doc = _doc(29, lead + "\n承租人应当按照约定支付租金；承租人无正当理由未支付租金的，出租人可以请求其在合理期限内支付。")
    q = decisive_quote("无正当理由未支付租金", doc)
    assert q.text == "承租人应当按照约定支付租金；承租人无正当理由未支付租金的，出租人可以请求其在合理期限内支付。"


def test_the_sentence_of_a_clause_after_an_item_runs_on_to_its_end_but_not_back_into_the_item():
    doc = _doc(30, "有下列情形之一的，可以解除：\n（一）迟延履行的；乙应当付款；丙应当赔偿损失。\n其他。")
    assert decisive_quote("丙应当赔偿损失", doc).text == "乙应当付款；丙应当赔偿损失。"
    assert decisive_quote("乙应当付款", doc).text == "乙应当付款；丙应当赔偿损失。"


def test_a_semicolon_sentence_at_the_end_of_an_article_and_one_joined_by_an_ascii_semicolon():
    doc = _doc(31, "出租人应当交付租赁物。\n用人单位应当按时支付劳动报酬；用人单位拖欠的，劳动者可以申请支付令。")
    assert decisive_quote("按时支付劳动报酬", doc).text == "用人单位应当按时支付劳动报酬；用人单位拖欠的，劳动者可以申请支付令。"
    ascii_ = _doc(32, "出租人应当交付租赁物。\n用人单位应当按时支付劳动报酬;用人单位拖欠的，劳动者可以申请支付令。")
    assert decisive_quote("申请支付令", ascii_).text == "用人单位应当按时支付劳动报酬;用人单位拖欠的，劳动者可以申请支付令。"


def test_a_one_paragraph_article_ending_in_a_semicolon_is_quoted_from_its_first_clause():
    text = ("出租人应当按照约定将租赁物交付承租人并在租赁期限内保持租赁物符合约定的用途；"
            "承租人应当按照约定的方法使用租赁物并且妥善保管租赁物不得擅自对所租的租赁物进行任何改善或者在租赁物上增设他物；")
    assert len(text) > 90
    assert decisive_quote("交付承租人", _doc(33, text)).text == text


def test_the_limitation_role_finds_the_period_clause_wherever_it_is():
    doc = _doc(34, "诉讼时效期间自权利人知道或者应当知道权利受到损害以及义务人之日起计算。\n"
                   "向人民法院请求保护民事权利的诉讼时效期间为三年。")
    assert decisive_quote("起算", doc, role="limitation").text == "向人民法院请求保护民事权利的诉讼时效期间为三年。"


EN = _doc(35, "The tenant shall pay the rent on time every month to the landlord. The landlord shall repair the roof. "
              "Unless the tenant caused the damage.")


def test_an_english_article_is_split_and_its_exception_kept_in_english():
    q = decisive_quote("who must repair the roof", EN, lang="en")
    assert q.text == "The landlord shall repair the roof. Unless the tenant caused the damage." and q.exceptions == 1
    basis = build_basis("who must repair the roof", _hits(EN), lang="en")
    assert basis.quotes[0].text == q.text


def test_the_basis_splits_chinese_articles_by_default():
    doc = _doc(36, "出租人应当按照约定将租赁物交付承租人。\n承租人应当按照约定的方法使用租赁物。")
    assert build_basis("使用租赁物的方法", _hits(doc)).quotes[0].text == "承租人应当按照约定的方法使用租赁物。"
    assert build_basis("使用租赁物的方法", _hits(doc)).notice == ""


LIMIT2 = _doc(188, "向人民法院请求保护民事权利的诉讼时效期间为三年。自权利受到损害之日起超过二十年的，人民法院不予保护。\n"
                   "诉讼时效期间自权利人知道之日起计算。", law="中华人民共和国民法典", article="188", label="第一百八十八条")


def test_the_limitation_article_is_quoted_in_the_language_of_the_basis():
    zh = build_basis("我要起诉房东", _hits(A), limitation=LIMIT2)
    assert zh.quotes[-1].text == "向人民法院请求保护民事权利的诉讼时效期间为三年。"
    en = build_basis("我要起诉房东 landlord", _hits(EN), lang="en", limitation=LIMIT2)
    assert en.quotes[-1].text == "向人民法院请求保护民事权利的诉讼时效期间为三年。自权利受到损害之日起超过二十年的，人民法院不予保护。"


RENT = _doc(37, "承租人应当支付租金。\n承租人应当返还押金。")
OTHER = _doc(38, "出租人收取租金。租金按月支付。押金另计。", label="第二条")


def test_the_terms_are_weighed_over_the_clauses_of_every_article_of_the_basis():
    alone = decisive_quote("租金押金", RENT)
    assert alone.text == "承租人应当支付租金。"  # a tie within the article alone: the earliest
    pooled = decisive_quote("租金押金", RENT, idf_pool=[RENT, OTHER])
    assert pooled.text == "承租人应当返还押金。"  # 租金 is common across the basis, 押金 rarer
    assert build_basis("租金押金", _hits(RENT, OTHER)).quotes[0].text == "承租人应当返还押金。"


def test_the_fallback_is_printed_whole_in_each_language():
    basis = build_basis("维修 保管", _hits(A, C))
    arts_en = f"[1] 《{LAW}》第一条: \"出租人应当履行租赁物的维修义务。\"\n[2] 《{LAW}》第三条: \"承租人应当妥善保管租赁物。\""
    assert fallback_text(basis, "en", "unsupported") == (
        "I cannot give a conclusion: a conclusion could not be drawn from the quoted provisions alone. "
        f"The most relevant provisions found:\n{arts_en}\n"
        "What to check:\n1. whether your facts meet the conditions these provisions state (who you are, what was "
        "agreed, when it happened);\n2. whether another law or a local rule governs your case;\n"
        "3. keep your documents and evidence, and ask a lawyer or a legal aid office with them.")
    arts_zh = f"[1] 《{LAW}》第一条：“出租人应当履行租赁物的维修义务。”\n[2] 《{LAW}》第三条：“承租人应当妥善保管租赁物。”"
    assert fallback_text(basis) == (
        f"这个问题现在还不能下结论，因为检索到的法条都不能明确决定这个问题。与你的问题最相关的法条是：\n{arts_zh}\n"
        "需要核对：\n1. 你的情况是否符合上面条文规定的条件（当事人是谁、双方怎么约定的、事情发生在什么时间）；\n"
        "2. 有没有其他法律或地方规定专门规定这种情况；\n"
        "3. 保留合同、聊天记录、付款凭证等证据，带着它们咨询律师或法律援助机构。")


def test_more_edges_of_reading_amounts():
    assert amounts("第三年") == []  # an ordinal at the very start
    assert [a.text for a in amounts("三年内起诉，依据第")] == ["三年"]
    assert [a.text for a in amounts("第三年后两年内")] == ["两年"]
    assert [a.text for a in amounts("半天后，三年内")] == ["三年"]
    assert [a.text for a in amounts("2023年起三年内")] == ["三年"]
    assert [a.text for a in amounts("每月15日发工资，三日内")] == ["三日"]
    assert amounts("月15日发工资") == []
    assert [a.text for a in amounts("3月1日15日内")] == ["15日"]  # a period right after a date
    assert [a.text for a in amounts("两两年内，三年")] == ["三年"]  # a numeral that reads as no number


def test_a_date_written_in_chinese_numerals_is_not_a_period():
    # 十月15日 is the fifteenth of October, not ten months and fifteen days
    assert amounts("十月15日入职") == []
    assert amounts("2023年十月十五日入职，十二月份离职") == []
    assert [a.text for a in amounts("十月十五日入职，试用期两个月")] == ["两个月"]
    assert [a.text for a in amounts("3月15号发现，十日内")] == ["十日"]
    # months and days that are periods still read as periods
    assert [a.text for a in amounts("工作十个月十五日")] == ["十个月", "十五日"]
    assert [a.text for a in amounts("满十月")] == ["十月"]


def test_a_multiple_applies_to_the_amount_it_is_shown_with():
    assert unquoted_amounts("按三倍算是15000元。", ["支付三倍的工资"], question="工资5000元") == []
    assert unquoted_amounts("工资5000元，三倍是15000元。", ["支付三倍的工资"], question="工资5000元") == []
    assert [a.text for a in unquoted_amounts("是15000元。", ["支付三倍的工资"], question="工资5000元")] == ["15000元"]
    # a value of another family that equals a given amount does not show the working
    assert [a.text for a in unquoted_amounts("三个月内罚款六元。", ["罚款三元"])] == ["三个月", "六元"]


def test_every_unquoted_value_of_a_sentence_is_marked_with_its_family_and_value():
    assert unquoted_amounts("三年内支付五千元。", ["期限三年"]) == [Amount("五千元", "money", 5000.0, 5, 8)]
    assert unquoted_amounts("可以。试用期为六个月。", []) == [Amount("六个月", "time", 6.0, 7, 10)]


def test_the_note_names_the_sentence_of_each_value_even_at_its_start_and_the_value_alone_elsewhere():
    found = unquoted_amounts("三千元罚款。", [])
    assert unquoted_note(found, "三千元罚款。").endswith("“三千元”（三千元罚款）")
    assert unquoted_note(found, "").endswith("“三千元”（三千元）")
    two = unquoted_amounts("罚款三千元，拘留十日。", [])
    assert unquoted_note(two, "罚款三千元，拘留十日。", "en").endswith(
        ": \"三千元\" (罚款三千元，拘留十日); \"十日\" (罚款三千元，拘留十日)")
