"""What a reader is shown for each mark: the line of every mark and reason, the counts, the notes of a citation
with no corpus, of a repealed law (with its successor's articles) and of one in force that repealed another,
a citation with no claim, and citation-like phrases no parser reads, kept beside the ones parsed."""

from __future__ import annotations

import pytest

from legalrag.citecheck import CitationResolver
from legalrag.citecheck.marks import (Mark, corpus_systems, explain_all, extract_unknown, mark_citations, mark_line,
                                      summarise_marks)
from legalrag.citecheck.repealed import RepealedTable
from legalrag.corpora.statutes import statute_document
from legalrag.types import Citation

DOCS = [statute_document("82", "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。",
                         "劳动合同法第八十二条"),
        statute_document("5", "个体工商户的合法权益受法律保护。", "个体工商户条例第五条")]
TABLE = RepealedTable({
    "laws": [{"law": "城乡个体工商户管理暂行条例", "successor": "个体工商户条例", "repealed_on": "2011-11-01",
              "source": "个体工商户条例第三十条"},
             {"law": "个体工商户条例", "successor": "促进个体工商户发展条例", "repealed_on": "2022-11-01",
              "source": "促进个体工商户发展条例第三十九条", "in_corpus": True}],
    "articles": [{"law": "城乡个体工商户管理暂行条例", "article": "5", "successor_articles": ["133-1", "7"]}]})


@pytest.fixture(scope="module")
def resolver():
    return CitationResolver.from_documents(DOCS)


@pytest.mark.parametrize("citation, line", [
    (Citation("x", mark="supported", support=0.8123), "supported (support 0.81)"),
    (Citation("x", mark="supported"), "supported"),
    (Citation("x", mark="exists", mark_reason="does_not_bear", support=0.3), "exists, not shown to support this "
     "sentence: its text does not bear on the claim, support 0.30"),
    (Citation("x", mark="exists", mark_reason="not_retrieved"), "exists, not shown to support this sentence: not "
     "among the retrieved articles the answer was given"),
    (Citation("x", mark="exists", mark_reason="something_new"), "exists, not shown to support this sentence: "
     "something_new"),
    (Citation("x", mark="repealed", note="合同法 was repealed"), "repealed: 合同法 was repealed"),
    (Citation("x", mark="not_found", note="no such article"), "not found: no such article"),
    (Citation("x", mark="not_found"), "not found"),
    (Citation("x", mark="no_corpus", note="Swiss"), "no corpus for this jurisdiction: Swiss"),
    (Citation("x"), "checked for existence only"),
])
def test_the_line_shown_for_each_mark(citation, line):
    assert mark_line(citation) == line


def test_the_counts_of_each_mark():
    cits = [Citation("a", mark="supported"), Citation("b", mark="supported"), Citation("c", mark="exists"),
            Citation("d", mark="repealed")]
    s = summarise_marks(cits)
    assert s == {"citations": 4, "supported": 2, "exists": 1, "not_found": 0, "repealed": 1, "no_corpus": 0,
                 "no_citations": False}
    empty = summarise_marks([])
    assert empty["citations"] == 0 and empty["no_citations"] is True
    assert empty["message"] == "the text cites no article: nothing in it is shown to be supported"
    assert set(Mark) <= {Mark(k) for k in s if k in {m.value for m in Mark}}


def test_which_systems_a_corpus_answers(resolver):
    assert corpus_systems(resolver) == {"zh"}
    latin = CitationResolver.from_documents([statute_document("1", "Der Text.", "BGG Art. 100")])
    assert "zh" not in corpus_systems(latin)


def test_no_corpus_notes_name_the_jurisdiction(resolver):
    [swiss] = mark_citations("Die Beschwerde ist nach Art. 100 Abs. 1 BGG fristgerecht.", resolver, repealed=TABLE)
    assert (swiss.mark, swiss.mark_reason) == ("no_corpus", "no_corpus")
    assert swiss.note == "Art. 100 Abs. 1 BGG: the corpus has no law of this jurisdiction (Swiss)"
    latin = CitationResolver.from_documents([statute_document("1", "The employer pays.", "Labor Law Art. 1")])
    [zh] = mark_citations("依照《中华人民共和国刑法》第二百六十四条，处三年以下有期徒刑。", latin, repealed=TABLE)
    assert (zh.mark, zh.mark_reason) == ("no_corpus", "no_corpus")
    assert zh.note == "中华人民共和国刑法第二百六十四条: the corpus has no law of this jurisdiction (Chinese)"


def test_a_repealed_law_names_its_successors_articles(resolver):
    [c] = mark_citations("根据《城乡个体工商户管理暂行条例》第五条，个体工商户可以经营。", resolver, repealed=TABLE)
    assert (c.mark, c.mark_reason) == ("repealed", "repealed")
    assert c.successor == "促进个体工商户发展条例第一百三十三条之一、第七条"
    assert "城乡个体工商户管理暂行条例 was repealed on 2011-11-01; replaced by 促进个体工商户发展条例 (via 个体工商户条例)" in c.note
    assert c.note.startswith("城乡个体工商户管理暂行条例第五条: ")
    [plain] = mark_citations("根据《城乡个体工商户管理暂行条例》第六条，个体工商户可以经营。", resolver, repealed=TABLE)
    assert plain.mark == "repealed" and plain.successor == "促进个体工商户发展条例"  # no article-level entry


