"""Citations: parsing, canonical formatting, extraction from running text, aliases, resolution, checking."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from legalrag.citecheck import (
    AliasTable,
    ChineseCitation,
    CitationResolver,
    Reason,
    SwissCitation,
    USCitation,
    check_citations,
    explain_citations,
    extract_citations,
    law_key,
    parse_chinese,
    parse_citation,
)
from legalrag.corpora.statutes import statute_document
from legalrag.types import Citation, Document, DocumentKind

CL = "中华人民共和国刑法"


def _zh(matches):
    return [(m.citation.law, m.citation.article, m.citation.sub_article, m.citation.paragraph, m.citation.item)
            for m in matches]


# ---------------------------------------------------------------- Chinese: parsing and canonical form


@pytest.mark.parametrize("text,expected,canonical", [
    ("《中华人民共和国刑法》第二百六十四条", ChineseCitation(CL, 264), "中华人民共和国刑法第二百六十四条"),
    ("中华人民共和国刑法第二百六十四条", ChineseCitation(CL, 264), "中华人民共和国刑法第二百六十四条"),
    ("刑法第264条", ChineseCitation("刑法", 264), "刑法第二百六十四条"),
    ("《刑法》第２６４条第１款", ChineseCitation("刑法", 264, paragraph=1), "刑法第二百六十四条第一款"),
    ("刑法第一百三十三条之一第一款第（二）项", ChineseCitation("刑法", 133, 1, 1, 2), "刑法第一百三十三条之一第一款第二项"),
    ("民法典第一千零二十条", ChineseCitation("民法典", 1020), "民法典第一千零二十条"),
    ("民法典第一千二百六十条", ChineseCitation("民法典", 1260), "民法典第一千二百六十条"),
    ("《民法典》第两千条", ChineseCitation("民法典", 2000), "民法典第二千条"),
    ("刑法第十条", ChineseCitation("刑法", 10), "刑法第十条"),
    ("刑法第一百一十条", ChineseCitation("刑法", 110), "刑法第一百一十条"),
    ("刑法第一百零五条", ChineseCitation("刑法", 105), "刑法第一百零五条"),
    ("刑法第二十一条第二款第(三)项", ChineseCitation("刑法", 21, None, 2, 3), "刑法第二十一条第二款第三项"),
    ("第五条", ChineseCitation(None, 5), "第五条"),
    ("《最高人民法院关于适用〈中华人民共和国刑事诉讼法〉的解释》第五百零五条",
     ChineseCitation("最高人民法院关于适用《中华人民共和国刑事诉讼法》的解释", 505),
     "最高人民法院关于适用《中华人民共和国刑事诉讼法》的解释第五百零五条"),
])
def test_parse_chinese(text, expected, canonical):
    c = parse_citation(text)
    assert c == expected
    assert c.canonical() == canonical == str(c)


def test_canonical_options_and_article_keys():
    c = ChineseCitation("刑法", 120, 1, 2)
    assert c.article_key == "120-1" and ChineseCitation("刑法", 264).article_key == "264"
    assert c.article_label == "第一百二十条之一"
    assert c.canonical(brackets=True) == "《刑法》第一百二十条之一第二款"
    assert c.canonical(CL) == "中华人民共和国刑法第一百二十条之一第二款"
    inner = ChineseCitation("最高人民法院关于适用《刑事诉讼法》的解释", 505)
    assert inner.canonical(brackets=True) == "《最高人民法院关于适用〈刑事诉讼法〉的解释》第五百零五条"
    assert parse_chinese(inner.canonical(brackets=True)) == inner


@pytest.mark.parametrize("bad", ["刑法", "第二百六十四条、第五条", "刑法第二百六十四条规定", "第一次", ""])
def test_parse_rejects_non_citations(bad):
    with pytest.raises(ValueError):
        parse_chinese(bad)
    with pytest.raises(ValueError):
        parse_citation(bad)


LAWS = st.sampled_from([None, "中华人民共和国刑法", "刑法", "中华人民共和国民法典", "道路交通安全法",
                        "最高人民法院关于适用《中华人民共和国刑事诉讼法》的解释"])


@settings(max_examples=300)
@given(LAWS, st.integers(1, 2000), st.none() | st.integers(1, 9), st.none() | st.integers(1, 12),
       st.none() | st.integers(1, 30))
def test_chinese_canonical_round_trip(law, article, sub, para, item):
    c = ChineseCitation(law, article, sub, para, item)
    assert parse_chinese(c.canonical()) == c
    assert parse_chinese(c.canonical(brackets=True)) == c


@settings(max_examples=100)
@given(st.lists(st.tuples(st.integers(1, 500), st.none() | st.integers(1, 5)), min_size=1, max_size=6),
       st.sampled_from(["、", "，", "及", "和", "、 "]))
def test_extracted_list_keeps_order_spans_and_title(articles, sep):
    body = sep.join(ChineseCitation(None, a, paragraph=p).canonical() for a, p in articles)
    text = f"依照《{CL}》{body}之规定，判决如下"
    found = extract_citations(text)
    assert [(m.citation.article, m.citation.paragraph) for m in found] == articles
    assert all(m.citation.law == CL for m in found)
    assert [m.law_inherited for m in found] == [False] + [True] * (len(articles) - 1)
    for m in found:
        assert text[m.start:m.end] == m.text


# ---------------------------------------------------------------- Chinese: extraction from running text


def test_list_sharing_one_title():
    text = "依照《中华人民共和国刑法》第二百六十四条、第六十七条第三款、第五十二条之规定，判决如下"
    found = extract_citations(text)
    assert _zh(found) == [(CL, 264, None, None, None), (CL, 67, None, 3, None), (CL, 52, None, None, None)]
    assert [m.text for m in found] == ["《中华人民共和国刑法》第二百六十四条", "第六十七条第三款", "第五十二条"]
    assert found[0].span == (2, 20) and found[1].span == (21, 29)
    assert [m.law_inherited for m in found] == [False, True, True]


def test_list_without_title_has_no_law():
    found = extract_citations("第二十五条第一款、第二十六条")
    assert _zh(found) == [(None, 25, None, 1, None), (None, 26, None, None, None)]


def test_title_is_inherited_within_a_sentence_only():
    found = extract_citations("依照《刑法》第一条，并参照第二条。第三条另有规定")
    assert _zh(found) == [("刑法", 1, None, None, None), ("刑法", 2, None, None, None), (None, 3, None, None, None)]


def test_a_new_title_takes_over_in_a_list():
    found = extract_citations("《刑法》第一条、《中华人民共和国刑事诉讼法》第二条、第三条")
    assert [m.citation.law for m in found] == ["刑法", "中华人民共和国刑事诉讼法", "中华人民共和国刑事诉讼法"]


def test_paragraph_and_item_lists_and_continuations():
    found = extract_citations("依照《刑法》第七十二条第一、三款，第六十七条第一款及第三款，第二条第一款第（一）项、第（三）项")
    assert _zh(found) == [
        ("刑法", 72, None, 1, None), ("刑法", 72, None, 3, None), ("刑法", 67, None, 1, None),
        ("刑法", 67, None, 3, None), ("刑法", 2, None, 1, 1), ("刑法", 2, None, 1, 3),
    ]
    assert found[0].span == found[1].span and found[0].text == "《刑法》第七十二条第一、三款"
    assert found[3].text == "第三款" and found[5].text == "第（三）项"


def test_paragraph_fragments_in_prose_are_not_articles():
    assert extract_citations("本条第三款规定的情形，依照前款处理") == []
    assert extract_citations("于第二日起十日内上诉，第一次开庭，（2017）沪0120刑初684号") == []


def test_issuer_before_the_title_marks():
    text = "最高人民法院、最高人民检察院《关于办理盗窃刑事案件适用法律若干问题的解释》第一条"
    (m,) = extract_citations("依照" + text + "之规定")
    assert m.text == text and m.start == 2
    assert m.citation.law == "最高人民法院、最高人民检察院关于办理盗窃刑事案件适用法律若干问题的解释"


def test_unbracketed_titles_without_an_alias_table():
    found = extract_citations("被告人的行为违反了道路交通安全法第二十二条第二款，根据中华人民共和国刑法第133条，本法第十条")
    assert _zh(found) == [("道路交通安全法", 22, None, 2, None), (CL, 133, None, None, None),
                          ("本法", 10, None, None, None)]
    assert found[1].text == "中华人民共和国刑法第133条"


def test_unbracketed_titles_with_an_alias_table_take_the_longest_known_title():
    aliases = AliasTable.from_titles([CL, "中华人民共和国民法典", "刑事诉讼法"])
    found = extract_citations("本院认为根据中华人民共和国刑法第二百六十四条和民法典第一千零二十条及刑事诉讼法第一条处理", aliases)
    assert [(m.citation.law, m.citation.article) for m in found] == [
        (CL, 264), ("民法典", 1020), ("刑事诉讼法", 1)]
    assert found[0].text == "中华人民共和国刑法第二百六十四条"


def test_ranges_give_both_ends():
    found = extract_citations("《刑法》第二十条至第二十二条")
    assert [m.citation.article for m in found] == [20, 22]


# ---------------------------------------------------------------- law titles and aliases


def test_law_key_normalises_title_variants():
    keys = {law_key(t) for t in ["《中华人民共和国刑法》", "中华人民共和国刑法", "刑法", "《刑法》", " 刑 法 "]}
    assert keys == {"刑法"}
    assert law_key("《最高人民法院关于适用〈中华人民共和国刑事诉讼法〉的解释》") == \
        law_key("最高人民法院关于适用《刑事诉讼法》的解释")
    assert law_key("最高人民法院 最高人民检察院关于办理赌博刑事案件的解释") == \
        law_key("最高人民法院、最高人民检察院关于办理赌博刑事案件的解释")
    assert law_key("18 U.S.C.") == law_key("18 USC")


def test_alias_table_maps_variants_and_refuses_to_guess():
    table = AliasTable.from_titles([
        CL, "刑事诉讼法", "人民检察院刑事诉讼规则", "人民检察院刑事诉讼规则（试行）", "香港特别行政区基本法",
        "澳门特别行政区基本法", "最高人民法院关于适用《公司法》若干问题的规定（一）",
        "最高人民法院关于适用《公司法》若干问题的规定（二）", "最高人民法院关于审理毒品犯罪案件适用法律若干问题的解释",
    ])
    for written in ["《中华人民共和国刑法》", "中华人民共和国刑法", "刑法", "《刑法》"]:
        assert table.lookup(written).title == CL
    assert table.lookup("中华人民共和国刑事诉讼法").title == "刑事诉讼法"
    assert table.lookup("人民检察院刑事诉讼规则").title == "人民检察院刑事诉讼规则"  # exact title beats a short key
    assert table.lookup("人民检察院刑事诉讼规则（试行）").title == "人民检察院刑事诉讼规则（试行）"
    assert table.lookup("关于审理毒品犯罪案件适用法律若干问题的解释").title == \
        "最高人民法院关于审理毒品犯罪案件适用法律若干问题的解释"  # issuer left out
    ambiguous = table.lookup("最高人民法院关于适用《中华人民共和国公司法》若干问题的规定")
    assert ambiguous.ambiguous and not ambiguous.ok and len(ambiguous.titles) == 2
    assert table.lookup("基本法").titles == ()  # never mapped to one of the two Basic Laws
    assert table.lookup("诉讼法").titles == ()  # not a prefix or substring match
    assert table.lookup("合同法").titles == ()


# ---------------------------------------------------------------- Swiss and US


@pytest.mark.parametrize("text,expected", [
    ("Art. 100 Abs. 1 BGG", SwissCitation("BGG", "100", "1")),
    ("Art. 29 Abs. 2 BV", SwissCitation("BV", "29", "2")),
    ("Art. 8 ZGB", SwissCitation("ZGB", "8")),
    ("Art. 8 Abs. 2 lit. a BV", SwissCitation("BV", "8", "2", letter="a")),
    ("Art. 83 lit. c Ziff. 2 BGG", SwissCitation("BGG", "83", letter="c", number="2")),
    ("Art. 6 Ziff. 3 lit. c EMRK", SwissCitation("EMRK", "6", letter="c", number="3", number_first=True)),
    ("Art. 29a BV", SwissCitation("BV", "29a")),
    ("Art. 271a Abs. 1 lit. e OR", SwissCitation("OR", "271a", "1", "e")),
    ("Art. 123 Abs. 2bis StGB", SwissCitation("StGB", "123", "2bis")),
    ("art. 100 al. 1 LTF", SwissCitation("LTF", "100", "1", lang="fr")),
    ("art. 9 Cst.", SwissCitation("Cst.", "9", lang="fr")),
    ("art. 95 let. a LTF", SwissCitation("LTF", "95", letter="a", lang="fr")),
    ("art. 100 cpv. 1 LTF", SwissCitation("LTF", "100", "1", lang="it")),
])
def test_swiss_canonical_round_trip(text, expected):
    c = parse_citation(text)
    assert c == expected
    assert str(c) == text
    assert parse_citation(str(c)) == c


@pytest.mark.parametrize("written,canonical", [
    ("Art.100 Abs.1 BGG", "Art. 100 Abs. 1 BGG"),
    ("Art. 29  Abs. 2  BV", "Art. 29 Abs. 2 BV"),
    ("Artikel 8 ZGB", "Art. 8 ZGB"),
])
def test_swiss_variants_normalise(written, canonical):
    assert str(parse_citation(written)) == canonical


@pytest.mark.parametrize("text,expected", [
    ("18 U.S.C. § 1030(a)(2)", USCitation("U.S.C.", "1030", 18, ("a", "2"))),
    ("42 U.S.C. § 1983", USCitation("U.S.C.", "1983", 42)),
    ("42 U.S.C. § 2000e-2(a)(1)", USCitation("U.S.C.", "2000e-2", 42, ("a", "1"))),
    ("29 C.F.R. § 1630.2(g)", USCitation("C.F.R.", "1630.2", 29, ("g",))),
    ("Fed. R. Evid. 803(6)", USCitation("Fed. R. Evid.", "803", None, ("6",))),
    ("Fed. R. Evid. 803", USCitation("Fed. R. Evid.", "803")),
    ("Fed. R. Civ. P. 12(b)(6)", USCitation("Fed. R. Civ. P.", "12", None, ("b", "6"))),
    ("Fed. R. Crim. P. 11(c)(1)(C)", USCitation("Fed. R. Crim. P.", "11", None, ("c", "1", "C"))),
    ("Fed. R. App. P. 4(a)(1)(A)", USCitation("Fed. R. App. P.", "4", None, ("a", "1", "A"))),
])
def test_us_canonical_round_trip(text, expected):
    c = parse_citation(text)
    assert c == expected
    assert str(c) == text
    assert parse_citation(str(c)) == c


@pytest.mark.parametrize("written,canonical", [
    ("42 U.S.C. §§ 1983", "42 U.S.C. § 1983"),
    ("18 USC 1030(a)(2)", "18 U.S.C. § 1030(a)(2)"),
    ("18 U.S.C.A. § 1030", "18 U.S.C. § 1030"),
    ("18 U.S.C. sec. 1030", "18 U.S.C. § 1030"),
    ("Fed.R.Civ.P. 12(b)(6)", "Fed. R. Civ. P. 12(b)(6)"),
    ("FRE 803(6)", "Fed. R. Evid. 803(6)"),
    ("FRCP 56", "Fed. R. Civ. P. 56"),
])
def test_us_variants_normalise(written, canonical):
    assert str(parse_citation(written)) == canonical


def test_mixed_text_extraction_in_reading_order():
    text = ("The claim under 42 U.S.C. §§ 1983, 1985(3) and 1988 fails; see Fed. R. Civ. P. 12(b)(6). "
            "Vgl. Art. 29 Abs. 2 BV und Art. 8 ZGB. 另见《刑法》第六条。Art. 5 The end.")
    found = extract_citations(text)
    assert [str(m.citation) for m in found] == [
        "42 U.S.C. § 1983", "42 U.S.C. § 1985(3)", "42 U.S.C. § 1988", "Fed. R. Civ. P. 12(b)(6)",
        "Art. 29 Abs. 2 BV", "Art. 8 ZGB", "刑法第六条"]
    assert [m.text for m in found[:3]] == ["42 U.S.C. §§ 1983", "1985(3)", "1988"]
    for m in found:
        assert text[m.start:m.end] == m.text
    assert [m.citation.system for m in extract_citations(text, systems=["ch"])] == ["ch", "ch"]
    with pytest.raises(ValueError):
        extract_citations(text, systems=["fr"])


# ---------------------------------------------------------------- resolver and checking


@pytest.fixture
def corpus() -> list[Document]:
    docs = [
        statute_document("264", "盗窃公私财物，数额较大的……", f"{CL}第二百六十四条"),
        statute_document("67", "犯罪以后自动投案，如实供述自己的罪行的，是自首。……\n被采取强制措施的……以自首论。\n"
                         "犯罪嫌疑人虽不具有前两款规定的自首情节……", f"{CL}第六十七条"),
        statute_document("133-1", "在道路上驾驶机动车，有下列情形之一的……\n（一）追逐竞驶，情节恶劣的；\n（二）醉酒驾驶机动车的；",
                         f"{CL}第一百三十三条之一"),
        statute_document("cpl-1", "为了保证刑法的正确实施……", "刑事诉讼法第一条"),
        statute_document("co1-1", "公司法司法解释一第一条", "最高人民法院关于适用《公司法》若干问题的规定（一）第一条"),
        statute_document("co2-1", "公司法司法解释二第一条", "最高人民法院关于适用《公司法》若干问题的规定（二）第一条"),
        statute_document("interp-505", "……", "最高人民法院关于适用《刑事诉讼法》的解释第五百零五条"),
    ]
    docs += [
        Document("bgg-100", "Die Beschwerde ist innert 30 Tagen ... einzureichen.", "BGG Art. 100",
                 metadata={"law": "BGG", "article": "100"}),
        Document("usc-18-1030", "Whoever ... intentionally accesses a computer without authorization ...",
                 "18 U.S.C. § 1030", metadata={"law": "18 U.S.C.", "article": "1030"}),
        Document("fre-803", "The following are not excluded by the rule against hearsay ...",
                 "Fed. R. Evid. 803", metadata={"law": "Fed. R. Evid.", "article": "803"}),
        Document("note", "a user note without law metadata", kind=DocumentKind.USER_DOCUMENT),
    ]
    return docs


def test_resolver_success(corpus):
    r = CitationResolver.from_documents(corpus)
    assert len(r) == 10  # the note has no law/article and is not indexed
    cases = {
        "《中华人民共和国刑法》第二百六十四条": "264",
        "刑法第264条第一款": "264",  # paragraph-level resolves to the article
        "《刑法》第一百三十三条之一第一款第（二）项": "133-1",
        "中华人民共和国刑事诉讼法第一条": "cpl-1",
        "《最高人民法院关于适用〈中华人民共和国刑事诉讼法〉的解释》第五百零五条": "interp-505",
        "最高人民法院关于适用《公司法》若干问题的规定（二）第一条": "co2-1",
        "art. 100 al. 1 LTF": "bgg-100",  # the French abbreviation of the BGG
        "Art. 100 Abs. 1 BGG": "bgg-100",
        "18 USC 1030(a)(2)": "usc-18-1030",
        "Fed. R. Evid. 803(6)": "fre-803",
    }
    for text, doc_id in cases.items():
        res = r.lookup(parse_citation(text))
        assert res.ok and res.reason is None, res.message
        assert res.document.id == doc_id == r.resolve(parse_citation(text)).id
    assert r.lookup(parse_citation("刑法第264条第一款")).canonical == "中华人民共和国刑法第二百六十四条第一款"


@pytest.mark.parametrize("text,reason,fragment", [
    ("《中华人民共和国刑法》第九百条", Reason.UNKNOWN_ARTICLE, "no article 900"),
    ("刑法第二百六十四条之一", Reason.UNKNOWN_ARTICLE, "no article 264-1"),
    ("《合同法》第一条", Reason.UNKNOWN_LAW, "'合同法' is not in the corpus"),
    ("本法第十条", Reason.UNKNOWN_LAW, "relative title"),
    ("最高人民法院关于适用《公司法》若干问题的规定第一条", Reason.AMBIGUOUS_LAW, "may mean any of"),
    ("第一条", Reason.NO_LAW, "no law title"),
    ("Art. 8 ZGB", Reason.UNKNOWN_LAW, "'ZGB'"),
    ("18 U.S.C. § 1031", Reason.UNKNOWN_ARTICLE, "no article 1031"),
])
def test_resolver_failure_reasons(corpus, text, reason, fragment):
    r = CitationResolver.from_documents(corpus)
    res = r.lookup(parse_citation(text))
    assert not res.ok and r.resolve(parse_citation(text)) is None
    assert res.reason is reason
    assert fragment in res.message
    if reason is Reason.AMBIGUOUS_LAW:
        assert len(res.candidates) == 2


def test_the_same_law_twice_resolves_only_when_the_texts_agree():
    same = [statute_document("a", "同一条文", "中华人民共和国消防法第一条"), statute_document("b", "同一条文", "消防法第一条")]
    assert CitationResolver.from_documents(same).resolve(parse_citation("消防法第一条")).id in {"a", "b"}
    differ = [statute_document("a", "旧文", "中华人民共和国消防法第一条"), statute_document("b", "新文", "消防法第一条")]
    res = CitationResolver.from_documents(differ).lookup(parse_citation("消防法第一条"))
    assert res.reason is Reason.AMBIGUOUS_LAW
    # one title, two documents with different texts for the same article: ambiguous, never the first
    two = [statute_document("a", "旧文", "中华人民共和国消防法第一条"), statute_document("b", "新文", "中华人民共和国消防法第一条")]
    res = CitationResolver.from_documents(two).lookup(parse_citation("消防法第一条"))
    assert res.reason is Reason.AMBIGUOUS_ARTICLE and set(res.candidates) == {"a", "b"}, \
        f"two different texts for one article resolved to {res.document and res.document.id}"


def test_check_citations_keeps_and_flags_every_citation(corpus):
    answer = ("根据刑法第二百六十四条、第六十七条第三款，被告人构成盗窃罪；另参照《合同法》第五十二条。"
              "See also 18 U.S.C. § 1030(a)(2) and Art. 8 ZGB.")
    resolver = CitationResolver.from_documents(corpus)
    cits = check_citations(answer, resolver, retrieved_ids=["264"])
    assert all(isinstance(c, Citation) for c in cits)
    assert [(c.text, c.canonical, c.resolved, c.document_id, c.in_retrieved) for c in cits] == [
        ("刑法第二百六十四条", "中华人民共和国刑法第二百六十四条", True, "264", True),
        ("第六十七条第三款", "中华人民共和国刑法第六十七条第三款", True, "67", False),
        ("《合同法》第五十二条", "合同法第五十二条", False, None, False),
        ("18 U.S.C. § 1030(a)(2)", "18 U.S.C. § 1030(a)(2)", True, "usc-18-1030", False),
        ("Art. 8 ZGB", "Art. 8 ZGB", False, None, False),
    ]
    assert cits[0].document_text == "盗窃公私财物，数额较大的……" and cits[2].document_text == ""
    # the documents themselves may be passed instead of a resolver
    assert check_citations(answer, corpus, ["264"]) == cits
    explained = explain_citations(answer, resolver)
    assert [e.resolution.reason for e in explained] == [None, None, Reason.UNKNOWN_LAW, None, Reason.UNKNOWN_LAW]
    assert explained[1].match.law_inherited and explained[1].match.span == (12, 20)
    assert answer[12:20] == "第六十七条第三款"
    assert check_citations("没有引用任何条文。", resolver) == []


def test_article_markers_inside_a_title_belong_to_the_title():
    found = extract_citations("依照《最高人民法院关于适用刑法第十二条几个问题的解释》第一条、第二条")
    assert _zh(found) == [("最高人民法院关于适用刑法第十二条几个问题的解释", 1, None, None, None),
                          ("最高人民法院关于适用刑法第十二条几个问题的解释", 2, None, None, None)]
    # a stray 《 that is never closed does not hide later citations
    assert [m.citation.article for m in extract_citations("一个孤立的《括号，然后刑法第三条和第四条")] == [3, 4]


def test_extraction_stays_fast_on_long_runs_of_text():
    import time

    text = "中" * 50_000 + "，刑法第一条" + "《" + "文" * 50_000 + "》第二条"
    t0 = time.perf_counter()
    found = extract_citations(text)
    assert time.perf_counter() - t0 < 2.0
    assert [m.citation.article for m in found] == [1, 2]


@pytest.mark.shared_data
def test_every_sampled_stard_article_name_resolves_to_itself(shared_data):
    """Each corpus name, as written and as 《title》第…条, parses and resolves to its own article (STARD,
    every 20th of the 55,515 articles). Duplicate laws with identical text may resolve to either copy."""
    from legalrag.corpora.statutes import load_statutes

    docs = load_statutes(shared_data / "stard" / "corpus.jsonl")
    resolver = CitationResolver.from_documents(docs)
    unparsed = []
    for doc in docs[::20]:
        law, label = doc.metadata["law"], doc.metadata["article_label"]
        for written in (doc.title, f"《{law}》{label}"):
            try:
                cit = parse_citation(written, resolver.aliases)
            except ValueError:
                unparsed.append(written)
                continue
            res = resolver.lookup(cit)
            assert res.ok and res.document.text == doc.text, res.message
    # the only names that cannot be parsed carry an article marker inside the title itself, unbracketed:
    # 最高人民法院关于适用刑法第十二条几个问题的解释第一条
    assert all("刑法第十二条" in w and not w.startswith("《") for w in unparsed), unparsed


def test_unresolved_citation_carries_reason_note():
    from legalrag.citecheck import check_citations
    from legalrag.corpora.statutes import statute_document

    docs = [statute_document("1", "盗窃公私财物……", "中华人民共和国刑法第二百六十四条")]
    out = check_citations("依照《中华人民共和国刑法》第二百六十四条、第九百九十九条之规定", docs)
    assert [c.resolved for c in out] == [True, False]
    assert out[0].note.endswith("-> document 1")
    assert "no article 999" in out[1].note
