"""Resolve citations to corpus documents, and check every citation in a generated text.

A statute document is indexed by ``(metadata["law"], metadata["article"])`` (see ``corpora/statutes.py``);
paragraph- and item-level citations resolve to their article's document. Laws are matched through an
:class:`~legalrag.citecheck.aliases.AliasTable` built from the corpus titles, so ``《刑法》``, ``刑法`` and
``中华人民共和国刑法`` all find ``中华人民共和国刑法``; a title that fits several laws is reported as ambiguous,
never guessed.

A paragraph- or item-level citation is checked against the article's text: ``第四款`` of a three-paragraph article
does not resolve (:data:`Reason.UNKNOWN_PARAGRAPH`, the message gives the real count). Paragraphs are the
article's lines; lines opening with ``（一）`` are the items of the paragraph before them (items written inline
are counted too). A law whose texts run their paragraphs together on one line (JuDGE's corpus) has its items
checked, not its paragraphs.

English citations (:mod:`legalrag.citecheck.english`) resolve through the English title table to the same
documents. A title the corpus cannot hold, a local regulation (``《北京市物业管理条例》``) or another
jurisdiction's law (``German Civil Code``, ``《日本民法》``), is :data:`Reason.NOT_HELD`, not an unknown law.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any, Iterable

from legalrag.citecheck.aliases import RELATIVE_TITLES, AliasTable, LawMatch, law_key
from legalrag.citecheck.base import CitationMatch, LegalCitation
from legalrag.citecheck.english import EnglishCitation, EnglishTitles
from legalrag.citecheck.extract import extract_citations
from legalrag.citecheck.swiss import equivalent_laws
from legalrag.numerals import to_chinese
from legalrag.types import Citation, Document


class Reason(str, enum.Enum):
    """Why a citation did not resolve."""

    NO_LAW = "no_law"  # the text names no law for it (a bare 第五条 with no title earlier in the sentence)
    UNKNOWN_LAW = "unknown_law"  # no corpus law has this title (or it is relative: 本法)
    AMBIGUOUS_LAW = "ambiguous_law"  # the title fits several corpus laws
    UNKNOWN_ARTICLE = "unknown_article"  # the law is in the corpus, the article is not
    AMBIGUOUS_ARTICLE = "ambiguous_article"  # several different documents claim this law and article
    UNKNOWN_PARAGRAPH = "unknown_paragraph"  # the article exists, the cited paragraph (款) or item (项) does not
    NOT_HELD = "not_held"  # a law the corpus cannot hold: a local regulation, another jurisdiction's law


# Titles of laws that are not national law of the mainland: a province's or city's regulations, other
# jurisdictions. Only used for a title the corpus lacks (香港特别行政区基本法 is national law and in the corpus).
_LOCAL_TITLE = re.compile(
    r"^(?:北京|天津|上海|重庆|河北|山西|辽宁|吉林|黑龙江|江苏|浙江|安徽|福建|江西|山东|河南|湖北|湖南|广东|海南|四川|贵州"
    r"|云南|陕西|甘肃|青海|内蒙古|广西|西藏|宁夏|新疆|[\u4e00-\u9fff]{2,5}(?:省|市|自治区|自治州|自治县|县|经济特区))")
_FOREIGN_TITLE = re.compile(
    r"^(?:香港|澳门|台湾|日本|德国|美国|法国|英国|韩国|新加坡|俄罗斯|意大利|加拿大|澳大利亚|印度|瑞士|欧盟|欧洲|联合国)")
_ITEM_LINE = re.compile(r"^[（(][一二三四五六七八九十百零〇0-9]+[）)]")


def article_structure(text: str) -> list[int]:
    """The items of each paragraph of an article: ``[0, 0, 5, 0, 0]`` is five paragraphs, the third with five
    items. Paragraphs are non-empty lines; a line opening with （一） is an item of the paragraph before it."""
    out: list[int] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if _ITEM_LINE.match(line):
            if not out:
                out.append(0)
            out[-1] += 1
        else:
            out.append(0)
    return out or [0]


_INLINE_ITEM = re.compile(r"[（(][一二三四五六七八九十百零〇]+[）)]")


def _structure_problem(citation: LegalCitation, doc: Document, lines: bool = True) -> str | None:
    """Why the cited paragraph or item is not in the article (None when it is, or when none is cited).
    ``lines``: whether the law's texts keep one paragraph a line (a corpus that runs paragraphs together, as
    JuDGE's does, cannot say how many an article has, so paragraphs are not checked there)."""
    para, item = getattr(citation, "paragraph", None), getattr(citation, "item", None)
    if citation.system != "zh" or (para is None and item is None):
        return None  # Swiss and US subdivisions (Abs. 2, (a)(2)) are not checked against the text
    parts = article_structure(doc.text)
    if not lines:
        para = None
    if not any(parts):  # items written inline: （一）…；（二）… on one line (counted for the 第N款 hint too)
        parts = [len(_INLINE_ITEM.findall(doc.text))] if len(parts) == 1 or para is None else parts
    if para is not None and para > len(parts):
        hint = f" (it has {sum(parts)} items (项): item {para}, 第{to_chinese(para)}项, may be meant)" \
            if item is None and sum(parts) >= para else ""
        return (f"the article has {len(parts)} paragraph{'s' if len(parts) != 1 else ''} (款), "
                f"so it has no paragraph {para}{hint}")
    if item is not None:
        n = parts[para - 1] if para is not None else sum(parts)
        where = f"paragraph {para}" if para is not None and len(parts) > 1 else "the article"
        if item > n:
            return f"{where} has {n} item{'s' if n != 1 else ''} (项), so it has no item {item}" if n else \
                f"{where} has no items (项)"
    return None