def test_a_law_in_the_corpus_that_was_repealed_is_checked_and_noted(resolver):
    [c] = mark_citations("根据《个体工商户条例》第五条，个体工商户的合法权益受法律保护。", resolver, repealed=TABLE)
    assert c.resolved and c.mark == "supported" and c.successor == "促进个体工商户发展条例"
    assert c.note == ("个体工商户条例第五条 -> document 5; 个体工商户条例 was repealed on 2022-11-01; replaced by "
                      "促进个体工商户发展条例 (source: 促进个体工商户发展条例第三十九条)")
    [kept] = mark_citations("根据《劳动合同法》第八十二条，应当每月支付二倍的工资。", resolver, repealed=TABLE)
    assert kept.successor == "" and "repealed" not in kept.note


def test_a_citation_with_no_claim_exists_only(resolver):
    [c] = mark_citations("参见《劳动合同法》第八十二条。", resolver, repealed=TABLE)
    assert (c.mark, c.mark_reason, c.support, c.claim) == ("exists", "no_claim", None, "")


def test_an_unknown_format_is_kept_with_its_note_and_without_the_full_stop(resolver):
    [c] = mark_citations("See Section 5.", resolver, repealed=TABLE)
    assert (c.text, c.mark, c.mark_reason) == ("Section 5", "not_found", "unknown_format")
    assert c.note == "Section 5: a citation format the resolver does not know; it is kept unchecked"
    assert not c.resolved and c.document_id is None and c.document_text == ""


def test_phrases_touching_a_parsed_span_are_kept_and_overlapping_ones_are_not():
    text = "Section 5 and Article 7 apply"  # "Section 5" is 0-9, "Article 7" is 14-23
    found = lambda taken: [m.text for m in extract_unknown(text, taken)]  # noqa: E731
    assert found([]) == ["Section 5", "Article 7"]
    assert found([(9, 12)]) == ["Section 5", "Article 7"]  # starts where "Section 5" ends
    assert found([(10, 14)]) == ["Section 5", "Article 7"]  # ends where "Article 7" starts
    assert found([(20, 23)]) == ["Section 5"]  # inside "Article 7"
    assert found([(0, 1)]) == ["Article 7"]
    m = extract_unknown("Section 12 is clear.", [])[0]
    assert (m.start, m.end, m.text) == (0, 10, "Section 12")


def test_resolved_citations_carry_their_article_text_and_the_resolvers_note(resolver):
    [c] = explain_all("《劳动合同法》第八十二条", resolver)
    assert c.citation.resolved and c.citation.document_id == "82"
    assert c.citation.document_text.startswith("用人单位自用工之日起") and c.citation.note == "劳动合同法第八十二条 -> document 82"
    [u] = explain_all("Rule 9 says so", resolver)
    assert not u.citation.resolved and u.citation.document_text == "" and u.citation.note


def test_an_unknown_phrase_loses_its_full_stop_and_keeps_its_words(resolver):
    [c] = mark_citations("Under Rule 82 of the Arbitration Rules.", resolver, repealed=TABLE)
    assert c.text == "Rule 82 of the Arbitration Rules" and c.canonical == "Rule 82 of the Arbitration Rules"
    [u] = explain_all("Rule 9 says so", resolver)
    from legalrag.citecheck.resolve import Reason

    assert u.resolution.reason == Reason.UNKNOWN_LAW


def test_a_us_citation_against_a_chinese_corpus_is_named_us(resolver):
    [us] = mark_citations("See 18 U.S.C. § 1030.", resolver, repealed=TABLE)
    assert us.mark == "no_corpus" and us.note.endswith("the corpus has no law of this jurisdiction (US)")


def test_the_citations_given_are_the_ones_marked(resolver):
    text = "根据《劳动合同法》第八十二条，应当每月支付二倍的工资。参见《个体工商户条例》第五条。"
    every = explain_all(text, resolver)
    assert len(every) == 2
    assert mark_citations(text, resolver, checked=[]) == []
    [only] = mark_citations(text, resolver, checked=every[1:], repealed=TABLE)
    assert only.canonical == "个体工商户条例第五条"


def test_documents_are_accepted_in_place_of_a_resolver():
    [c] = mark_citations("根据《劳动合同法》第八十二条，应当每月支付二倍的工资。", DOCS, repealed=TABLE)
    assert c.resolved and c.document_id == "82"


def test_the_repeal_note_names_the_successors_articles(resolver):
    [c] = mark_citations("根据《城乡个体工商户管理暂行条例》第五条，个体工商户可以经营。", resolver, repealed=TABLE)
    assert ": now 第一百三十三条" in c.note and "第七条" in c.note
