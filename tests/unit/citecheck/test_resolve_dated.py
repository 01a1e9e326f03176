"""A citation written of a past day resolves to the text in force that day (``CitationResolver.from_documents``
with an as-of filter): the trap of 公司法第二十六条, whose 2023 text is about revoking resolutions."""

from __future__ import annotations

from legalrag.citecheck import CitationResolver
from legalrag.citecheck.checker import check_text
from legalrag.laws.select import in_force_filter
from legalrag.types import Document

OLD = "有限责任公司的注册资本为在公司登记机关登记的全体股东认缴的出资额。"
NEW = "公司股东会、董事会的会议召集程序、表决方式违反法律、行政法规或者公司章程，股东可以请求人民法院撤销。"


def version(doc_id, text, law, start, until, oldest, ended=""):
    return Document(id=doc_id, text=text, title="公司法第二十六条", metadata={
        "law": law, "article": "26", "article_label": "第二十六条", "version": start, "in_force_from": start,
        "in_force_until": until, "ended_by": ended, "oldest_held": oldest, "enacted": "1993-12-29",
        "original": False})


DOCS = [version("old", OLD, "公司法（2018-10-26版）", "2018-10-26", "2024-07-01", True, "superseded"),
        version("new", NEW, "公司法", "2024-07-01", None, False)]
TEXT = "依照《公司法》第二十六条，注册资本为全体股东认缴的出资额。"


def resolved(resolver):
    (item,) = check_text(TEXT, resolver, None).items
    return item.citation.resolved, item.citation.document_id


def test_the_text_in_force_on_the_day_answers_the_citation():
    assert resolved(CitationResolver.from_documents(DOCS)) == (True, "new")  # undated: the text in force today
    assert resolved(CitationResolver.from_documents(DOCS, keep=in_force_filter("2022-03-01"))) == (True, "old")
    assert resolved(CitationResolver.from_documents(DOCS, keep=in_force_filter("2024-07-01"))) == (True, "new")
    # 1990: 公司法 was not yet adopted, so nothing answers the citation
    assert resolved(CitationResolver.from_documents(DOCS, keep=in_force_filter("1990-01-01")))[0] is False
