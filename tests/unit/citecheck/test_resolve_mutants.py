"""What resolution tells a person beyond "found or not", pinned where a one-sample test let a wrong value pass:
the corpus title a citation resolved to (also for a past day's version), the ids and titles an ambiguous citation
may mean, the paragraph and item counts in the message, superseded versions left out of today's resolver,
English citations that cannot reach the corpus, and titles only the corpus's own table can find."""

from __future__ import annotations

import pytest

from legalrag.citecheck import CitationResolver, Reason, parse_citation
from legalrag.citecheck.english import EnglishCitation
from legalrag.citecheck.resolve import article_structure, explain_citations
from legalrag.corpora.statutes import statute_document
from legalrag.laws.select import in_force_filter
from legalrag.types import Document

CL = "中华人民共和国刑法"
THREE = "第一款。\n第二款：\n（一）甲；\n（二）乙；\n第三款。"  # [0, 2, 0]


def doc(doc_id: str, text: str, law: str, article: str, **meta) -> Document:
    return Document(id=doc_id, text=text, title=meta.pop("title", f"{law}第{article}条"),
                    metadata={"law": law, "article": article, **meta})


@pytest.fixture
def resolver():
    return CitationResolver.from_documents([
        doc("cl-5", THREE, CL, "5"),
        doc("cl-6", "只有一段，没有项。", CL, "6"),
        doc("cl-7", "一段，内有两项：（一）甲；（二）乙。", CL, "7"),
        doc("cl-8a", "一种文本。", CL, "8"),
        doc("cl-8b", "另一种文本。", CL, "8"),  # two texts claim 第八条
        doc("cl-133-1", "在道路上驾驶机动车……", CL, "133 - 1"),  # an article number written with spaces
        doc("or-41", "Wer einem andern widerrechtlich Schaden zufügt ...\nWer sich ...", "OR", "41"),  # 2 lines
        statute_document("lsl-10", "劳动保障行政部门……", "劳动保障监察条例第十条"),
    ])


def test_an_article_number_written_with_spaces_still_resolves(resolver):
    r = resolver.lookup(parse_citation("刑法第一百三十三条之一"))
    assert r.ok and r.document.id == "cl-133-1" and r.law == CL


def test_an_unknown_article_names_the_corpus_title_it_looked_in(resolver):
    r = resolver.lookup(parse_citation("刑法第九十九条"))
    assert r.reason is Reason.UNKNOWN_ARTICLE and r.law == CL
    assert r.message == f"{CL}第九十九条: {CL} has no article 99 in the corpus"


def test_an_article_two_texts_claim_lists_both_documents_under_the_corpus_title(resolver):
    r = resolver.lookup(parse_citation("刑法第八条"))
    assert r.reason is Reason.AMBIGUOUS_ARTICLE and r.law == CL and r.candidates == ("cl-8a", "cl-8b")
    assert r.message == f"{CL}第八条: several documents differ for this article: cl-8a, cl-8b"


@pytest.mark.parametrize("written,detail", [
    ("刑法第五条第四款", "the article has 3 paragraphs (款), so it has no paragraph 4; "),  # 2 items: no hint
    ("刑法第五条第二款第三项", "paragraph 2 has 2 items (项), so it has no item 3"),
    ("刑法第五条第一款第一项", "paragraph 1 has no items (项)"),
    ("刑法第六条第二款", "the article has 1 paragraph (款), so it has no paragraph 2"),
    ("刑法第六条第一项", "the article has no items (项)"),
    ("刑法第六条第一款第一项", "the article has no items (项)"),  # one paragraph: "the article", not "paragraph 1"
    ("刑法第五条第三项", "the article has 2 items (项), so it has no item 3"),  # no paragraph cited
])
def test_a_missing_paragraph_or_item_says_what_the_article_has(resolver, written, detail):
    r = resolver.lookup(parse_citation(written))
    assert r.reason is Reason.UNKNOWN_PARAGRAPH and r.law == CL and not r.ok
    assert r.candidates == (r.detail.rsplit("document ", 1)[1].rstrip(")"),) and r.candidates[0].startswith("cl-")
    assert detail in r.detail and r.detail.endswith(f"; the article exists (document {r.candidates[0]})")


