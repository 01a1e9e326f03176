"""English citations of Chinese law: parsing, the English title table, resolution to the same documents."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from legalrag.citecheck import CitationResolver, Reason, extract_citations, parse_citation
from legalrag.citecheck.english import EnglishCitation, EnglishTitles, en_key, extract_english, parse_english
from legalrag.citecheck.marks import mark_citations
from legalrag.corpora.statutes import statute_document

LCL = "劳动合同法"
CC = "中华人民共和国民法典"


@pytest.fixture
def resolver():
    docs = [
        statute_document("lcl-39", "劳动者有下列情形之一的，用人单位可以解除劳动合同:\n\n（一）在试用期间被证明不符合录用条件的；\n\n"
                         "（二）严重违反用人单位的规章制度的；", f"{LCL}第三十九条"),
        statute_document("lcl-40", "有下列情形之一的，用人单位提前三十日以书面形式通知劳动者本人……可以解除劳动合同:\n\n"
                         "（一）劳动者患病……\n\n（二）劳动者不能胜任工作……\n\n（三）客观情况发生重大变化……", f"{LCL}第四十条"),
        statute_document("lcl-82", "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。\n\n"
                         "用人单位违反本法规定不与劳动者订立无固定期限劳动合同的……支付二倍的工资。", f"{LCL}第八十二条"),
        statute_document("cc-585", "当事人可以约定一方违约时应当根据违约情况向对方支付一定数额的违约金……\n\n约定的违约金低于造成的损失的……\n\n"
                         "当事人就迟延履行约定违约金的……", f"{CC}第五百八十五条"),
        statute_document("cc-1165", "行为人因过错侵害他人民事权益造成损害的，应当承担侵权责任。\n\n依照法律规定推定行为人有过错……",
                         f"{CC}第一千一百六十五条"),
        statute_document("cl-133-1", "在道路上驾驶机动车，有下列情形之一的，处拘役，并处罚金：\n（一）追逐竞驶，情节恶劣的；\n"
                         "（二）醉酒驾驶机动车的；", "中华人民共和国刑法第一百三十三条之一"),
    ]
    return CitationResolver.from_documents(docs)


@pytest.mark.parametrize("text,doc_id", [
    ("Art. 40 of the Labor Contract Law", "lcl-40"),
    ("Article 82 of the Labour Contract Law", "lcl-82"),
    ("Art. 40 of the Labor Contract Law of the PRC", "lcl-40"),
    ("Article 82 of the Labor Contract Law of the People's Republic of China", "lcl-82"),
    ("PRC Civil Code art. 585", "cc-585"),
    ("Civil Code of the PRC, Article 1165", "cc-1165"),
    ("China's Civil Code Article 1165", "cc-1165"),
    ("Article 133-1 of the Criminal Law", "cl-133-1"),
    ("Article 133A of the Criminal Law", "cl-133-1"),
])
def test_the_english_forms_resolve_to_the_chinese_article(resolver, text, doc_id):
    res = resolver.lookup(parse_citation(text))
    assert res.ok, res.message
    assert res.document.id == doc_id


def test_art_40_is_the_labor_contract_law_not_a_law_named_tongfa(resolver):
    [m] = resolver.extract("The employer gave notice under Art. 40 of the Labor Contract Law.")
    assert m.text == "Art. 40 of the Labor Contract Law"
    assert m.citation.law == LCL and str(m.citation) == "劳动合同法第四十条"
    [zh] = extract_citations("根据劳动合同法第40条解除合同。")  # without the corpus's titles, too
    assert zh.citation.law == "劳动合同法"


def test_lists_ranges_paragraphs_and_items():
    found = extract_english("Arts. 39-40 of the Labor Contract Law and Article 26(1)(1); Paragraph 2 of Article 67 "
                            "of the Criminal Law; Article 1079, paragraph 3, item 2 of the Civil Code.")
    got = [(m.citation.law, m.citation.article, m.citation.paragraph, m.citation.item) for m in found]
    assert got == [(LCL, 39, None, None), (LCL, 40, None, None), (LCL, 26, 1, 1),
                   ("中华人民共和国刑法", 67, 2, None), (CC, 1079, 3, 2)]
    [one] = extract_english("Article 39(2) of the Labor Contract Law")
    assert one.citation.division == "(2)" and one.citation.paragraph is None and one.citation.item is None


def test_a_bare_article_inherits_the_title_of_its_sentence_only():
    found = extract_english("Article 40 of the Labor Contract Law applies; Article 82 doubles the wage. Article 5 is "
                            "another matter.")
    assert [(m.citation.law, m.citation.article, m.law_inherited) for m in found] == [(LCL, 40, False),
                                                                                     (LCL, 82, True)]


def test_an_article_of_something_else_inherits_nothing():
    found = extract_english("Article 40 of the Labor Contract Law and Article 5 of the contract apply.")
    assert [(m.citation.law, m.citation.article) for m in found] == [(LCL, 40)]


def test_a_title_is_matched_whole_never_by_a_known_tail():
    [jp] = extract_english("Japanese Civil Code art. 709 says otherwise.")
    assert jp.citation.titles == () and jp.citation.written == "Japanese Civil Code" and jp.citation.foreign
    [extra] = extract_english("Article 40 of the Labor Contract Law Interpretation")
    assert extra.citation.titles == () and extra.citation.written == "Labor Contract Law Interpretation"
    [paren] = extract_english("They must pay (Social Insurance Law, Art. 58).")  # not the Insurance Law
    assert paren.citation.law == "社会保险法"
    [under] = extract_english("Under the PRC Civil Code art. 585, the court reduced it.")
    assert under.citation.law == CC and under.text == "PRC Civil Code art. 585"


def test_unknown_foreign_and_relative_titles_say_why(resolver):
    unknown = resolver.lookup(parse_english("Article 5 of the Minimum Wage Law of the PRC"))
    assert unknown.reason is Reason.UNKNOWN_LAW and "English title 'Minimum Wage Law of the PRC'" in unknown.message
    assert f"knows {EnglishTitles.load().n_laws} laws" in unknown.message and "Chinese title" in unknown.message
    foreign = resolver.lookup(parse_english("Article 709 of the Japanese Civil Code"))
    assert foreign.reason is Reason.NOT_HELD and "national law of the PRC" in foreign.message
    us = resolver.lookup(parse_english("Article 3 of the Constitution of the United States"))  # not the 宪法
    assert us.reason is Reason.NOT_HELD and us.document is None
    relative = resolver.lookup(parse_english("Article 5 of this Law"))
    assert relative.reason is Reason.UNKNOWN_LAW and "name the law" in relative.message


def test_marks_of_english_citations(resolver):
    class Fixed:  # a support model that always supports: the marks of unresolved citations need none
        threshold = 0.5

        def scores(self, pairs):
            return [0.9] * len(pairs)

    cits = mark_citations("Double wages are owed (Article 82 of the Labour Contract Law). Article 709 of the "
                          "Japanese Civil Code differs. Article 5 of the Minimum Wage Law of the PRC is unknown. "
                          "Article 40, paragraph 4 of the Labor Contract Law does not exist.", resolver, Fixed())
    assert [(c.mark, c.mark_reason) for c in cits] == [
        ("supported", ""), ("no_corpus", "not_held"), ("not_found", "unknown_law"),
        ("not_found", "unknown_paragraph")]
    assert cits[0].canonical == "劳动合同法第八十二条" and cits[0].document_id == "lcl-82"
    assert "1 paragraph" in cits[3].note and "no paragraph 4" in cits[3].note


def test_repealed_laws_cited_in_english_are_marked_repealed(resolver):
    [c] = mark_citations("Damages follow from Article 107 of the Contract Law.", resolver)
    assert c.mark == "repealed" and "民法典" in c.note


def test_citations_inside_quotations_and_footnotes_parse():
    text = ('He wrote: “Article 82 of the Labor Contract Law applies.”\n'
            "The claim fails.[1]\n[1] See Art. 40 of the Labor Contract Law of the PRC.")
    assert [(m.citation.law, m.citation.article) for m in extract_english(text)] == [(LCL, 82), (LCL, 40)]


def test_swiss_and_us_citations_stay_theirs():
    found = extract_citations("Vgl. Art. 100 Abs. 1 BGG und 18 U.S.C. § 1030; Art. 40 of the Labor Contract Law.")
    assert [m.citation.system for m in found] == ["ch", "us", "zh"]
    assert isinstance(found[2].citation, EnglishCitation)


def test_en_key_ignores_case_spelling_the_and_the_jurisdiction():
    assert en_key("the Labour Contract Law of the People’s Republic of China") == en_key("PRC labor contract law")
    assert en_key("Law of the PRC on the Protection of Minors") == en_key("Law on Protection of Minors")
    assert en_key("Law on Traditional Chinese Medicine") != en_key("Law on Traditional Medicine")


def test_the_shipped_title_table_names_corpus_laws_only_once_each():
    data = json.loads(resources.files("legalrag").joinpath("data", "citations", "english_titles.json")
                      .read_text(encoding="utf-8"))
    table = EnglishTitles.load()
    assert table.n_laws == len(data["laws"]) >= 150
    assert all(len(v) == 1 for v in table.keys.values())  # no English title maps to two laws
    assert table.lookup("Labor Contract Law") == (LCL,)


def test_a_bad_table_entry_is_refused_with_its_number():
    with pytest.raises(ValueError, match="entry 2 needs 'zh'"):
        EnglishTitles.from_entries([{"zh": "劳动法", "en": ["Labor Law"]}, {"zh": "公司法"}])


def test_not_a_single_english_citation_is_refused():
    with pytest.raises(ValueError, match="not a single English citation"):
        parse_english("Article 40")
