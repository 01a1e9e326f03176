"""Laws as sequences of dated versions, each with the interval in which it was in force.

A version is in force from its effective date (its version date when the effective date is unknown, flagged so)
until the next version of the same title takes effect, or until the law was repealed (a later law's own clause
"本法自…起施行。《X》…同时废止", found in the texts read, or the shipped repealed-laws table). Files of one title
and one date in one folder with different article numbers are parts of one version (the books of the 民法典);
versions whose texts differ only in formatting (full- or half-width punctuation, spacing) are one version, dated
by the earlier file.

Dates are ISO strings (``YYYY-MM-DD``), compared as strings.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from legalrag.errors import InputError
from legalrag.laws.reader import EFFECTIVE_TABLE, Article, Folder, LawFile, Problem

EARLIEST = "1949-10-01"  # no date before the People's Republic is answered: `as_of` raises InputError
REPEALED_TABLE = Path(__file__).resolve().parents[1] / "data" / "citations" / "repealed_laws.json"
_REPEAL = re.compile(r"(?:本法|本条例|本办法|本规定|本解释|本决定)自(?P<when>[^。，,]{2,30}?)起施行[^。]*?[，,。](?P<what>[^。]*?)同时废止")
_TITLE = re.compile(r"《([^《》]+)》")
PRC = "中华人民共和国"


def title_key(title: str) -> str:
    """Comparison key of a title: without 《》, the 中华人民共和国 prefix, spaces and bracket widths."""
    t = re.sub(r"\s+", "", title or "").translate(str.maketrans({"(": "（", ")": "）"}))
    t = t.strip("《》")
    return t[len(PRC):] if t.startswith(PRC) and len(t) > len(PRC) else t


def normalise(text: str) -> str:
    """An article's text for comparison: NFKC (full-width -> half-width), no whitespace."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


@dataclass(frozen=True)
class Version:
    """One version of a law: its date, when it took effect (and which source said so), its articles."""

    title: str
    version: str | None
    effective: str | None
    effective_source: str  # header | last_article | last_article_promulgation | table | unknown
    files: tuple[str, ...]
    articles: tuple[Article, ...]
    folder: str = ""
    full_title: str = ""
    merged: tuple[str, ...] = ()  # files of formatting-only duplicates merged into this version
    history: tuple[tuple[str, str], ...] = ()  # (ISO date, event) lines of its header
    in_force_from: str | None = None
    in_force_until: str | None = None  # exclusive; None: still in force
    ended_by: str = ""  # superseded | repealed | ""

    @property
    def label(self) -> str:
        return self.version or "undated"

    def article(self, number: str) -> Article | None:
        return next((a for a in self.articles if a.number == number), None)

    def article_id(self, article: Article) -> str:
        """The stable id of an article of this version: its usual name and the version date."""
        return f"{self.title}{article.label}@{self.label}"

    def in_force_on(self, day: str) -> bool:
        start = self.in_force_from or self.version or ""
        return start <= day and (self.in_force_until is None or day < self.in_force_until)

    def describe(self) -> str:
        eff = f"in force from {self.in_force_from}" if self.in_force_from else "effective date unknown"
        if self.effective_source == "unknown" and self.in_force_from:
            eff += " (its version date: the effective date is not stated)"
        until = f" until {self.in_force_until} ({self.ended_by})" if self.in_force_until else ""
        return f"{self.title} ({self.label}): {eff}{until}; {len(self.articles)} articles"


@dataclass(frozen=True)
class Repealed:
    law: str
    by: str
    on: str | None
    source: str  # the file and article of the repeal clause, or "repealed-laws table"


@dataclass(frozen=True)
class Selection:
    """The version a date selects, and a note when it is not the version in force that day."""

    version: Version
    note: str = ""
    in_force: bool = True  # False: the law was not yet in force that day (the version is its oldest text held)


