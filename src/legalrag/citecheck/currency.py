"""Currency of a citation: is the article cited still the law, as of the date the citation speaks of?

A second field beside the support mark, not a competitor: "✓ supported · amended 2023-12-29". The statuses:

- ``current``: the version cited is the one in force today, or the article's text is unchanged since;
- ``renumbered``: the same text under another number today;
- ``amended``: the text changed (``diff`` says how, ``new_article`` where it is now, None when the newer version
  has no counterpart);
- ``repealed``: the law no longer is in force (``successor`` names the law that replaced it);
- ``not_in_force``: the law was not yet in force on the day the citation speaks of (adopted later, or its first
  text took effect later); ``note`` says when it was adopted and took effect;
- ``unknown``: the versions held do not cover this law or article.

The date a citation speaks of is the text's own date (the caller's ``as_of``: ``check --as-of``); an undated
citation is read as of today and says so. The version cited is the one in force on that date
(:meth:`legalrag.laws.versions.Law.as_of`); the article's new number comes from the text alignment of
:mod:`legalrag.laws.renumber`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import date

from legalrag.laws.renumber import renumbering
from legalrag.laws.versions import Library, check_day, normalise
from legalrag.numerals import to_chinese


@dataclass(frozen=True)
class Currency:
    status: str  # current | renumbered | amended | repealed | not_in_force | unknown
    law: str
    article: str  # the number cited ("26", "133-1")
    as_of: str  # the date the citation was read as of
    dated: bool  # False: the citation gave no date and was read as of today
    cited_version: str | None = None
    current_version: str | None = None
    changed_on: str | None = None  # the version date of the text in force today, when it changed
    in_force_from: str | None = None  # when that version took effect
    new_article: str | None = None
    diff: str = ""
    text_then: str = ""
    text_now: str = ""
    successor: str = ""
    note: str = ""

    @property
    def label(self) -> str:
        """The short mark shown after the support mark: ``amended 2023-12-29``, ``current``, ..."""
        if self.status in ("amended", "renumbered") and self.changed_on:
            return f"{self.status} {self.changed_on}"
        if self.status == "repealed":
            return f"repealed → {self.successor}" if self.successor else "repealed"
        if self.status == "not_in_force":
            return f"not yet in force on {self.as_of}"
        return self.status

    def to_dict(self) -> dict:
        return currency_to_dict(self)

    def describe(self) -> str:
        c = _label(self.article)
        if self.status == "unknown":
            return self.note
        when = f"as of {self.as_of}" if self.dated else f"undated, read as of today ({self.as_of})"
        if self.status == "current":
            return (f"{self.law}{c} ({when}): the version in force ({self.current_version}) has the same text"
                    + (f"; {self.note}" if self.note else ""))
        if self.status == "repealed":
            return f"{self.law} ({when}) is repealed; {self.note}"
        if self.status == "not_in_force":
            return self.note
        now = f"now {_label(self.new_article)}" if self.new_article else "no counterpart in the version in force"
        head = (f"{self.law}{c} ({when}, version {self.cited_version}) {self.status} by the version of "
                f"{self.changed_on} (in force from {self.in_force_from}): {now}")
        now_reads = " ".join(self.text_now.split())
        return (head + (f"; {self.diff}" if self.diff else "")
                + (f"; now reads 「{_cut(now_reads, 120)}」" if now_reads and self.status == "amended" else ""))


def _label(number: str | None) -> str:
    if not number:
        return ""
    main, _, sub = number.partition("-")
    return f"第{to_chinese(int(main))}条" + (f"之{to_chinese(int(sub))}" if sub else "")


def short_diff(old: str, new: str, width: int = 40, chunks: int = 3) -> str:
    """What changed, in at most ``chunks`` pieces: ``-removed`` / ``+added`` fragments of normalised text."""
    a, b = normalise(old), normalise(new)
    parts = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if i2 > i1:
            parts.append("-" + _cut(a[i1:i2], width))
        if j2 > j1:
            parts.append("+" + _cut(b[j1:j2], width))
    more = len(parts) - chunks * 2
    out = " ".join(parts[: chunks * 2])
    return out + (f" (and {more} more changes)" if more > 0 else "")


def _cut(s: str, width: int) -> str:
    return s if len(s) <= width else s[: width - 1] + "…"


def currency(library: Library, law: str, article: str, as_of: str | None = None, *,
             today: str | None = None) -> Currency:
    """The currency of ``law`` ``article`` (number ``"26"``) cited as of ``as_of`` (None: undated)."""
    today = check_day(today or date.today().isoformat())
    day = check_day(as_of) if as_of else today
    held = library.law(law)
    if held is None:
        return Currency("unknown", law, article, day, bool(as_of), note=f"no versions held of {law}")
    sel = held.as_of(day)
    cited = sel.version
    if not sel.in_force:  # adopted after the day, or its first text took effect after it
        return Currency("not_in_force", held.title, article, day, bool(as_of), None, held.as_of(today).version.version,
                        in_force_from=cited.in_force_from, note=sel.note)
    now = held.as_of(today)
    current = now.version
    rep = held.repealed
    if rep is not None and rep.on and rep.on <= today:
        return Currency("repealed", held.title, article, day, bool(as_of), cited.version, None, successor=rep.by,
                        note=f"repealed on {rep.on} by {rep.by} (source: {rep.source})")
    old_article = cited.article(article)
    if old_article is None:
        return Currency("unknown", held.title, article, day, bool(as_of), cited.version, current.version,
                        note=f"{held.title} ({cited.label}) has no {_label(article)}" + (f"; {sel.note}" if sel.note else ""))
    base = dict(law=held.title, article=article, as_of=day, dated=bool(as_of), cited_version=cited.version,
                current_version=current.version, text_then=old_article.text, note=sel.note)
    if cited is current:
        if not as_of and len(held.versions) > 1:
            base["note"] = (f"{held.title} has versions of {', '.join(v.label for v in held.versions)}: a text "
                            f"written before {current.in_force_from} means an older one (give its date: --as-of)")
        return Currency("current", new_article=article, text_now=old_article.text, **base)
    m = renumbering(cited, current).get(article)
    if m is None or m.new is None:
        return Currency("amended", changed_on=current.version, in_force_from=current.in_force_from, **base)
    new = current.article(m.new)
    text_now = new.text if new else ""
    if normalise(text_now) == normalise(old_article.text):
        status = "current" if m.new == article else "renumbered"
        return Currency(status, changed_on=current.version if status != "current" else None,
                        in_force_from=current.in_force_from, new_article=m.new, text_now=text_now, **base)
    return Currency("amended", changed_on=current.version, in_force_from=current.in_force_from, new_article=m.new,
                    text_now=text_now, diff=short_diff(old_article.text, text_now), **base)





def citation_currency(library: Library | None, citation, as_of: str | None = None, *,
                      today: str | None = None) -> Currency | None:
    """The currency of a checked citation (a ``types.Citation``), or None when it names no Chinese article or
    no versions are held."""
    if library is None:
        return None
    parsed = split_citation(citation.canonical or citation.text or "")
    return currency(library, *parsed, as_of, today=today) if parsed else None


def split_citation(text: str) -> tuple[str, str] | None:
    """``"《中华人民共和国公司法》第二十六条"`` -> ``("中华人民共和国公司法", "26")``; None without a title and article."""
    from legalrag.laws.reader import _ARTICLE_AT_END, article_number

    t = "".join(text.split()).replace("《", "").replace("》", "")
    t = re.sub(r"第[一二三四五六七八九十百千零0-9]+[款项]$", "", re.sub(r"第[一二三四五六七八九十百千零0-9]+项$", "", t))
    m = _ARTICLE_AT_END.search(t)
    if not m or m.start() == 0:
        return None
    try:
        return t[: m.start()], article_number(m.group(1), m.group(2))
    except ValueError:
        return None


def currency_to_dict(c: Currency | None) -> dict | None:
    if c is None:
        return None
    return {"status": c.status, "label": c.label, "law": c.law, "article": c.article, "as_of": c.as_of,
            "dated": c.dated, "cited_version": c.cited_version, "current_version": c.current_version,
            "changed_on": c.changed_on, "in_force_from": c.in_force_from, "new_article": c.new_article,
            "diff": c.diff, "text_now": c.text_now, "successor": c.successor, "note": c.describe()}
def with_currency(citations, library: Library | None, as_of: str | None = None, *, today: str | None = None) -> tuple:
    """``citations`` (``types.Citation``) each with its currency mark as of ``as_of`` (None: undated, read as of
    today) beside its support mark; unchanged when no versions are held (``library`` None) or a citation names no
    Chinese article."""
    from dataclasses import replace

    if library is None:
        return tuple(citations)
    return tuple(replace(c, currency=currency_to_dict(cur)) if (cur := citation_currency(library, c, as_of,
                                                                                      today=today)) else c
                 for c in citations)


__all__ = ["Currency", "citation_currency", "currency", "currency_to_dict", "short_diff", "split_citation",
           "with_currency"]
