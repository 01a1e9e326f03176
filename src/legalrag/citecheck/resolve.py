"""Resolve citations to corpus documents, and check every citation in a generated text.

A statute document is indexed by ``(metadata["law"], metadata["article"])`` (see ``corpora/statutes.py``);
paragraph- and item-level citations resolve to their article's document. Laws are matched through an
:class:`~legalrag.citecheck.aliases.AliasTable` built from the corpus titles, so ``《刑法》``, ``刑法`` and
``中华人民共和国刑法`` all find ``中华人民共和国刑法``; a title that fits several laws is reported as ambiguous,
never guessed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterable

from legalrag.citecheck.aliases import RELATIVE_TITLES, AliasTable, LawMatch, law_key
from legalrag.citecheck.base import CitationMatch, LegalCitation
from legalrag.citecheck.extract import extract_citations
from legalrag.citecheck.swiss import equivalent_laws
from legalrag.types import Citation, Document


class Reason(str, enum.Enum):
    """Why a citation did not resolve."""

    NO_LAW = "no_law"  # the text names no law for it (a bare 第五条 with no title earlier in the sentence)
    UNKNOWN_LAW = "unknown_law"  # no corpus law has this title (or it is relative: 本法)
    AMBIGUOUS_LAW = "ambiguous_law"  # the title fits several corpus laws
    UNKNOWN_ARTICLE = "unknown_article"  # the law is in the corpus, the article is not
    AMBIGUOUS_ARTICLE = "ambiguous_article"  # several different documents claim this law and article


@dataclass(frozen=True)
class Resolution:
    """The outcome of resolving one citation: the document, or the reason there is none."""

    citation: LegalCitation
    document: Document | None = None
    law: str | None = None  # the corpus title the written law resolved to
    reason: Reason | None = None
    candidates: tuple[str, ...] = ()  # corpus titles (ambiguous law) or document ids (ambiguous article)

    @property
    def ok(self) -> bool:
        return self.document is not None

    @property
    def canonical(self) -> str:
        """The citation in official style, with the corpus title when the law resolved."""
        return self.citation.canonical(self.law) if self.law else self.citation.canonical()

    @property
    def message(self) -> str:
        """One line a user can read: what it resolved to, or why it did not."""
        c = self.citation
        if self.ok:
            return f"{self.canonical} -> document {self.document.id}"
        if self.reason is Reason.NO_LAW:
            return f"{self.canonical}: no law title is given for this article"
        if self.reason is Reason.UNKNOWN_LAW:
            extra = " (a relative title needs the citing law's context)" if c.law in RELATIVE_TITLES else ""
            return f"{self.canonical}: law {c.law!r} is not in the corpus{extra}"
        if self.reason is Reason.AMBIGUOUS_LAW:
            return f"{self.canonical}: {c.law!r} may mean any of: {', '.join(self.candidates)}"
        if self.reason is Reason.AMBIGUOUS_ARTICLE:
            return f"{self.canonical}: several documents differ for this article: {', '.join(self.candidates)}"
        return f"{self.canonical}: {self.law} has no article {c.article_key} in the corpus"


@dataclass(frozen=True)
class CheckedCitation:
    """A citation found in a text, how it resolved, and the :class:`legalrag.types.Citation` to report."""

    match: CitationMatch
    resolution: Resolution
    citation: Citation


class CitationResolver:
    """Finds the corpus document an article citation refers to. Build with :meth:`from_documents`."""

    def __init__(self, index: dict[tuple[str, str], list[Document]], aliases: AliasTable):
        self._index = index
        self.aliases = aliases

    @classmethod
    def from_documents(cls, documents: Iterable[Document]) -> "CitationResolver":
        """Index documents that carry ``metadata["law"]`` and ``metadata["article"]``; others are ignored."""
        index: dict[tuple[str, str], list[Document]] = {}
        for doc in documents:
            law, article = doc.metadata.get("law"), doc.metadata.get("article")
            if law and article is not None:
                index.setdefault((law, _article_key(article)), []).append(doc)
        return cls(index, AliasTable.from_titles(law for law, _ in index))

    def __len__(self) -> int:
        return sum(map(len, self._index.values()))

    def extract(self, text: str) -> list[CitationMatch]:
        """Every citation in ``text``, using this corpus's titles to find titles written without 《》."""
        return extract_citations(text, aliases=self.aliases)

    def match_law(self, written: str) -> LawMatch:
        found = self.aliases.lookup(written)
        if not found.titles:
            for other in sorted(equivalent_laws(written)):
                found = self.aliases.lookup(other)
                if found.titles:
                    break
        return found

    def lookup(self, citation: LegalCitation) -> Resolution:
        """Resolve ``citation``; the result says why when it does not resolve."""
        if not citation.law:
            return Resolution(citation, reason=Reason.NO_LAW)
        found = self.match_law(citation.law)
        if not found.titles:
            return Resolution(citation, reason=Reason.UNKNOWN_LAW)
        key = _article_key(citation.article_key)
        if found.ambiguous:
            # Several corpus titles with the same exact key (the same law twice): fine if they agree.
            docs = [d for t in found.titles for d in self._index.get((t, key), [])]
            if found.exact and docs and len({d.text for d in docs}) == 1:
                return Resolution(citation, docs[0], docs[0].metadata["law"])
            return Resolution(citation, reason=Reason.AMBIGUOUS_LAW, candidates=found.titles)
        title = found.titles[0]
        docs = self._index.get((title, key), [])
        if not docs:
            return Resolution(citation, law=title, reason=Reason.UNKNOWN_ARTICLE)
        if len({d.text for d in docs}) > 1:
            return Resolution(citation, law=title, reason=Reason.AMBIGUOUS_ARTICLE,
                              candidates=tuple(d.id for d in docs))
        return Resolution(citation, docs[0], title)

    def resolve(self, citation: LegalCitation) -> Document | None:
        """The article's document, or None (see :meth:`lookup` for the reason)."""
        return self.lookup(citation).document


def _article_key(article) -> str:
    return str(article).strip().replace(" ", "").casefold()


def explain_citations(text: str, resolver: CitationResolver | Iterable[Document],
                      retrieved_ids: Iterable[str] = ()) -> list[CheckedCitation]:
    """Like :func:`check_citations`, keeping the match (span) and the resolution (reason) of each."""
    if not isinstance(resolver, CitationResolver):
        resolver = CitationResolver.from_documents(resolver)
    retrieved = set(retrieved_ids)
    out = []
    for m in resolver.extract(text):
        r = resolver.lookup(m.citation)
        doc = r.document
        cit = Citation(text=m.text, canonical=r.canonical, resolved=doc is not None,
                       document_id=doc.id if doc else None, in_retrieved=doc is not None and doc.id in retrieved,
                       document_text=doc.text if doc else "", note=r.message)
        out.append(CheckedCitation(m, r, cit))
    return out


def check_citations(text: str, resolver: CitationResolver | Iterable[Document],
                    retrieved_ids: Iterable[str] = ()) -> list[Citation]:
    """Every citation in ``text``, in order, checked against the corpus.

    ``resolved`` says whether it names a corpus document (``document_id``/``document_text``), and
    ``in_retrieved`` whether that document is among ``retrieved_ids`` (the sources the answer was grounded on).
    Unresolved citations are kept with ``resolved=False``; never dropped. ``resolver`` may also be the
    documents themselves.
    """
    return [c.citation for c in explain_citations(text, resolver, retrieved_ids)]


__all__ = ["CheckedCitation", "CitationResolver", "Reason", "Resolution", "check_citations",
           "explain_citations", "law_key"]