@dataclass(frozen=True)
class Law:
    title: str
    versions: tuple[Version, ...]  # oldest first
    repealed: Repealed | None = None
    # the day the law was first adopted, as far as its texts say (the earliest date of its history lines, else its
    # oldest version's date); None: not known (versioned records that do not carry it)
    enacted: str | None = None

    @property
    def latest(self) -> Version:
        return self.versions[-1]

    @property
    def original_held(self) -> bool | None:
        """Whether the oldest version held is the law as first adopted (so before it took effect the law was not
        in force at all); None when the adoption date is not known."""
        first = self.versions[0]
        if self.enacted is None:
            return None
        return not first.version or self.enacted >= first.version

    def in_force_before_held(self, day: str) -> bool | None:
        """For a ``day`` before the oldest version held took effect: True when the law was in force then in an
        older version not held (the oldest held answers for it), False when it was not yet in force (adopted
        later, or the oldest held is its first text and took effect later), None when not known."""
        if self.original_held is None:
            return None
        return not self.original_held and day >= (self.enacted or "")

    def as_of(self, day: str) -> Selection:
        """The version in force on ``day`` (ISO). Before the oldest version held: the oldest, with a note; after
        a repeal: the last version, with a note. A date before 1949-10-01 or not a date raises InputError."""
        check_day(day)
        for v in reversed(self.versions):
            if v.in_force_on(day):
                return Selection(v)
        first = self.versions[0]
        start = first.in_force_from or first.version or ""
        if day < start:
            if self.in_force_before_held(day) is False:
                return Selection(first, f"{self.title} was not yet in force on {day} (adopted {self.enacted}, in "
                                        f"force from {first.in_force_from or 'an unknown date'}); its oldest text "
                                        f"held ({first.label}) is shown", in_force=False)
            return Selection(first, f"no version held for {day}; the oldest held is {first.label} (in force from "
                                    f"{first.in_force_from or 'an unknown date'})")
        last = self.versions[-1]
        if self.repealed is not None:
            return Selection(last, f"{self.title} was repealed on {self.repealed.on} by {self.repealed.by}; "
                                   f"its last version ({last.label}) is shown")
        # between a version's date and its (later) effective date, the previous version is the one in force
        return Selection(last, "")


def check_day(day: str) -> str:
    try:
        parsed = date.fromisoformat(day)
    except (TypeError, ValueError):
        raise InputError(f"{day!r} is not a date; write it as YYYY-MM-DD (e.g. 2020-01-01)", field="as_of") from None
    if parsed.isoformat() < EARLIEST:
        raise InputError(f"{day} is before {EARLIEST}: the law held is that of the People's Republic of China; "
                         "give a date on or after 1949-10-01", field="as_of")
    return parsed.isoformat()