def not_held(title: str) -> str | None:
    """Why a title the corpus lacks is one it cannot hold ("local", "foreign"), or None."""
    t = law_key(title)
    if _FOREIGN_TITLE.match(t):
        return "foreign"
    if _LOCAL_TITLE.match(t):
        return "local"
    return None


@dataclass(frozen=True)
class Resolution:
    """The outcome of resolving one citation: the document, or the reason there is none."""

    citation: LegalCitation
    document: Document | None = None
    law: str | None = None  # the corpus title the written law resolved to
    reason: Reason | None = None
    candidates: tuple[str, ...] = ()  # corpus titles (ambiguous law) or document ids (ambiguous article)
    detail: str = ""  # why, when the reason alone does not say it (the paragraphs an article has, a title's table)

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
        if self.reason is Reason.UNKNOWN_PARAGRAPH:
            return f"{self.canonical}: no such paragraph or item" + (f": {self.detail}" if self.detail else "")
        if self.reason is Reason.NOT_HELD:
            return f"{self.canonical}: not held by the corpus" + (f": {self.detail}" if self.detail else "")
        if self.detail:
            return f"{self.canonical}: {self.detail}"
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


def _law_title(doc: Document) -> str:
    """A version's law title without its version suffix: the document's name less its article label."""
    label, title = str(doc.metadata.get("article_label") or ""), doc.title or ""
    return title[: -len(label)] if label and title.endswith(label) else ""


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
        # the laws whose texts keep one paragraph a line: only there can a cited paragraph be said not to exist
        self._lined = {law for (law, _), docs in index.items() if any("\n" in d.text.strip() for d in docs)}

    @classmethod
    def from_documents(cls, documents: Iterable[Document], *, keep: Any = None) -> "CitationResolver":
        """Index documents that carry ``metadata["law"]`` and ``metadata["article"]``; others are ignored, and so
        are superseded versions (``metadata["ended_by"] == "superseded"``): a citation names the text in force, and
        what it said before is the currency mark's to tell (:mod:`legalrag.citecheck.currency`).

        ``keep`` (a filter of ``laws.select.in_force_filter``): only the versions in force on that filter's day,
        each under its law's own title (an older version's ``公司法（2018-10-26版）`` answers ``公司法第二十六条``
        as of 2022), so a citation written of a past day resolves to the text of that day."""
        index: dict[tuple[str, str], list[Document]] = {}
        for doc in documents:
            if keep is None and doc.metadata.get("ended_by") == "superseded":
                continue
            if keep is not None and not keep(doc):
                continue
            law, article = doc.metadata.get("law"), doc.metadata.get("article")
            if keep is not None and law and doc.metadata.get("in_force_from"):
                law = _law_title(doc) or law
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
        if isinstance(citation, EnglishCitation):
            unresolved = _english_unresolved(citation)
            if unresolved is not None:
                return unresolved
        if not citation.law:
            return Resolution(citation, reason=Reason.NO_LAW)
        found = self.match_law(citation.law)
        if not found.titles:
            kind = not_held(citation.law) if citation.system == "zh" else None
            if kind is not None:
                return Resolution(citation, reason=Reason.NOT_HELD, detail=_NOT_HELD[kind].format(law=citation.law))
            return Resolution(citation, reason=Reason.UNKNOWN_LAW)
        key = _article_key(citation.article_key)
        if found.ambiguous:
            # Several corpus titles with the same exact key (the same law twice): fine if they agree.
            docs = [d for t in found.titles for d in self._index.get((t, key), [])]
            if found.exact and docs and len({d.text for d in docs}) == 1:
                return self._checked(citation, docs[0], docs[0].metadata["law"])
            return Resolution(citation, reason=Reason.AMBIGUOUS_LAW, candidates=found.titles)
        title = found.titles[0]
        docs = self._index.get((title, key), [])
        if not docs:
            return Resolution(citation, law=title, reason=Reason.UNKNOWN_ARTICLE)
        if len({d.text for d in docs}) > 1:
            return Resolution(citation, law=title, reason=Reason.AMBIGUOUS_ARTICLE,
                              candidates=tuple(d.id for d in docs))
        return self._checked(citation, docs[0], title)

    def _checked(self, citation: LegalCitation, doc: Document, title: str) -> Resolution:
        """The article's document, unless the cited paragraph or item is not in it."""
        problem = _structure_problem(citation, doc, lines=title in self._lined)
        if problem is None:
            return Resolution(citation, doc, title)
        return Resolution(citation, law=title, reason=Reason.UNKNOWN_PARAGRAPH, candidates=(doc.id,),
                          detail=f"{problem}; the article exists (document {doc.id})")

    def resolve(self, citation: LegalCitation) -> Document | None:
        """The article's document, or None (see :meth:`lookup` for the reason)."""
        return self.lookup(citation).document


