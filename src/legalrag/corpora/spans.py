"""Where a text is cut into the units legalrag indexes: its headers (Markdown, and Chinese 编/章/节 on their own
line), overlapping windows cut at the best boundary in reach, and the articles (第X条) of a statute text.

``documents.py`` turns these spans into documents; see its docstring for the cut preferences and metadata.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Iterable

from legalrag.errors import InputError

DEFAULT_SIZE = 500
DEFAULT_OVERLAP = 100

_MD_HEADER = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)
_ZH_HEADER = re.compile(  # 第一章 总则 / 第二节　合同的订立 / 第三编: on its own line, no sentence punctuation
    r"^[ \t\u3000]*(第[零〇一二两三四五六七八九十百千0-9]+([编章节]))"
    r"(?:[ \t\u3000]*([^\s。！？；，,.!?][^。！？；，,.!?\n]{0,30}))?[ \t\u3000]*$", re.M)
_ZH_LEVEL = {"编": 1, "章": 2, "节": 3}
_CUTS = [re.compile(r"\n[ \t]*\n"), re.compile(r"\n"), re.compile(r"[。！？!?；;]|\.(?=\s)"),
         re.compile(r"[，,、：:]|\s")]
_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Header:
    offset: int
    level: int
    text: str


def find_headers(text: str) -> list[Header]:
    """Markdown and Chinese (编/章/节) headers in ``text``, in order (Markdown inside ``` fences is ignored)."""
    fenced = [(m.start(), m.end()) for m in _FENCE.finditer(text)]
    out = []
    for m in _MD_HEADER.finditer(text):
        if not any(s <= m.start() < e for s, e in fenced):
            out.append(Header(m.start(), len(m.group(1)), m.group(2).strip()))
    for m in _ZH_HEADER.finditer(text):
        label = m.group(1) + (" " + m.group(3).strip() if m.group(3) else "")
        start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
        out.append(Header(start, _ZH_LEVEL[m.group(2)], label))
    return sorted(out, key=lambda h: h.offset)


def window_spans(text: str, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP,
                 breaks: Iterable[int] = ()) -> list[tuple[int, int]]:
    """Character spans of overlapping windows of at most ``size`` characters (rules in the module docstring).

    ``breaks`` are offsets where a cut is preferred and which later windows do not reach back across
    (section headers).
    """
    if size <= 0:
        raise InputError(f"window size must be positive, got {size}", field="size")
    if not 0 <= overlap < size:
        raise InputError(f"overlap must be at least 0 and smaller than the window size ({size}), got {overlap}",
                         field="overlap")
    hard = sorted(set(breaks))
    n = len(text)
    spans: list[tuple[int, int]] = []
    start = _skip_space(text, 0)
    while start < n:
        end = min(start + size, n)
        cut_at_break = False
        if end < n:
            lo = start + size // 2
            i = bisect.bisect_right(hard, end) - 1
            if i >= 0 and hard[i] > lo:
                end, cut_at_break = hard[i], True
            else:
                end = _best_cut(text, lo, end)
        if text[start:end].strip():
            spans.append((start, _trim_end(text, start, end)))
        if end >= n:
            break
        nxt = end if cut_at_break or overlap == 0 else _aligned_start(text, max(end - overlap, start + 1), end)
        i = bisect.bisect_right(hard, end) - 1  # never reach back across a header
        if i >= 0 and hard[i] > nxt:
            nxt = hard[i]
        start = _skip_space(text, max(nxt, start + 1))
    return spans


def _best_cut(text: str, lo: int, hi: int) -> int:
    for pattern in _CUTS:
        last = None
        for last in pattern.finditer(text, lo, hi):
            pass
        if last is not None:
            return last.end()
    return hi


def _aligned_start(text: str, lo: int, hi: int) -> int:
    """The first paragraph, line or sentence start in [lo, hi) that still leaves text before the cut at ``hi``."""
    last = _trim_end(text, lo, hi)
    for pattern in _CUTS[:3]:
        for m in pattern.finditer(text, lo, hi):
            if m.end() < last and text[m.end():last].strip():
                return m.end()
    return lo


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _trim_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


# An article marker at the start of a line: 第一条 / 第120条 / 第一百三十三条之一, then a space or the text itself
# (but not a reference such as "第一条规定的...").
_ARTICLE = re.compile(r"^[ \t\u3000]*(第[零〇一二两三四五六七八九十百千万0-9]+条(?:之[一二三四五六七八九十]+)?)"
                      r"(?=[ \t\u3000]|$|[^的规中款项、，,和或及])", re.M)


def article_spans(text: str) -> list[tuple[str, int, int]]:
    """``(第N条, start, end)`` for each article of a statute text (from its marker to the next one, or to the
    next section header or the end); empty when the text has no article markers."""
    marks = [(m.group(1), m.start() + len(m.group(0)) - len(m.group(0).lstrip())) for m in _ARTICLE.finditer(text)]
    if not marks:
        return []
    header_starts = [h.offset for h in find_headers(text)]
    out = []
    for i, (label, start) in enumerate(marks):
        end = marks[i + 1][1] if i + 1 < len(marks) else len(text)
        j = bisect.bisect_left(header_starts, start + 1)  # a chapter header before the next article ends this one
        if j < len(header_starts) and header_starts[j] < end:
            end = header_starts[j]
        end = _trim_end(text, start, end)
        if text[start:end].strip():
            out.append((label, start, end))
    return out


def header_breaks(text: str, headers: list[Header]) -> list[int]:
    """Header offsets to cut before; a header right under another (第二章 then 第一节) stays with it."""
    out, prev_line_end = [], None
    for h in headers:
        if prev_line_end is None or text[prev_line_end:h.offset].strip():
            out.append(h.offset)
        newline = text.find("\n", h.offset)
        prev_line_end = len(text) if newline < 0 else newline
    return out


def section_path(headers: list[Header], upto: int) -> list[str]:
    stack: list[Header] = []
    for h in headers[:upto]:
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
    return [h.text for h in stack]