@dataclass(frozen=True)
class Library:
    """Every law read from a folder, by title key; the problems met; counts of effective-date sources."""

    laws: Mapping[str, Law]
    problems: tuple[Problem, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    snapshot: str | None = None

    def law(self, title: str) -> Law | None:
        return self.laws.get(title_key(title))

    def versions(self) -> Iterable[Version]:
        for law in self.laws.values():
            yield from law.versions

    def in_force(self, day: str) -> list[Version]:
        """The version of each law in force on ``day`` (laws not yet in force, or repealed, are left out)."""
        check_day(day)
        return [v for law in self.laws.values() for v in law.versions if v.in_force_on(day)]

    def counts(self) -> dict[str, int | dict[str, int]]:
        vs = list(self.versions())
        return {"laws": len(self.laws), "versions": len(vs),
                "laws_with_several_versions": sum(len(x.versions) > 1 for x in self.laws.values()),
                "superseded_versions": sum(v.ended_by == "superseded" for v in vs),
                "repealed_laws": sum(x.repealed is not None for x in self.laws.values()),
                "articles": sum(len(v.articles) for v in vs),
                "merged_duplicates": sum(len(v.merged) for v in vs),
                "effective_source": dict(Counter(v.effective_source for v in vs)),
                "problems": dict(Counter(p.kind for p in self.problems)),
                "skipped_files": len(self.skipped)}


def _effective(f: LawFile, title: str) -> tuple[str | None, str]:
    v = f.version or ""
    if f.header_effective and f.header_effective >= v:
        return f.header_effective, "header"
    if f.last_article_effective and f.last_article_effective >= v:
        return f.last_article_effective, "last_article"
    if f.last_article_on_promulgation and f.version and len(f.history) <= 1:
        return f.version, "last_article_promulgation"
    if (title, v) in EFFECTIVE_TABLE:
        return EFFECTIVE_TABLE[(title, v)], "table"
    return None, "unknown"


def _same_text(a: Sequence[Article], b: Sequence[Article]) -> bool:
    return [(x.number, normalise(x.text)) for x in a] == [(x.number, normalise(x.text)) for x in b]


def build_library(folder: Folder, *, repeal_table: str | Path | None = REPEALED_TABLE,
                  snapshot: str | None = None) -> Library:
    """Group the files into laws and versions, date their intervals in force, apply supersession and repeals."""
    problems = list(folder.problems)
    by_title: dict[str, list[LawFile]] = defaultdict(list)
    for f in folder.files:
        by_title[title_key(f.title)].append(f)
    laws: dict[str, Law] = {}
    for key, files in sorted(by_title.items()):
        versions = _versions(files, problems)
        if versions:
            enacted = min((d for v in versions for d, _ in v.history if d), default=None) or versions[0].version
            laws[key] = Law(versions[0].title, tuple(versions), enacted=enacted)
    repeals = _repeals(laws, repeal_table)
    for key, rep in repeals.items():
        laws[key] = replace(laws[key], repealed=rep)
    laws = {k: _intervals(law) for k, law in laws.items()}
    return Library(laws, tuple(problems), folder.skipped, snapshot)


def _versions(files: list[LawFile], problems: list[Problem]) -> list[Version]:
    by_date: dict[str | None, list[LawFile]] = defaultdict(list)
    for f in files:
        by_date[f.version].append(f)
    if None in by_date and len(by_date) > 1:
        for f in by_date.pop(None):
            problems.append(Problem(f.path, 0, "bad_date", "no date in the file name nor in its history lines, beside "
                                    "dated versions of the same title; name it <title>(YYYY-MM-DD).md"))
    out: list[Version] = []
    for day in sorted(by_date, key=lambda d: d or ""):
        group = sorted(by_date[day], key=lambda f: (f.articles[0].number.zfill(8), f.path))
        parts, dupes = [group[0]], []
        for f in group[1:]:
            numbers = {a.number for p in parts for a in p.articles}
            if any(_same_text(f.articles, p.articles) for p in parts):
                dupes.append(f.path)
            elif f.folder == parts[0].folder and not numbers & {a.number for a in f.articles}:
                parts.append(f)  # another book of the same law
            else:
                kind = "two_folders" if f.folder != parts[0].folder else "same_date"
                problems.append(Problem(f.path, 0, kind, f"{f.title} ({day}) is also in {parts[0].path} with a "
                                        f"different text; {parts[0].path} is kept: remove or re-date one of them"))
        articles = tuple(a for p in parts for a in p.articles)
        eff, source = _effective(parts[-1] if len(parts) > 1 else parts[0], parts[0].title)
        if len(parts) > 1 and source == "unknown":
            eff, source = next(((e, s) for e, s in (_effective(p, p.title) for p in parts) if e), (None, "unknown"))
        v = Version(parts[0].title, day, eff, source, tuple(p.path for p in parts), articles, parts[0].folder,
                    parts[0].full_title, tuple(dupes), parts[0].history)
        if out and _same_text(out[-1].articles, v.articles):
            out[-1] = replace(out[-1], merged=out[-1].merged + v.files + v.merged)
            continue
        if out and eff and out[-1].effective and eff < out[-1].effective:
            problems.append(Problem(v.files[0], 0, "dates_backwards", f"takes effect on {eff}, before the older "
                                    f"version {out[-1].label} ({out[-1].effective}); check the dates"))
        out.append(v)
    return out


def _intervals(law: Law) -> Law:
    vs = list(law.versions)
    for i, v in enumerate(vs):
        start = v.effective or v.version
        vs[i] = replace(v, in_force_from=start)
    for i in range(len(vs) - 1):
        nxt = vs[i + 1].in_force_from
        vs[i] = replace(vs[i], in_force_until=nxt, ended_by="superseded")
    if law.repealed is not None and law.repealed.on:
        last = vs[-1]
        if (last.in_force_from or "") < law.repealed.on:
            vs[-1] = replace(last, in_force_until=law.repealed.on, ended_by="repealed")
    return replace(law, versions=tuple(vs))


def _repeals(laws: Mapping[str, Law], table: str | Path | None) -> dict[str, Repealed]:
    """Repeal clauses in the texts held (a law repealing another title), then the shipped table's entries."""
    found: dict[str, Repealed] = {}
    for key, law in laws.items():
        for v in law.versions:
            for a in v.articles[-4:]:
                m = _REPEAL.search(a.text)
                if not m:
                    continue
                for title in _TITLE.findall(m.group("what")):
                    k = title_key(title)
                    if k == key or k not in laws:
                        continue
                    on = _clause_date(m.group("when")) or v.in_force_from or v.effective or v.version
                    if (laws[k].latest.effective or laws[k].latest.version or "") >= (on or "9999"):
                        continue  # a version of the repealed title is newer than the repeal
                    found.setdefault(k, Repealed(laws[k].title, law.title, on, f"{v.files[0]} {a.label}"))
    if table is not None and Path(table).is_file():
        try:
            data = json.loads(Path(table).read_text(encoding="utf-8"))
        except ValueError as exc:
            raise InputError(f"not valid JSON ({exc})", path=str(table)) from None
        for e in data.get("laws", []):
            k = title_key(e["law"])
            if k in laws and k not in found:
                on = e.get("repealed_on")
                if on and (laws[k].latest.effective or laws[k].latest.version or "") >= on:
                    continue
                found[k] = Repealed(laws[k].title, e["successor"], on, f"repealed-laws table ({e['source']})")
    return found


def add_snapshot(library: Library, records: Iterable[Mapping[str, str]], snapshot: str, *,
                 titles: Iterable[str] | None = None, source: str = "snapshot") -> Library:
    """Add, as older versions, the texts of an article corpus taken on ``snapshot`` (``{"name", "content"}``
    records, names ``<title>第N条``) where they differ from every version held of their title: the 2023-06-05
    corpus gives the Criminal Law before 刑法修正案（十二）. ``titles``: only these (the snapshot's other
    differences are mostly formatting of its own build, not versions). Such a version is dated by the latest history line of
    the title's newest file on or before the snapshot; a title the library lacks is left out."""
    from legalrag.laws.reader import _ARTICLE_AT_END, article_number

    wanted = {title_key(t) for t in titles} if titles is not None else None
    by_title: dict[str, list[Article]] = defaultdict(list)
    written: dict[str, str] = {}
    for rec in records:
        m = _ARTICLE_AT_END.search(str(rec["name"]))
        if not m:
            continue
        title = str(rec["name"])[: m.start()]
        try:
            number = article_number(m.group(1), m.group(2))
        except ValueError:
            continue
        k = title_key(title)
        written.setdefault(k, title)
        by_title[k].append(Article(number, m.group(0), str(rec["content"])))
    laws = dict(library.laws)
    problems = list(library.problems)
    for k, articles in by_title.items():
        if wanted is not None and k not in wanted:
            continue
        law = laws.get(k)
        if law is None or any(_same_text(articles, v.articles) for v in law.versions):
            continue
        dates = [d for d, e in law.latest.history if d <= snapshot and "施行" not in e]
        if not dates:
            continue
        day = max(dates)
        if any(v.version == day for v in law.versions):
            problems.append(Problem(f"{source}:{written[k]}", 0, "same_date", f"the snapshot's text of {law.title} "
                                    f"is dated {day}, as a version already held with another text; left out"))
            continue
        eff = EFFECTIVE_TABLE.get((law.title, day))
        v = Version(law.title, day, eff, "table" if eff else "unknown", (f"{source}:{written[k]}",),
                    tuple(articles), law.latest.folder, law.latest.full_title, (),
                    tuple((d, e) for d, e in law.latest.history if d <= day))
        versions = sorted([replace(x, in_force_until=None, ended_by="") for x in law.versions] + [v],
                          key=lambda x: x.version or "")
        laws[k] = _intervals(replace(law, versions=tuple(versions)))
    return replace(library, laws=laws, problems=tuple(problems))


def _clause_date(when: str) -> str | None:
    from legalrag.laws.reader import effective_in

    d, _ = effective_in(f"自{when}起施行")
    return d


__all__ = ["EARLIEST", "Law", "Library", "Repealed", "Selection", "Version", "add_snapshot", "build_library", "check_day",
           "normalise", "title_key"]
