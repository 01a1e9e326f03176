"""Support marks: every citation in a text marked supported / exists / not found / repealed / no corpus.

``mark_citations(text, resolver, scorer, retrieved_ids)`` returns one :class:`legalrag.types.Citation` per
citation, in reading order, never dropping one:

- **supported**: it resolves, it was among the evidence (``retrieved_ids``; ``None`` when the text had no
  evidence set, e.g. a document being checked), and the support model says one of its clauses supports the claim
  (:mod:`legalrag.citecheck.claims` says which words that is; ``clause`` quotes the supporting clause);
- a citation followed by a quotation of its article, word for word (``《X》第N条：“…”``, as an answer's quoted
  legal basis is printed), is **supported** with ``mark_reason="quoted"`` (the quote is its claim and its clause);
- **exists** (shown to support nothing): ``mark_reason`` is ``not_retrieved`` (not among the evidence),
  ``does_not_bear`` (no clause of it states the claim: ``clause`` quotes the best-matching one and
  ``clause_reason`` says in plain words why it is not taken as support) or ``no_claim`` (the text states nothing
  to check);
- **repealed**: the law is in the repealed-laws table (``successor`` names the law in force, with articles
  where known);
- **no_corpus**: a Swiss or US citation against a corpus with no law of that system (or the reverse);
- **not_found**: anything else that does not resolve, including citations in a format no parser knows
  (``Article 82 of the Labor Contract Law``), which are kept with ``mark_reason="unknown_format"``.

``summarise`` counts the marks and says when a text cites nothing (never reported as supported). ``MEANINGS``
says what each mark means in plain words, for a reader who has not seen the legend.

Every path (answers, ``check``, ``serve``, MCP) marks with the same support model: the scorer the composition root
built with ``wiring.make_support_scorer`` and passed down. A caller that passes none gets the lexical model
(``SupportScorer()``, no encoder): a library call works without the root, and never reaches up for its model.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, replace
from typing import Any, Iterable, Sequence

from legalrag.citecheck.base import CitationMatch
from legalrag.citecheck.claims import find_claims
from legalrag.citecheck.repealed import RepealedTable
from legalrag.citecheck.resolve import CheckedCitation, CitationResolver, Reason, Resolution
from legalrag.types import Citation

_CJK = re.compile(r"[\u4e00-\u9fff]")


class Mark(str, enum.Enum):
    SUPPORTED = "supported"
    EXISTS = "exists"
    NOT_FOUND = "not_found"
    REPEALED = "repealed"
    NO_CORPUS = "no_corpus"


LABELS = {Mark.SUPPORTED: "supported", Mark.EXISTS: "exists, not shown to support this sentence",
          Mark.NOT_FOUND: "not found", Mark.REPEALED: "repealed", Mark.NO_CORPUS: "no corpus for this jurisdiction"}
MEANINGS = {
    Mark.SUPPORTED: {"en": "a clause of this article says what the sentence says (the clause is quoted)",
                     "zh": "该条有一句话说的正是这句话的内容（已引出该句）"},
    Mark.EXISTS: {"en": "the article exists, but none of its clauses is shown to say what the sentence says: read "
                        "the closest clause and decide, or cite another article",
                  "zh": "法条存在，但没有一句被认定为说的是这句话的内容：请看最接近的一句再判断，或改引其他法条"},
    Mark.NOT_FOUND: {"en": "no such article in the corpus: check the law's title and the article number",
                     "zh": "语料中没有这一条：请核对法律名称和条号"},
    Mark.REPEALED: {"en": "the law was repealed: cite the law in force instead",
                    "zh": "该法已废止：请改引现行有效的法律"},
    Mark.NO_CORPUS: {"en": "the corpus holds no law of this jurisdiction, so it cannot be checked here",
                     "zh": "语料中没有这一法域的法律，无法在此核对"},
}
REASONS = {"quoted": "it is quoted word for word", "not_retrieved": "not among the retrieved articles the answer was given",
           "does_not_bear": "its text does not bear on the claim", "no_claim": "the text states no claim to check it against",
           "unknown_format": "a citation format the resolver does not know"}


@dataclass(frozen=True)
class UnknownCitation:
    """A citation-like phrase no parser reads (``Article 82 of the Labor Contract Law``): kept, never dropped."""

    written: str
    system: str = "unknown"

    @property
    def law(self) -> str | None:
        return None

    @property
    def article_key(self) -> str:
        return self.written

    def canonical(self, law: str | None = None) -> str:
        return self.written


_UNKNOWN = re.compile(
    r"(?:\b(?:Articles?|Art\.|Sections?|Sec\.|Paragraph|Para\.|Rule)\s*|§§?\s*)\d+[A-Za-z]?(?:\s*\([0-9A-Za-z]+\))*"
    r"(?:\s+(?:of\s+(?:the\s+)?)?[A-Z][\w.'’-]*(?:(?:\s+(?:of|and|on|for|the))*\s+[A-Z][\w.'’-]*){0,8})?")


def extract_unknown(text: str, taken: Sequence[tuple[int, int]]) -> list[CitationMatch]:
    """Citation-like phrases outside the spans the parsers took."""
    out = []
    for m in _UNKNOWN.finditer(text):
        if any(s < m.end() and m.start() < e for s, e in taken):
            continue
        written = m.group(0).rstrip(" .")
        out.append(CitationMatch(UnknownCitation(written), m.start(), m.start() + len(written), written))
    return out


def corpus_systems(resolver: CitationResolver) -> set[str]:
    """Which citation systems the corpus can answer: "zh" when it has Chinese titles, "latin" otherwise."""
    titles = resolver.aliases.titles
    return {"zh" if _CJK.search(t) else "latin" for t in titles}


def _no_corpus(system: str, systems: set[str]) -> bool:
    if system == "zh":
        return "zh" not in systems
    if system in ("ch", "us"):
        return "latin" not in systems
    return False


def explain_all(text: str, resolver: CitationResolver) -> list[CheckedCitation]:
    """Every citation in ``text`` (unknown formats included), resolved."""
    matches = resolver.extract(text)
    matches = sorted(matches + extract_unknown(text, [m.span for m in matches]), key=lambda m: m.start)
    out = []
    for m in matches:
        if isinstance(m.citation, UnknownCitation):
            r = Resolution(m.citation, reason=Reason.UNKNOWN_LAW)
        else:
            r = resolver.lookup(m.citation)
        doc = r.document
        out.append(CheckedCitation(m, r, Citation(
            text=m.text, canonical=r.canonical, resolved=doc is not None, document_id=doc.id if doc else None,
            document_text=doc.text if doc else "", note=r.message)))
    return out


def mark_citations(text: str, resolver: CitationResolver | Iterable[Any], scorer: Any = None,
                   retrieved_ids: Iterable[str] | None = None, repealed: RepealedTable | None = None,
                   checked: Sequence[CheckedCitation] | None = None) -> list[Citation]:
    """Every citation in ``text`` with its mark (module docstring). ``scorer``: a
    :class:`~legalrag.citecheck.support.SupportScorer` (None: the lexical model, ``SupportScorer()``; every path
    that marks passes the root's ``wiring.make_support_scorer()``); ``retrieved_ids``: the evidence an answer was
    given (None: no evidence set, as for a document being checked)."""
    if not isinstance(resolver, CitationResolver):
        resolver = CitationResolver.from_documents(resolver)
    repealed = repealed if repealed is not None else RepealedTable.load()
    checked = list(checked) if checked is not None else explain_all(text, resolver)
    retrieved = set(retrieved_ids) if retrieved_ids is not None else None
    systems = corpus_systems(resolver)
    claims = find_claims(text, [c.match for c in checked])
    to_score: list[tuple[int, str, str]] = []
    out: list[Citation] = []
    for i, (c, claim) in enumerate(zip(checked, claims)):
        cit, res = c.citation, c.resolution
        in_ev = cit.resolved and (retrieved is None or cit.document_id in retrieved)
        cit = replace(cit, in_retrieved=bool(in_ev) if retrieved is not None else False,
                      claim=claim.text if claim else "")
        system = getattr(res.citation, "system", "zh")
        if cit.resolved:
            gone = repealed.lookup(res.law)
            if gone is not None:
                cit = replace(cit, note=f"{cit.note}; {gone.describe()}", successor=gone.successor)
            quoted = verbatim_quote(text, c.match.end, res.document.text if res.document is not None else "")
            if retrieved is not None and not in_ev:
                cit = replace(cit, mark=Mark.EXISTS.value, mark_reason="not_retrieved")
            elif quoted:  # "《X》第N条：“…”" quoting the article word for word: as the answer's quoted basis
                cit = replace(cit, mark=Mark.SUPPORTED.value, mark_reason="quoted", claim=quoted, clause=quoted)
            elif claim is None:
                cit = replace(cit, mark=Mark.EXISTS.value, mark_reason="no_claim")
            else:
                to_score.append((i, claim.text, res.document))
        elif system == "unknown":
            cit = replace(cit, mark=Mark.NOT_FOUND.value, mark_reason="unknown_format",
                          note=f"{cit.text}: {REASONS['unknown_format']}; it is kept unchecked")
        elif _no_corpus(system, systems):
            cit = replace(cit, mark=Mark.NO_CORPUS.value, mark_reason="no_corpus",
                          note=f"{cit.canonical or cit.text}: the corpus has no law of this jurisdiction "
                               f"({'Chinese' if system == 'zh' else 'Swiss' if system == 'ch' else 'US'})")
        else:
            written = res.citation.law
            gone = repealed.lookup(written)
            if gone is not None:
                arts = repealed.successor_articles(written, res.citation.article_key)
                cit = replace(cit, mark=Mark.REPEALED.value, mark_reason="repealed",
                              note=f"{cit.note}; {gone.describe(arts)}",
                              successor=gone.successor + ("".join(_labels(arts)) if arts else ""))
            else:  # a law the corpus cannot hold (a local regulation, another jurisdiction) is no corpus, not not found
                held = res.reason is not Reason.NOT_HELD
                cit = replace(cit, mark=(Mark.NOT_FOUND if held else Mark.NO_CORPUS).value,
                              mark_reason=res.reason.value if res.reason else "")
        out.append(cit)
    if to_score:
        if scorer is None:
            from legalrag.citecheck.support import SupportScorer

            scorer = SupportScorer()
        pairs = [(claim, article) for _, claim, article in to_score]
        for (i, _, _), j in zip(to_score, _judge(scorer, pairs)):
            ok = j.supported
            out[i] = replace(out[i], support=round(float(j.probability), 4),
                             mark=(Mark.SUPPORTED if ok else Mark.EXISTS).value,
                             mark_reason="" if ok else "does_not_bear", clause=j.clause,
                             clause_reason=j.reason,
                             note="; ".join(x for x in (out[i].note, getattr(j, "note", "")) if x))
    return out


_QUOTE = re.compile(r"\s*[：:]\s*[“\"「]([^”\"」\n]{8,})[”\"」]")
_LINE_REST = re.compile(r"[^\n]*")
_PUNCT = re.compile(r"[\s。；;，,.!！?？）)]*")


def verbatim_quote(text: str, end: int, article: str) -> str:
    """The quotation right after a citation (``《X》第N条：“…”``, at least 8 characters) when every part of it
    (parts cut at ``…``) is word for word in the article's text and nothing but punctuation follows it on its
    line (a quote followed by a claim of its own is judged like any claim); "" otherwise."""
    m = _QUOTE.match(text, end)
    if not m or not article or _PUNCT.fullmatch(_LINE_REST.match(text, m.end()).group(0)) is None:
        return ""
    parts = [p.strip() for p in re.split(r"…+|\.\.\.", m.group(1)) if p.strip()]
    return m.group(1) if parts and all(p in article for p in parts) else ""


def _judge(scorer: Any, pairs: list[tuple[str, Any]]) -> list[Any]:
    """The scorer's judgements; a scorer with only ``scores`` and ``threshold`` (a test's fixed probability)
    gives judgements that name no clause."""
    from legalrag.citecheck.support import Judgement

    if hasattr(scorer, "judge"):
        return scorer.judge(pairs)
    t = scorer.threshold
    return [Judgement(float(p), p >= t, t) for p in scorer.scores(pairs)]


def _labels(arts: Sequence[str]) -> list[str]:
    from legalrag.citecheck.chinese import ChineseCitation

    return ["、".join(ChineseCitation(None, int(a.split("-")[0]), int(a.split("-")[1]) if "-" in a else None)
                     .article_label for a in arts)]


def mark_line(c: Citation) -> str:
    """One line a reader can act on: the mark and why (for a scored citation, the clause it rests on)."""
    mark = Mark(c.mark) if c.mark else None
    if mark is None:
        return "checked for existence only"
    text = LABELS[mark]
    if mark is Mark.SUPPORTED:
        line = f"{text} (support {c.support:.2f})" if c.support is not None else text
        return f"{line}: by the clause 「{_short(c.clause)}」" if c.clause else line
    if mark is Mark.EXISTS:
        why = c.clause_reason if c.mark_reason == "does_not_bear" and c.clause_reason else \
            REASONS.get(c.mark_reason, c.mark_reason)
        score = f", support {c.support:.2f}" if c.support is not None and "(support " not in why else ""
        closest = f"; closest clause 「{_short(c.clause)}」" if c.clause and c.mark_reason == "does_not_bear" else ""
        return f"{text}: {why}{score}{closest}"
    if mark is Mark.REPEALED:
        return f"{text}: {c.note}"
    return f"{text}: {c.note}" if c.note else text


def meaning(c: Citation, lang: str = "en") -> str:
    """What the citation's mark means, in plain words (``MEANINGS``); "" for a citation checked for existence."""
    return MEANINGS[Mark(c.mark)]["zh" if lang == "zh" else "en"] if c.mark else ""


def _short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"


def summarise_marks(citations: Sequence[Citation]) -> dict[str, Any]:
    """Counts of each mark; ``no_citations`` when the text cites nothing (never reported as supported)."""
    counts = {m.value: sum(c.mark == m.value for c in citations) for m in Mark}
    out: dict[str, Any] = {"citations": len(citations), **counts, "no_citations": not citations}
    if not citations:
        out["message"] = "the text cites no article: nothing in it is shown to be supported"
    return out


__all__ = ["LABELS", "MEANINGS", "Mark", "REASONS", "meaning", "verbatim_quote", "UnknownCitation", "corpus_systems", "explain_all", "extract_unknown",
           "mark_citations", "mark_line", "summarise_marks"]
