"""The clauses of an article, with where each sits in the article's text, and quotes that keep a rule's exceptions.

One splitter serves every reader of clauses: the answer's evidence (``answer/evidence.py``), the quoted legal
basis of an answer, and the support model, which judges a claim against the best-matching clause rather than a
whole article. A clause ends after ``。；;！？!?`` or a sentence-final period; a numbered item (``（一）``,
``(a)``) starts a new clause; paragraphs (款) are the article's non-empty lines, except that a line opening with
an item number is an item of the paragraph before it.

Every ``Clause`` carries ``start``/``end`` offsets into the article text, so ``text[c.start:c.end] == c.text``:
a quote is cut from the article, never rewritten. ``quote`` widens a clause to the whole contiguous span that
states its rule and its exceptions (a following ``但是…`` / ``…除外`` / ``…不在此限`` sentence of the same
paragraph, or the rule before an exception that was matched on its own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CLAUSE_END_ZH = re.compile(r"(?<=[。；;！？!?])")
_ITEM_START_ZH = re.compile(r"(?=（[一二三四五六七八九十百]+）)")
_CLAUSE_END_EN = re.compile(r"(?<=[.;:?!])\s+(?=[A-Z(\"'])")
_ITEM_START_EN = re.compile(r"\s+(?=\((?:[a-z]{1,2}|[0-9]{1,2}|[ivx]{1,5})\)\s)")
_ITEM_LINE_ZH = re.compile(r"^（[一二三四五六七八九十百]+）")
_ITEM_LINE_EN = re.compile(r"^\((?:[a-z]{1,2}|[0-9]{1,2}|[ivx]{1,5})\)\s")
_EXCEPTION_ZH = re.compile(r"^(?:但是|但|然而)|除外[。；;]?$|不在此限[。；;]?$|另有规定的[，,]?从其规定")
_EXCEPTION_EN = re.compile(r"^(?:but|however|except|unless|provided that)\b|\bexcept\b|\bunless\b", re.I)


@dataclass(frozen=True)
class Clause:
    """One clause of an article: its paragraph (1-based), its item number if it is a numbered item, its text,
    and its ``[start, end)`` offsets in the article text."""

    paragraph: int
    text: str
    start: int
    end: int
    item: str = ""


@dataclass(frozen=True)
class Quote:
    """A verbatim span of an article: the decisive clause with the exceptions of its rule."""

    text: str
    start: int
    end: int
    paragraph: int
    exceptions: int = 0  # how many exception clauses the span took in


def clauses(text: str, lang: str = "zh") -> list[Clause]:
    """The clauses of ``text`` in order, each with its offsets into ``text``."""
    out: list[Clause] = []
    n = 0
    pos = 0
    for raw in text.splitlines(keepends=True):
        line_start = pos
        pos += len(raw)
        line = raw.strip()
        if not line:
            continue
        item_line = _ITEM_LINE_ZH.match(line) or _ITEM_LINE_EN.match(line)
        if not (n and item_line):
            n += 1
        if lang == "zh":
            parts = [q for p in _CLAUSE_END_ZH.split(line) for q in _ITEM_START_ZH.split(p)]
        else:
            parts = [q for p in _CLAUSE_END_EN.split(line) for q in _ITEM_START_EN.split(p)]
        cursor = line_start
        for part in parts:
            part = part.strip()
            if not part:
                continue
            start = text.find(part, cursor)
            if start < 0:  # cannot happen: parts are pieces of the line, in order
                raise AssertionError(f"clause not found in its article: {part!r}")
            cursor = start + len(part)
            m = _ITEM_LINE_ZH.match(part) or _ITEM_LINE_EN.match(part)
            out.append(Clause(paragraph=n, text=part, start=start, end=cursor, item=m.group(0).strip() if m else ""))
    return out


def split_clauses(text: str, lang: str = "zh") -> list[tuple[int, str]]:
    """``(paragraph number, clause)`` pairs of an article, in order."""
    return [(c.paragraph, c.text) for c in clauses(text, lang)]


def is_exception(clause: str, lang: str = "zh") -> bool:
    """Whether a clause states an exception to the rule before it (``但是…``, ``…除外``, ``unless …``)."""
    return bool((_EXCEPTION_ZH if lang == "zh" else _EXCEPTION_EN).search(clause.strip()))


def quote(text: str, clause: Clause, lang: str = "zh", *, parts: list[Clause] | None = None) -> Quote:
    """The verbatim span of ``text`` that states ``clause``'s rule with its exceptions: the clause, the exception
    clauses that follow it in the same paragraph, and, when ``clause`` is itself an exception, the rule before
    it. The span is contiguous, so it is a substring of the article."""
    parts = parts if parts is not None else clauses(text, lang)
    try:
        i = next(j for j, c in enumerate(parts) if c.start == clause.start and c.end == clause.end)
    except StopIteration:
        raise ValueError(f"the clause is not one of this article's clauses: {clause.text!r}") from None
    lo = hi = i
    taken = 0
    while lo > 0 and is_exception(parts[lo].text, lang) and parts[lo - 1].paragraph == clause.paragraph:
        lo -= 1
        taken += 1
    while (hi + 1 < len(parts) and parts[hi + 1].paragraph == clause.paragraph
           and not parts[hi + 1].item and is_exception(parts[hi + 1].text, lang)):
        hi += 1
        taken += 1
    start, end = parts[lo].start, parts[hi].end
    return Quote(text=text[start:end], start=start, end=end, paragraph=clause.paragraph, exceptions=taken)
