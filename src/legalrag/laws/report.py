"""A law's versions and one article's history as JSON: what `legalrag law show|history --json` prints, what
``GET /law/show`` and ``GET /law/history`` answer and what the MCP tools ``law_show`` and ``law_history`` return.

Both take a :class:`~legalrag.laws.versions.Library` and the words a user typed; bad input (an unknown title, a
citation without an article, a date that is not one) raises ``InputError`` naming ``field``, which each front door
sets to its own spelling (``TITLE`` on the command line, ``title`` over HTTP).
"""

from __future__ import annotations

import difflib
from typing import Any

from legalrag.errors import InputError
from legalrag.laws.history import Step, article_history
from legalrag.laws.reader import _ARTICLE_AT_END, article_number
from legalrag.laws.versions import Law, Library, Selection


def find_law(library: Library, title: str, *, field: str = "title") -> Law:
    """The law ``title`` names (《》 and the 中华人民共和国 prefix optional); InputError with close titles."""
    title = title.strip()
    if not title:
        raise InputError("no law title given; write one like 公司法 or 《中华人民共和国公司法》", field=field)
    law = library.law(title)
    if law is None:
        close = difflib.get_close_matches(title, [x.title for x in library.laws.values()], n=3, cutoff=0.4)
        raise InputError(f"no law titled {title!r} among the {len(library.laws):,} held"
                         + (f"; close titles: {', '.join(close)}" if close else ""), field=field)
    return law


def split_article(citation: str, *, field: str = "citation") -> tuple[str, str]:
    """``"《中华人民共和国公司法》第四十七条"`` -> ``("中华人民共和国公司法", "47")``; ``第N条之M`` -> ``"N-M"``."""
    text = "".join(citation.split()).replace("《", "").replace("》", "")
    m = _ARTICLE_AT_END.search(text)
    number = None
    if m and m.start() > 0:
        try:
            number = article_number(m.group(1), m.group(2))
        except ValueError:
            number = None
    if number is None:
        raise InputError(f"{citation!r} names no article; write it as <title>第N条 (公司法第四十七条)", field=field)
    return text[: m.start()], number


def _selection(law: Law, as_of: str | None, field: str) -> Selection | None:
    if not as_of:
        return None
    try:
        return law.as_of(as_of)
    except InputError as exc:  # the message is check_day's; the field is the caller's spelling of it
        raise InputError(str(exc), field=field) from None


def law_report(library: Library, title: str, as_of: str | None = None, *, field: str = "title",
               as_of_field: str = "as_of") -> dict[str, Any]:
    """A law's versions, oldest first: version date, effective date and which source gave it, the interval in
    force, its articles and files; ``selected`` marks the version in force on ``as_of``; ``note`` says when
    that date falls outside what is held; ``repealed`` names the successor."""
    law = find_law(library, title, field=field)
    sel = _selection(law, as_of, as_of_field)
    rep = law.repealed
    return {"law": law.title, "as_of": as_of, "note": sel.note if sel else "",
            "versions": [{"version": v.version, "effective": v.effective, "effective_source": v.effective_source,
                          "in_force_from": v.in_force_from, "in_force_until": v.in_force_until,
                          "ended_by": v.ended_by, "articles": len(v.articles), "files": list(v.files),
                          "merged": list(v.merged), "selected": sel is not None and v is sel.version}
                         for v in law.versions],
            "repealed": {"by": rep.by, "on": rep.on, "source": rep.source} if rep else None}


def history_steps(library: Library, citation: str, as_of: str | None = None, *, field: str = "citation",
                  as_of_field: str = "as_of") -> tuple[Law, str, Selection | None, list[Step]]:
    """The law, article number, the selection ``as_of`` made and the article's steps across the versions."""
    title, number = split_article(citation, field=field)
    law = find_law(library, title, field=field)
    sel = _selection(law, as_of, as_of_field)
    return law, number, sel, article_history(law, number, sel.version if sel else None)


def history_report(library: Library, citation: str, as_of: str | None = None, *, field: str = "citation",
                   as_of_field: str = "as_of") -> dict[str, Any]:
    """One article across the versions of its law, followed through renumbering: its number in each version
    (None: no counterpart), its text, whether it changed, and the alignment's similarity. ``as_of``: the
    article number is read in the version in force that day (default: the latest version)."""
    law, number, sel, steps = history_steps(library, citation, as_of, field=field, as_of_field=as_of_field)
    return {"law": law.title, "article": number, "as_of": as_of, "note": sel.note if sel else "",
            "versions": [{"version": s.version.version, "in_force_from": s.version.in_force_from,
                          "in_force_until": s.version.in_force_until, "article": s.number, "text": s.text,
                          "changed": s.changed, "similarity": s.similarity} for s in steps]}


__all__ = ["find_law", "history_report", "history_steps", "law_report", "split_article"]
