"""Article citations: parse, normalise, format, find in text, resolve to corpus documents, check.

    >>> from legalrag.citecheck import parse_citation, extract_citations, CitationResolver, check_citations
    >>> parse_citation("《中华人民共和国刑法》第一百三十三条之一第一款").article_key
    '133-1'
    >>> str(parse_citation("Art. 100 Abs. 1 BGG")), str(parse_citation("18 USC 1030(a)(2)"))
    ('Art. 100 Abs. 1 BGG', '18 U.S.C. § 1030(a)(2)')
    >>> [str(m.citation) for m in extract_citations("依照《刑法》第二百六十四条、第六十七条第三款之规定")]
    ['刑法第二百六十四条', '刑法第六十七条第三款']

``CitationResolver.from_documents(statute_docs)`` maps citations to documents (``resolve``/``lookup``), and
``check_citations(answer_text, resolver, retrieved_ids)`` returns one :class:`legalrag.types.Citation` per
citation in the text, unresolved ones included and flagged. The rules for Chinese titles and lists are in
:mod:`legalrag.citecheck.chinese`.
"""

from legalrag.citecheck.aliases import AliasTable, LawMatch, law_key
from legalrag.citecheck.base import CitationMatch, LegalCitation
from legalrag.citecheck.chinese import ChineseCitation, extract_chinese, parse_chinese
from legalrag.citecheck.extract import extract_citations, parse_citation
from legalrag.citecheck.resolve import (
    CheckedCitation,
    CitationResolver,
    Reason,
    Resolution,
    check_citations,
    explain_citations,
)
from legalrag.citecheck.swiss import SwissCitation, extract_swiss, parse_swiss
from legalrag.citecheck.us import USCitation, extract_us, parse_us

__all__ = [
    "AliasTable", "CheckedCitation", "ChineseCitation", "CitationMatch", "CitationResolver", "LawMatch",
    "LegalCitation", "Reason", "Resolution", "SwissCitation", "USCitation", "check_citations", "citation_label",
    "explain_citations", "extract_chinese", "extract_citations", "extract_swiss", "extract_us", "law_key",
    "parse_chinese", "parse_citation", "parse_swiss", "parse_us",
]


def citation_label(doc) -> str:
    """How a document is cited to a reader and a model: 《中华人民共和国民法典》第五百七十七条 when the law and
    article are known, else its title or id. The one label function (CLI, answers, server, prompts)."""
    law, label = doc.metadata.get("law"), doc.metadata.get("article_label")
    if law and label:
        return f"《{law}》{label}"
    return doc.title or doc.id
