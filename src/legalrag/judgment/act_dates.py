"""When the acts happened, read from the facts of a criminal case: the earliest and the latest act date.

What counts as a date of the acts (a transparent rule, not a parser of every Chinese date):

- a full date ``2023年7月10日`` is that day; a month ``2023年5月`` (or ``2023年X月`` with the month redacted: the
  whole year) spans the month; ``2022年底`` / ``年末`` December; ``年初`` the first quarter; ``上半年`` /
  ``下半年`` the half; a bare year ``2023年`` the whole year; ``同年`` / ``次年`` take the year last written;
- a range ``2023年5月至2024年6月`` gives both ends; an end written without its year or month (``2023年5月至11月``,
  ``2023年5月10日至15日``) takes them from the start;
- a date in a clause about the proceedings or the defendant's person (抓获, 归案, 投案, 拘留, 逮捕, 起诉, 鉴定, 判处,
  释放, 出生, 赔偿, 谅解 ...) is not an act date: the clause is the text between two of ``，。；`` and, when the
  date stands alone in its clause (``2024年1月5日，被告人被抓获``), the clause after it too.

The earliest act date is the least start, the latest the greatest end; no date: unknown.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

_X = r"[xX×ＸｘＸ某*＊]+"
_DATE = re.compile(
    rf"(?P<year>(?<!\d)(?:19|20)\d{{2}}(?!\d)|同年|次年|当年)\s*年?"
    rf"(?:\s*(?P<month>\d{{1,2}}|{_X})\s*月(?:\s*(?P<day>\d{{1,2}}|{_X})\s*日)?"
    r"|\s*(?P<part>年?底|年?末|年?初|上半年|下半年))?")
_TAIL = re.compile(rf"\s*(?:至|到|—|－|-|~|～)\s*(?:(?P<month>\d{{1,2}}|{_X})\s*月)?"
                   rf"(?:\s*(?P<day>\d{{1,2}}|{_X})\s*日)?")
_CLAUSE_END = re.compile(r"[，,。；;！？!?\n]")
PROCEDURAL = ("抓获", "归案", "到案", "投案", "自首", "拘留", "逮捕", "取保", "监视居住", "起诉", "审查", "立案", "报案",
              "报警", "鉴定", "评估", "判处", "判决", "释放", "出生", "生于", "赔偿", "谅解", "退赔", "退赃", "羁押",
              "传唤", "开庭", "审理", "缴纳", "解除")
_PARTS = {"底": (12, 12), "末": (12, 12), "初": (1, 3), "上半年": (1, 6), "下半年": (7, 12)}


@dataclass(frozen=True)
class ActDates:
    """The earliest and latest act date (ISO, None when unknown), where they came from (``facts``, ``as_of``
    or ``none``) and the date expressions read."""

    earliest: str | None
    latest: str | None
    source: str = "none"
    spans: tuple[str, ...] = ()

    @property
    def known(self) -> bool:
        return self.earliest is not None

    def describe(self) -> str:
        """The acts' time in Chinese, as the draft states it: ``2023年5月1日至2023年11月30日``."""
        if not self.known:
            return "行为时间不明"
        a, b = (_cn(d) for d in (self.earliest, self.latest))
        return a if a == b else f"{a}至{b}"

    def to_dict(self) -> dict:
        return {"earliest": self.earliest, "latest": self.latest, "source": self.source, "spans": list(self.spans)}


def _cn(day: str) -> str:
    y, m, d = day.split("-")
    return f"{y}年{int(m)}月{int(d)}日"


def _num(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


def _span(year: int, month: int | None, day: int | None, part: str | None) -> tuple[str, str] | None:
    if part:
        first, last = _PARTS[part.lstrip("年")]
    elif month is None:
        first, last = 1, 12
    else:
        first = last = month
    if not (1 <= first <= 12 and 1 <= last <= 12):
        return None
    end_day = calendar.monthrange(year, last)[1]
    if day is not None and month is not None:
        if not 1 <= day <= end_day:
            return None
        return (f"{year:04d}-{first:02d}-{day:02d}",) * 2
    return f"{year:04d}-{first:02d}-01", f"{year:04d}-{last:02d}-{end_day:02d}"


def _context(text: str, start: int, end: int) -> str:
    """The clause holding text[start:end], with the next clause when the date stands alone in its own."""
    left = max((m.end() for m in _CLAUSE_END.finditer(text, 0, start)), default=0)
    right_m = _CLAUSE_END.search(text, end)
    right = right_m.start() if right_m else len(text)
    rest = re.sub(r"[于在从自约\s]", "", text[left:start] + text[end:right])
    if len(rest) < 2 and right_m:  # "2024年1月5日，被告人被抓获": the date's clause is the date alone
        nxt = _CLAUSE_END.search(text, right + 1)
        right = nxt.start() if nxt else len(text)
    return text[left:right]


def act_dates(facts: str) -> ActDates:
    """The earliest and latest act date the facts state (module docstring for the rule); unknown when none."""
    starts, ends, spans = [], [], []
    year: int | None = None
    for m in _DATE.finditer(facts or ""):
        word = m.group("year")
        if word.isdigit():
            if not m.group("month") and not m.group("part") and "年" not in m.group(0):
                continue  # a bare four-digit number, not a year
            year = int(word)
        elif year is None:
            continue
        elif word == "次年":
            year += 1
        elif not (m.group("month") or m.group("part")):
            continue  # 同年 alone says nothing new
        month, day = _num(m.group("month")), _num(m.group("day"))
        span = _span(year, month, day, m.group("part"))
        end_pos = m.end()
        tail = _TAIL.match(facts, end_pos)
        last = None
        if tail and (tail.group("month") or tail.group("day")):
            t_month = _num(tail.group("month")) if tail.group("month") else month
            t_day = _num(tail.group("day"))
            if tail.group("day") and t_month is None:
                t_day = None
            last = _span(year, t_month, t_day, None)
            end_pos = tail.end()
        if span is None:
            continue
        if any(w in _context(facts, m.start(), end_pos) for w in PROCEDURAL):
            continue
        starts.append(span[0])
        ends.append((last or span)[1])
        spans.append(facts[m.start():end_pos].strip())
    if not starts:
        return ActDates(None, None, "none")
    return ActDates(min(starts), max(ends), "facts", tuple(dict.fromkeys(spans)))


def dates_as_of(day: str) -> ActDates:
    """``--as-of DAY``: the acts taken as of ``day`` (checked with ``laws.versions.check_day``)."""
    from legalrag.laws.versions import check_day

    day = check_day(day)
    return ActDates(day, day, "as_of", (day,))


__all__ = ["PROCEDURAL", "ActDates", "act_dates", "dates_as_of"]
