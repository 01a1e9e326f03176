"""Citations of every supported system in one pass over a text, and parsing of a single citation.

Chinese law is read in Chinese (:mod:`legalrag.citecheck.chinese`) and in English
(:mod:`legalrag.citecheck.english`: ``Art. 40 of the Labor Contract Law``), both as the "zh" system; English
forms are looked for only outside the spans the other parsers took, so ``Art. 100 Abs. 1 BGG`` stays Swiss."""

from __future__ import annotations

from typing import Iterable

from legalrag.citecheck.aliases import AliasTable
from legalrag.citecheck.base import CitationMatch, LegalCitation
from legalrag.citecheck.chinese import extract_chinese, parse_chinese
from legalrag.citecheck.english import extract_english, parse_english
from legalrag.citecheck.swiss import extract_swiss, parse_swiss
from legalrag.citecheck.us import extract_us, parse_us

SYSTEMS = ("zh", "ch", "us")


def extract_citations(text: str, aliases: AliasTable | None = None,
                      systems: Iterable[str] = SYSTEMS) -> list[CitationMatch]:
    """Every citation in ``text`` in reading order. ``aliases`` (a corpus's titles) lets Chinese titles
    written without 《》 be recognised exactly; ``systems`` limits the search to some of "zh", "ch", "us"."""
    wanted = set(systems)
    unknown = wanted - set(SYSTEMS)
    if unknown:
        raise ValueError(f"unknown citation systems {sorted(unknown)}; choose from {SYSTEMS}")
    out: list[CitationMatch] = []
    if "zh" in wanted:
        out += extract_chinese(text, aliases)
    if "ch" in wanted:
        out += extract_swiss(text)
    if "us" in wanted:
        out += extract_us(text)
    if "zh" in wanted:
        out += extract_english(text, taken=[m.span for m in out])
    return sorted(out, key=lambda m: m.start)  # stable: a list's expansions keep their order


def parse_citation(text: str, aliases: AliasTable | None = None) -> LegalCitation:
    """Parse one whole citation of any system; raise ValueError when ``text`` is not exactly one."""
    for parse in (lambda s: parse_chinese(s, aliases), parse_swiss, parse_us, parse_english):
        try:
            return parse(text)
        except ValueError:
            continue
    raise ValueError(f"not a recognised citation: {text!r} (expected e.g. 《刑法》第二百六十四条, "
                     "Art. 29 Abs. 2 BV, 18 U.S.C. § 1030(a)(2), Fed. R. Evid. 803(6), Art. 40 of the Labor Contract Law)")
