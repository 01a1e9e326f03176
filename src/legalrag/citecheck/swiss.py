"""Swiss article citations: ``Art. 100 Abs. 1 BGG``, ``Art. 8 Abs. 2 lit. a BV``, ``art. 100 al. 1 LTF``.

German (Art./Abs./lit./Ziff.), French (art./al./let./ch.) and Italian (art./cpv./lett./n.) forms are read;
the canonical form keeps the language it was written in. The law is the abbreviation as written (BGG, BV,
ZGB, StGB, LTF, Cst., CC...); a word with fewer than two capitals other than Cst./Cost. is not taken as one,
so ``Art. 5 The`` is not a citation, and a full stop after ``ZGB`` ends the sentence, not the abbreviation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from legalrag.citecheck.base import CitationMatch

_SUFFIX = r"(?:bis|ter|quater|quinquies|sexies|septies|octies|[a-z])?"
_PATTERN = re.compile(
    rf"\b(?P<art_word>Art\.|art\.|Artikel|Articolo|Article)\s*(?P<article>\d+{_SUFFIX})"
    rf"(?:\s*(?P<para_word>Abs\.|al\.|cpv\.)\s*(?P<paragraph>\d+{_SUFFIX}))?"
    rf"(?P<tail>(?:\s*(?:lit\.|let\.|lett\.)\s*[a-z]{_SUFFIX}|\s*(?:Ziff\.|ch\.|n\.)\s*\d+{_SUFFIX}){{0,2}})"
    r"\s+(?P<law>[A-Z][A-Za-z]*[A-Z][A-Za-z]*|Cst\.|Cost\.)(?![A-Za-z])"
)
_LETTER = re.compile(rf"(?:lit\.|let\.|lett\.)\s*([a-z]{_SUFFIX})")
_NUMBER = re.compile(rf"(?:Ziff\.|ch\.|n\.)\s*(\d+{_SUFFIX})")
_WORDS = {  # paragraph, letter, number
    "de": ("Art.", "Abs.", "lit.", "Ziff."),
    "fr": ("art.", "al.", "let.", "ch."),
    "it": ("art.", "cpv.", "lett.", "n."),
}


@dataclass(frozen=True)
class SwissCitation:
    """Art. <article> [Abs. <paragraph>] [lit. <letter>] [Ziff. <number>] <law>."""

    law: str
    article: str
    paragraph: str | None = None
    letter: str | None = None
    number: str | None = None
    lang: str = "de"
    number_first: bool = False  # Art. 6 Ziff. 3 lit. c EMRK (rather than Art. 83 lit. c Ziff. 2 BGG)
    system: ClassVar[str] = "ch"

    @property
    def article_key(self) -> str:
        return self.article

    def canonical(self, law: str | None = None) -> str:
        """The written abbreviation is kept (``law`` is ignored) so the language stays consistent."""
        art, abs_, lit, ziff = _WORDS.get(self.lang, _WORDS["de"])
        parts = [f"{art} {self.article}"]
        if self.paragraph:
            parts.append(f"{abs_} {self.paragraph}")
        tail = [(lit, self.letter), (ziff, self.number)]
        if self.number_first:
            tail.reverse()
        parts += [f"{word} {value}" for word, value in tail if value]
        parts.append(self.law)
        return " ".join(parts)

    def __str__(self) -> str:
        return self.canonical()


def _language(m: re.Match) -> str:
    words = (m.group("para_word") or "") + " " + m.group("tail")
    if "cpv." in words or "lett." in words or re.search(r"\bn\.", words):
        return "it"
    if "al." in words or "let." in words or "ch." in words:
        return "fr"
    if "Abs." in words or "lit." in words or "Ziff." in words:
        return "de"
    return "de" if m.group("art_word") in ("Art.", "Artikel") else "fr"


def extract_swiss(text: str) -> list[CitationMatch]:
    out = []
    for m in _PATTERN.finditer(text):
        tail = m.group("tail")
        letter, number = _LETTER.search(tail), _NUMBER.search(tail)
        cit = SwissCitation(
            law=m.group("law"), article=m.group("article"), paragraph=m.group("paragraph"),
            letter=letter.group(1) if letter else None, number=number.group(1) if number else None,
            lang=_language(m), number_first=bool(letter and number and number.start() < letter.start()),
        )
        out.append(CitationMatch(cit, m.start(), m.end(), m.group(0)))
    return out


def parse_swiss(text: str) -> SwissCitation:
    """Parse one whole Swiss citation; raise ValueError otherwise."""
    s = text.strip()
    found = extract_swiss(s)
    if len(found) != 1 or found[0].span != (0, len(s)):
        raise ValueError(f"not a single Swiss article citation: {text!r}")
    return found[0].citation  # type: ignore[return-value]


# The same federal acts under their German, French and Italian abbreviations (for resolving against a corpus
# that uses one language).
EQUIVALENT_LAWS = [
    {"BV", "Cst.", "Cost."}, {"BGG", "LTF"}, {"ZGB", "CC"}, {"OR", "CO"}, {"StGB", "CP"}, {"StPO", "CPP"},
    {"ZPO", "CPC"}, {"SchKG", "LP", "LEF"}, {"VwVG", "PA"}, {"IPRG", "LDIP", "LDIP"}, {"ATSG", "LPGA"},
    {"EMRK", "CEDH", "CEDU"}, {"DSG", "LPD", "LPD"},
]


def equivalent_laws(abbreviation: str) -> set[str]:
    """Other-language abbreviations of the same act (``LTF`` -> ``{"BGG"}``); empty when none is known."""
    a = abbreviation.strip()
    for group in EQUIVALENT_LAWS:
        if a in group or a.rstrip(".") in {g.rstrip(".") for g in group}:
            return {g for g in group if g.rstrip(".") != a.rstrip(".")}
    return set()