def test_item_counts_agree_in_number_and_a_paragraph_hint_needs_enough_items(resolver):
    one = CitationResolver.from_documents([doc("x-1", "第一款。\n（一）甲；", "示例法", "1"),
                                           doc("x-2", "第一款。\n第二款。", "示例法", "2")])
    r = one.lookup(parse_citation("示例法第一条第三项"))
    assert "the article has 1 item (项), so it has no item 3" in r.detail
    r = one.lookup(parse_citation("示例法第一条第三款"))
    assert "so it has no paragraph 3" in r.detail and "may be meant" not in r.detail  # 1 item cannot be item 3
    many = CitationResolver.from_documents([doc("y-1", "第一款：\n（一）甲；\n（二）乙；\n（三）丙；\n第二款。", "示例法", "1")])
    r = many.lookup(parse_citation("示例法第一条第三款"))
    assert r.detail.startswith("the article has 2 paragraphs (款), so it has no paragraph 3 (it has 3 items (项): "
                               "item 3, 第三项, may be meant)")
    # item 2 of a two-paragraph article with no items: "the article" only where it has one paragraph
    r = one.lookup(parse_citation("示例法第二条第一款第一项"))
    assert r.detail.startswith("paragraph 1 has no items")


def test_items_written_inline_are_counted_in_a_law_that_keeps_one_paragraph_a_line(resolver):
    assert resolver.lookup(parse_citation("刑法第七条第二项")).ok
    assert resolver.lookup(parse_citation("刑法第七条第一款第二项")).ok
    # 第二款 of a one-paragraph article with two inline items: item 2 may be meant
    r = resolver.lookup(parse_citation("刑法第七条第二款"))
    assert r.detail.startswith("the article has 1 paragraph (款), so it has no paragraph 2 (it has 2 items (项): "
                               "item 2, 第二项, may be meant)")
    r = resolver.lookup(parse_citation("刑法第七条第三项"))
    assert r.reason is Reason.UNKNOWN_PARAGRAPH and "the article has 2 items (项), so it has no item 3" in r.detail


def test_a_swiss_paragraph_is_not_checked_against_the_text(resolver):
    r = resolver.lookup(parse_citation("Art. 41 Abs. 3 OR"))
    assert r.ok and r.document.id == "or-41"


def test_article_structure_of_an_empty_text_is_one_paragraph_without_items():
    assert article_structure("") == [0] and article_structure("\n \n") == [0]


def test_a_title_only_the_corpus_knows_is_found_without_brackets(resolver):
    (m,) = resolver.extract("我认为劳动保障监察条例第十条")
    assert m.citation.law == "劳动保障监察条例"
    (checked,) = explain_citations("我认为劳动保障监察条例第十条", resolver)
    assert checked.citation.resolved and checked.citation.document_id == "lsl-10"


def test_local_and_foreign_titles_name_the_law_in_the_reason(resolver):
    r = resolver.lookup(parse_citation("《北京市物业管理条例》第十条"))
    assert r.reason is Reason.NOT_HELD and r.detail.startswith("《北京市物业管理条例》 is a local regulation")
    r = resolver.lookup(parse_citation("《日本民法》第十条"))
    assert r.reason is Reason.NOT_HELD and r.detail.startswith("《日本民法》 is not mainland China's national law")


# -- versions -----------------------------------------------------------------------------------------------

def version(doc_id, text, law, start, until, ended=""):
    return Document(id=doc_id, text=text, title="公司法第二十六条", metadata={
        "law": law, "article": "26", "article_label": "第二十六条", "version": start, "in_force_from": start,
        "in_force_until": until, "ended_by": ended})


OLD = version("old", "注册资本为认缴的出资额。", "公司法（2018-10-26版）", "2018-10-26", "2024-07-01", "superseded")
NEW = version("new", "股东可以请求人民法院撤销。", "公司法", "2024-07-01", None)


def test_a_past_days_version_resolves_under_its_laws_own_title():
    r = CitationResolver.from_documents([OLD, NEW], keep=in_force_filter("2022-03-01")).lookup(
        parse_citation("公司法第二十六条"))
    assert r.ok and r.document.id == "old" and r.law == "公司法" and r.canonical == "公司法第二十六条"


