"""US citations: the Code (``18 U.S.C. § 1030(a)(2)``, ``42 U.S.C. §§ 1983, 1985``), the C.F.R.
(``29 C.F.R. § 1630.2(g)``) and the federal rules (``Fed. R. Evid. 803(6)``, ``Fed. R. Civ. P. 12(b)(6)``,
also the shorthands FRE/FRCP/FRCrP/FRAP/FRBP).

``§§`` lists give one citation per section; a hyphen is part of a section number (``42 U.S.C. § 2000e-2``),
so ranges are not expanded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from legalrag.citecheck.base import CitationMatch

_SECTION = r"\d+[A-Za-z]*(?:[.\-]\d+[A-Za-z]*)*"
_SUBS = r"(?:\([A-Za-z0-9]{1,5}\))*"
_CODE = re.compile(
    r"(?<![\d.])(?P<title>\d{1,3})\s*(?P<code>U\.?\s?S\.?\s?C\.?(?:\s?A\.?)?|C\.?\s?F\.?\s?R\.?)"
    rf"\s*(?P<sign>§§|§|[Ss]ections?|[Ss]ecs?\.)?\s*(?P<section>{_SECTION})(?P<subs>{_SUBS})"
)
_MORE = re.compile(rf"\s*(?:,\s*(?:and\s+)?|and\s+|&\s*)(?P<section>{_SECTION})(?P<subs>{_SUBS})")
_RULES = re.compile(
    r"(?:\bFed\.\s?R\.\s?(?P<kind>Evid|Civ\.\s?P|Crim\.\s?P|App\.\s?P|Bankr\.\s?P)\.?"
    r"|\b(?P<abbr>FRE|FRCP|FRCrP|FRAP|FRBP))"
    rf"\s*(?:[Rr]ule\s*)?(?P<section>\d+(?:\.\d+)?)(?P<subs>{_SUBS})"
)
_RULE_NAMES = {"evid": "Fed. R. Evid.", "civp": "Fed. R. Civ. P.", "crimp": "Fed. R. Crim. P.",
               "appp": "Fed. R. App. P.", "bankrp": "Fed. R. Bankr. P.", "fre": "Fed. R. Evid.",
               "frcp": "Fed. R. Civ. P.", "frcrp": "Fed. R. Crim. P.", "frap": "Fed. R. App. P.",
               "frbp": "Fed. R. Bankr. P."}


@dataclass(frozen=True)
class USCitation:
    """<title> U.S.C. § <section>(<sub>)… , <title> C.F.R. § …, or Fed. R. … <rule>(<sub>)…"""

    code: str  # "U.S.C.", "C.F.R." or a rules name such as "Fed. R. Evid."
    section: str
    title: int | None = None
    subdivisions: tuple[str, ...] = ()
    system: ClassVar[str] = "us"

    @property
    def law(self) -> str:
        return f"{self.title} {self.code}" if self.title is not None else self.code

    @property
    def article_key(self) -> str:
        return self.section

    def canonical(self, law: str | None = None) -> str:
        """Bluebook style; ``law`` is ignored since the code names are fixed."""
        subs = "".join(f"({s})" for s in self.subdivisions)
        if self.title is not None:
            return f"{self.title} {self.code} § {self.section}{subs}"
        return f"{self.code} {self.section}{subs}"

    def __str__(self) -> str:
        return self.canonical()


def _subs(s: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\(([A-Za-z0-9]+)\)", s))


def extract_us(text: str) -> list[CitationMatch]:
    out = []
    for m in _CODE.finditer(text):
        code = "C.F.R." if m.group("code").upper().startswith("C") else "U.S.C."
        title = int(m.group("title"))
        out.append(CitationMatch(USCitation(code, m.group("section"), title, _subs(m.group("subs"))),
                                 m.start(), m.end(), m.group(0)))
        if m.group("sign") == "§§":
            pos = m.end()
            while more := _MORE.match(text, pos):
                cit = USCitation(code, more.group("section"), title, _subs(more.group("subs")))
                start = more.start("section")
                out.append(CitationMatch(cit, start, more.end(), text[start:more.end()], True))
                pos = more.end()
    for m in _RULES.finditer(text):
        kind = re.sub(r"[\s.]", "", m.group("kind") or m.group("abbr")).lower()
        cit = USCitation(_RULE_NAMES[kind], m.group("section"), None, _subs(m.group("subs")))
        out.append(CitationMatch(cit, m.start(), m.end(), m.group(0)))
    return sorted(out, key=lambda c: c.start)


def parse_us(text: str) -> USCitation:
    """Parse one whole US citation; raise ValueError otherwise."""
    s = text.strip()
    found = extract_us(s)
    if len(found) != 1 or found[0].span != (0, len(s)):
        raise ValueError(f"not a single US citation: {text!r}")
    return found[0].citation  # type: ignore[return-value]