_NOT_HELD = {
    "local": "《{law}》 is a local regulation; the corpus holds the national law only (laws, administrative "
             "regulations, judicial interpretations), so it cannot be checked here",
    "foreign": "《{law}》 is not mainland China's national law; the corpus holds only the national law of the PRC, "
               "so it cannot be checked here",
}


def _english_unresolved(c: EnglishCitation) -> Resolution | None:
    """Why an English citation cannot reach the corpus (None when its title gives one Chinese title)."""
    if c.written is None:
        return Resolution(c, reason=Reason.NO_LAW)
    if c.relative:
        return Resolution(c, reason=Reason.UNKNOWN_LAW,
                          detail=f"{c.written!r} refers to the citing law; name the law to check it")
    if len(c.titles) > 1:
        return Resolution(c, reason=Reason.AMBIGUOUS_LAW, candidates=c.titles,
                          detail=f"the English title {c.written!r} may mean any of: {', '.join(c.titles)}")
    if c.titles:
        return None
    if c.foreign:
        return Resolution(c, reason=Reason.NOT_HELD,
                          detail=f"{c.written!r} is not the national law of the PRC; the corpus holds only the "
                                 "national law of the PRC, so it cannot be checked here")
    return Resolution(c, reason=Reason.UNKNOWN_LAW,
                      detail=f"no corpus law has the English title {c.written!r} (the English title table knows "
                             f"{EnglishTitles.load().n_laws} laws); cite it by its Chinese title to check it")


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


__all__ = ["CheckedCitation", "CitationResolver", "Reason", "Resolution", "article_structure", "check_citations",
           "explain_citations", "law_key", "not_held"]
