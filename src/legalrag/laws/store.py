"""Versions as article records (JSONL), and back: the shipped form of the law over time, and the fields a user's
own corpus may carry to have versions too.

One record an article of a version::

    {"id": "公司法第四十七条@2023-12-29", "name": "公司法第四十七条", "content": "...",
     "law": "公司法", "article": "47", "label": "第四十七条", "version": "2023-12-29",
     "effective": "2024-07-01", "effective_source": "last_article", "in_force_from": "2024-07-01",
     "in_force_until": null, "ended_by": "", "path": ["第三章 有限责任公司的设立和组织机构", ...],
     "file": "民法商法/公司法(2023-12-29).md", "repealed_by": "", "repealed_on": null, "enacted": "1993-12-29"}

Only ``id``, ``name``, ``content`` and ``version`` are required; ``in_force_from`` defaults to ``effective``, then
to ``version``, and the intervals are recomputed from the versions of each law when they are not given.
``enacted`` (the day the law was first adopted) tells a day before the oldest version held apart: on or after it, the
oldest version held answers (an older text, not held, was in force); before it, or when the oldest version held
is the law's first text, the law was not yet in force. Without ``enacted`` the oldest version held answers.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any, Iterable, Iterator, Mapping

from legalrag.errors import InputError
from legalrag.laws.reader import _ARTICLE_AT_END, Article, article_number
from legalrag.laws.versions import Law, Library, Repealed, Version, _intervals, title_key


def records(library: Library) -> Iterator[dict[str, Any]]:
    """Every article of every version, oldest version first within a law, laws in title order."""
    for law in library.laws.values():
        rep = law.repealed
        for v in law.versions:
            for a in v.articles:
                yield {"id": v.article_id(a), "name": f"{v.title}{a.label}", "content": a.text, "law": v.title,
                       "article": a.number, "label": a.label, "version": v.version, "effective": v.effective,
                       "effective_source": v.effective_source, "in_force_from": v.in_force_from,
                       "in_force_until": v.in_force_until, "ended_by": v.ended_by, "path": list(a.path),
                       "file": v.files[0] if v.files else "", "repealed_by": rep.by if rep else "",
                       "repealed_on": rep.on if rep else None, "enacted": law.enacted}


def library_from_records(recs: Iterable[tuple[int, Mapping[str, Any]]], *, source: str = "corpus",
                         snapshot: str | None = None) -> Library:
    """A Library from ``(line, record)`` pairs in the shape of :func:`records`; InputError names the line."""
    grouped: dict[str, dict[str | None, list[tuple[Mapping[str, Any], Article]]]] = defaultdict(lambda: defaultdict(list))
    titles: dict[str, str] = {}
    enacted: dict[str, str] = {}
    for line, rec in recs:
        for key in ("name", "content", "version"):
            if key not in rec:
                raise InputError(f"a versioned record needs {key!r}", path=source, line=line, field=key)
        name = str(rec["name"])
        law = str(rec.get("law") or "")
        m = _ARTICLE_AT_END.search(name)
        if not m:
            raise InputError(f"{name!r} does not end in 第N条; name articles <title>第N条", path=source, line=line,
                             field="name")
        law = law or name[: m.start()]
        number = str(rec.get("article") or article_number(m.group(1), m.group(2)))
        titles.setdefault(title_key(law), law)
        if rec.get("enacted"):
            enacted.setdefault(title_key(law), str(rec["enacted"]))
        grouped[title_key(law)][rec["version"]].append(
            (rec, Article(number, str(rec.get("label") or m.group(0)), str(rec["content"]), tuple(rec.get("path") or ()),
                          line)))
    laws: dict[str, Law] = {}
    for key, by_version in grouped.items():
        versions, given, repealed = [], True, None
        for day in sorted(by_version, key=lambda d: d or ""):
            rows = by_version[day]
            first = rows[0][0]
            if "in_force_from" not in first:
                given = False
            versions.append(Version(titles[key], day, first.get("effective"), str(first.get("effective_source") or
                                    "unknown"), (str(first.get("file") or source),), tuple(a for _, a in rows),
                                    in_force_from=first.get("in_force_from") or first.get("effective") or day,
                                    in_force_until=first.get("in_force_until"), ended_by=str(first.get("ended_by") or "")))
            if first.get("repealed_by"):
                repealed = Repealed(titles[key], str(first["repealed_by"]), first.get("repealed_on"), source)
        law = Law(titles[key], tuple(versions), repealed, enacted=enacted.get(key))
        laws[key] = law if given else _intervals(replace(law, versions=tuple(
            replace(v, in_force_until=None, ended_by="") for v in versions)))
    return Library(laws, snapshot=snapshot)


__all__ = ["library_from_records", "records"]
