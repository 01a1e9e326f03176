"""Resolution beyond the article: paragraphs and items that must exist, laws the corpus cannot hold, titles that
fit several laws, abbreviations, relative titles."""

from __future__ import annotations

import pytest

from legalrag.citecheck import CitationResolver, Reason, extract_citations, parse_citation
from legalrag.citecheck.marks import mark_citations
from legalrag.citecheck.resolve import article_structure, not_held
from legalrag.corpora.statutes import statute_document

CL = "中华人民共和国刑法"
ART_67 = ("犯罪以后自动投案，如实供述自己的罪行的，是自首。\n\n被采取强制措施的犯罪嫌疑人……以自首论。\n\n"
          "犯罪嫌疑人虽不具有前两款规定的自首情节……可以减轻处罚。\n")
ART_1079 = ("夫妻一方要求离婚的……\n\n人民法院审理离婚案件，应当进行调解……\n\n有下列情形之一，调解无效的，应当准予离婚：\n\n"
            "（一）重婚或者与他人同居；\n\n（二）实施家庭暴力……\n\n（三）有赌博、吸毒等恶习屡教不改；\n\n（四）因感情不和分居满二年；\n\n"
            "（五）其他导致夫妻感情破裂的情形。\n\n一方被宣告失踪……\n\n经人民法院判决不准离婚后……\n")


@pytest.fixture
def resolver():
    return CitationResolver.from_documents([
        statute_document("67", ART_67, f"{CL}第六十七条"),
        statute_document("1079", ART_1079, "中华人民共和国民法典第一千零七十九条"),
        statute_document("cpl-122", "起诉必须符合下列条件：\n\n（一）原告是与本案有直接利害关系的……\n\n（二）有明确的被告；",
                         "民事诉讼法第一百二十二条"),
        statute_document("m1-10", "第一个解释的第十条", "最高人民法院关于适用《婚姻法》若干问题的解释（一）第十条"),
        statute_document("m2-10", "第二个解释的第十条", "最高人民法院关于适用《婚姻法》若干问题的解释（二）第十条"),
        statute_document("inline-5", "有下列情形之一的，不予登记：（一）甲；（二）乙；（三）丙。", "示例条例第五条"),
    ])


def test_article_structure_counts_paragraphs_and_their_items():
    assert article_structure(ART_67) == [0, 0, 0]
    assert article_structure(ART_1079) == [0, 0, 5, 0, 0]
    assert article_structure("（一）甲；\n（二）乙；") == [2]


@pytest.mark.parametrize("text,ok", [
    ("《刑法》第六十七条第三款", True),
    ("《民法典》第一千零七十九条第三款第（二）项", True),
    ("《民法典》第一千零七十九条第五款", True),
    ("民事诉讼法第一百二十二条第二项", True),
    ("示例条例第五条第三项", True),  # items written inline are counted
    ("《刑法》第六十七条第四款", False),
    ("《民法典》第一千零七十九条第三款第六项", False),
    ("《民法典》第一千零七十九条第一款第一项", False),
    ("示例条例第五条第四项", False),
])
def test_a_paragraph_or_item_must_exist(resolver, text, ok):
    res = resolver.lookup(parse_citation(text, resolver.aliases))
    assert res.ok is ok, res.message
    if not ok:
        assert res.reason is Reason.UNKNOWN_PARAGRAPH and res.document is None


def test_the_reason_gives_the_real_paragraphs(resolver):
    res = resolver.lookup(parse_citation("《刑法》第六十七条第四款"))
    assert "has 3 paragraphs (款), so it has no paragraph 4" in res.message
    res = resolver.lookup(parse_citation("民事诉讼法第一百二十二条第二款"))
    assert "has 1 paragraph (款)" in res.message and "item 2, 第二项, may be meant" in res.message
    res = resolver.lookup(parse_citation("《民法典》第一千零七十九条第三款第六项"))
    assert "paragraph 3 has 5 items (项), so it has no item 6" in res.message


def test_a_corpus_that_runs_paragraphs_together_checks_no_paragraphs():
    one_line = CitationResolver.from_documents([statute_document("67", ART_67.replace("\n", ""), f"{CL}第六十七条")])
    assert one_line.lookup(parse_citation("《刑法》第六十七条第三款")).ok


@pytest.mark.parametrize("title,kind", [
    ("北京市物业管理条例", "local"), ("深圳经济特区和谐劳动关系促进条例", "local"), ("新疆维吾尔自治区人口与计划生育条例", "local"),
    ("日本民法", "foreign"), ("《德国民法典》", "foreign"), ("劳动合同法", None), ("城市房地产管理法", None)])
def test_laws_the_corpus_cannot_hold(title, kind):
    assert not_held(title) == kind


def test_a_local_regulation_is_no_corpus_not_not_found(resolver):
    res = resolver.lookup(parse_citation("《北京市物业管理条例》第十条"))
    assert res.reason is Reason.NOT_HELD and "local regulation" in res.message
    [c] = mark_citations("根据《北京市物业管理条例》第十条，业主大会应当成立。", resolver)
    assert c.mark == "no_corpus" and "national law only" in c.note


def test_a_title_that_fits_two_laws_names_both(resolver):
    res = resolver.lookup(parse_citation("婚姻法解释第十条", resolver.aliases))
    assert res.reason is Reason.AMBIGUOUS_LAW and res.document is None
    assert set(res.candidates) == {"最高人民法院关于适用《婚姻法》若干问题的解释（一）",
                                   "最高人民法院关于适用《婚姻法》若干问题的解释（二）"}
    assert all(t in res.message for t in res.candidates)


def test_abbreviations_resolve_to_the_full_title(resolver):
    [m] = resolver.extract("依据民诉法第一百二十二条，起诉应当有明确的被告。")
    res = resolver.lookup(m.citation)
    assert res.ok and res.document.id == "cpl-122"


def test_relative_titles_and_the_tongfa_suffix():
    assert [m.citation.law for m in extract_citations("根据劳动合同法第四十条，因本法第二十六条第一款规定的情形")] == \
        ["劳动合同法", "本法"]
    assert [m.citation.law for m in extract_citations("依照同法第五条")] == ["同法"]


def test_a_parenthesis_or_particle_after_the_title_keeps_it():
    found = extract_citations("《工伤保险条例》（2010修订）第六十六条；《中华人民共和国民法典》中第一千二百二十一条")
    assert [m.citation.law for m in found] == ["工伤保险条例", "中华人民共和国民法典"]
