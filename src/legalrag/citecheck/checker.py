"""Check every citation in any text: the library behind ``legalrag check``, ``POST /citations/check`` and the
MCP tool.

``check_text(text, resolver, scorer)`` marks every citation (:mod:`legalrag.citecheck.marks`) and returns a
:class:`CheckReport`: the citations with their spans, marks, article texts and reasons, and a summary. A long
text is read in blocks of about ``BLOCK_CHARS`` characters cut at paragraph ends (claims never cross a block),
so memory stays bounded and ``progress(done_chars, total_chars)`` is called after each block. Texts over
``MAX_CHECK_CHARS`` are refused with the limit named.

``serialize.check_report_to_dict`` gives its JSON shape; ``annotate_markdown`` / ``annotate_html`` give a copy of the text with each citation marked and a list of
notes at the end.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from legalrag.citecheck.marks import LABELS, Mark, explain_all, mark_citations, mark_line, summarise_marks
from legalrag.citecheck.repealed import RepealedTable
from legalrag.citecheck.resolve import CitationResolver
from legalrag.errors import InputError
from legalrag.types import Citation

MAX_CHECK_CHARS = 6_000_000  # a 5 MB UTF-8 document of Chinese text is about 1.7 M characters; Latin text 5 M
BLOCK_CHARS = 20_000
SYMBOLS = {Mark.SUPPORTED.value: "✓", Mark.EXISTS.value: "?", Mark.NOT_FOUND.value: "✗",
           Mark.REPEALED.value: "↻", Mark.NO_CORPUS.value: "∅"}


@dataclass(frozen=True)
class CheckedSpan:
    """One citation of the text: where it is (character offsets) and its marked citation."""

    start: int
    end: int
    citation: Citation


@dataclass(frozen=True)
class CheckReport:
    text: str
    items: tuple[CheckedSpan, ...]
    seconds: float = 0.0
    blocks: int = 1
    summary: dict = field(default_factory=dict)

    @property
    def citations(self) -> tuple[Citation, ...]:
        return tuple(i.citation for i in self.items)


def blocks(text: str, size: int = BLOCK_CHARS) -> list[tuple[int, int]]:
    """Spans of about ``size`` characters ending at a paragraph (else a line, else a sentence) end."""
    out, pos, n = [], 0, len(text)
    while pos < n:
        end = min(pos + size, n)
        if end < n:
            for sep in ("\n\n", "\n", "。"):
                cut = text.rfind(sep, pos + size // 2, end)
                if cut > 0:
                    end = cut + len(sep)
                    break
        out.append((pos, end))
        pos = end
    return out


def check_text(text: str, resolver: CitationResolver, scorer: Any = None, *, retrieved_ids: Sequence[str] | None = None,
               repealed: RepealedTable | None = None, progress: Callable[[int, int], None] | None = None,
               max_chars: int = MAX_CHECK_CHARS, source: str = "the text") -> CheckReport:
    """Every citation of ``text`` marked, with its span (see the module docstring)."""
    if len(text) > max_chars:
        raise InputError(f"{source} has {len(text):,} characters; the checker reads at most {max_chars:,} "
                         "(about 5 MB); split it and check the parts", field="text")
    t0 = time.perf_counter()
    items: list[CheckedSpan] = []
    spans = blocks(text)
    for lo, hi in spans:
        part = text[lo:hi]
        checked = explain_all(part, resolver)
        if checked:
            marked = mark_citations(part, resolver, scorer, retrieved_ids, repealed, checked=checked)
            items += [CheckedSpan(lo + c.match.start, lo + c.match.end, m) for c, m in zip(checked, marked)]
        if progress is not None:
            progress(hi, len(text))
    cits = [i.citation for i in items]
    return CheckReport(text, tuple(items), time.perf_counter() - t0, len(spans), summarise_marks(cits))


def _groups(report: CheckReport) -> list[tuple[int, int, list[tuple[int, Citation]]]]:
    """Citations sharing one span (第一、三款) shown once; numbered in reading order."""
    out: list[tuple[int, int, list[tuple[int, Citation]]]] = []
    for n, item in enumerate(report.items, 1):
        if out and out[-1][0] == item.start and out[-1][1] == item.end:
            out[-1][2].append((n, item.citation))
        elif out and item.start < out[-1][1]:  # overlapping spans: note it on the earlier one
            out[-1][2].append((n, item.citation))
        else:
            out.append((item.start, item.end, [(n, item.citation)]))
    return out


def annotate_markdown(report: CheckReport) -> str:
    """The text with ``[✓1]``-style marks after each citation and numbered notes at the end."""
    parts, pos = [], 0
    for start, end, cits in _groups(report):
        parts.append(report.text[pos:end])
        parts.append("".join(f"[{SYMBOLS.get(c.mark, '?')}{n}]" for n, c in cits))
        pos = end
    parts.append(report.text[pos:])
    notes = ["", "", "---", "", "**Citations checked** (✓ supported, ? exists but not shown to support the sentence, "
             "✗ not found, ↻ repealed, ∅ no corpus for this jurisdiction):", ""]
    for n, item in enumerate(report.items, 1):
        c = item.citation
        notes.append(f"{n}. {SYMBOLS.get(c.mark, '?')} {c.canonical or c.text}: {mark_line(c)}")
    if not report.items:
        notes.append(report.summary.get("message", "no citations"))
    return "".join(parts) + "\n".join(notes) + "\n"


def annotate_html(report: CheckReport, title: str = "legalrag citation check") -> str:
    """A standalone HTML page: the text with each citation highlighted by its mark (hover: why)."""
    colours = {"supported": "#d4f4dd", "exists": "#fff3c4", "not_found": "#ffd6d6", "repealed": "#ffe0c2",
               "no_corpus": "#e4e4f4"}
    body, pos = [], 0
    for start, end, cits in _groups(report):
        body.append(html.escape(report.text[pos:start]))
        c = cits[0][1]
        tip = " | ".join(f"{n}. {c2.canonical or c2.text}: {mark_line(c2)}" for n, c2 in cits)
        refs = "".join(f"<sup>{SYMBOLS.get(c2.mark, '?')}{n}</sup>" for n, c2 in cits)
        body.append(f'<mark class="{html.escape(c.mark or "unchecked")}" title="{html.escape(tip)}" '
                    f'style="background:{colours.get(c.mark, "#eee")}">{html.escape(report.text[start:end])}</mark>'
                    f"{refs}")
        pos = end
    body.append(html.escape(report.text[pos:]))
    rows = []
    for n, item in enumerate(report.items, 1):
        c = item.citation
        article = f"<details><summary>article</summary><p>{html.escape(c.document_text)}</p></details>" \
            if c.document_text else ""
        rows.append(f"<li class=\"{html.escape(c.mark)}\">{SYMBOLS.get(c.mark, '?')} <b>{html.escape(c.canonical or c.text)}"
                    f"</b>: {html.escape(mark_line(c))}{article}</li>")
    if not report.items:
        rows.append(f"<li>{html.escape(report.summary.get('message', 'no citations'))}</li>")
    legend = ", ".join(f"{SYMBOLS[m.value]} {LABELS[m]}" for m in Mark)
    return (f"<!doctype html><html lang=\"zh\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            "</head><body><pre style=\"white-space:pre-wrap;font:inherit\">" + "".join(body) + "</pre><hr>"
            f"<p>{html.escape(legend)}</p><ol>" + "".join(rows) + "</ol></body></html>\n")


__all__ = ["BLOCK_CHARS", "CheckReport", "CheckedSpan", "MAX_CHECK_CHARS", "annotate_html", "annotate_markdown",
           "blocks", "check_text"]