def test_a_title_that_does_not_end_in_its_article_label_keeps_the_corpus_law():
    odd = Document(id="odd", text="文本。", title="公司法第二十六条（2018年文本）", metadata={
        **OLD.metadata, "law": "公司法（2018-10-26版）"})
    bare = Document(id="bare", text="文本。", title="公司法第二十七条", metadata={
        **{k: v for k, v in OLD.metadata.items() if k != "article_label"}, "article": "27"})
    r = CitationResolver.from_documents([odd, bare], keep=in_force_filter("2022-03-01"))
    assert r.lookup(parse_citation("《公司法（2018-10-26版）》第二十六条")).law == "公司法（2018-10-26版）"
    assert r.lookup(parse_citation("《公司法（2018-10-26版）》第二十七条")).law == "公司法（2018-10-26版）"


def test_todays_resolver_keeps_the_corpus_title_and_leaves_superseded_versions_out():
    named = Document(id="named", text="现行文本。", title="公司法第二十六条",
                     metadata={**NEW.metadata, "law": "中华人民共和国公司法"})
    same_title_old = Document(id="older", text="旧文本。", title="公司法第二十六条",
                              metadata={**OLD.metadata, "law": "中华人民共和国公司法"})
    r = CitationResolver.from_documents([same_title_old, named])
    assert len(r) == 1
    got = r.lookup(parse_citation("公司法第二十六条"))
    assert got.ok and got.document.id == "named" and got.law == "中华人民共和国公司法"


def test_documents_without_a_law_or_an_article_are_not_indexed():
    r = CitationResolver.from_documents([
        Document(id="a", text="x", title="t", metadata={"law": "示例法"}),
        Document(id="b", text="y", title="t", metadata={"article": "1"}),
        doc("c", "z", "示例法", "2")])
    assert len(r) == 1


def test_the_same_law_under_two_titles_resolves_to_one_document_with_its_own_title():
    r = CitationResolver.from_documents([doc("long", "同一文本。", CL, "1"), doc("short", "同一文本。", "刑法", "1")])
    got = r.lookup(parse_citation("刑法第一条"))
    assert got.ok and got.law is not None and got.law == got.document.metadata["law"]


def test_an_ambiguous_title_whose_laws_lack_the_article_stays_ambiguous():
    r = CitationResolver.from_documents([
        doc("m1", "一", "最高人民法院关于适用《婚姻法》若干问题的解释（一）", "10"),
        doc("m2", "二", "最高人民法院关于适用《婚姻法》若干问题的解释（二）", "10")])
    got = r.lookup(parse_citation("《最高人民法院关于适用〈婚姻法〉若干问题的解释》第十一条"))
    assert got.reason is Reason.AMBIGUOUS_LAW and len(got.candidates) == 2 and not got.ok


# -- English citations that cannot reach the corpus ------------------------------------------------------------

@pytest.mark.parametrize("titles", [("劳动法", "劳动合同法"), ("甲法", "乙法", "丙法")])
def test_an_english_title_the_table_gives_several_laws_for_lists_them(resolver, titles):
    c = EnglishCitation(written="Labour Law", titles=titles, article=5)
    r = resolver.lookup(c)
    assert r.reason is Reason.AMBIGUOUS_LAW and r.citation is c and r.candidates == titles and not r.ok
    assert r.detail == f"the English title 'Labour Law' may mean any of: {', '.join(titles)}"
    assert r.message.endswith(r.detail)


def test_an_english_citation_without_a_title_names_no_law(resolver):
    c = EnglishCitation(written=None, titles=(), article=5)
    r = resolver.lookup(c)
    assert r.reason is Reason.NO_LAW and r.citation is c
    assert r.message.endswith("no law title is given for this article")


def test_a_foreign_english_title_says_the_corpus_holds_the_national_law_only(resolver):
    c = EnglishCitation(written="Japanese Civil Code", titles=(), article=709, foreign=True)
    r = resolver.lookup(c)
    assert r.reason is Reason.NOT_HELD and r.citation is c
    assert r.detail.endswith("the corpus holds only the national law of the PRC, so it cannot be checked here")
