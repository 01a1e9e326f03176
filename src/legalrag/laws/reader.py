"""Reader of the dated-Markdown law format (one file per law version, as in github.com/LawRefBook/Laws).

A file starts with ``# <title>`` (an optional second ``# <sub-title>``: the books of the 民法典 are separate files),
then history lines (``1990年01月23日 <event>``; ``2021年11月1日 施行``), then ``<!-- INFO END -->``, then the text
with Markdown headings for 编/章/节 and one article per paragraph starting ``第X条`` or ``第X条之N``. A
``(YYYY-MM-DD)`` suffix of the file name is the version's date (promulgation or revision); a file without one is
dated by the latest date of its history lines.

The effective date of a version is taken, in this order, and its source recorded:

1. ``header``: the header's latest ``施行`` line, when on or after the version date (a line older than the version
   is the first enactment's, not this version's);
2. ``last_article``: a ``自…起施行`` in one of the last three articles naming a date on or after the version date
   (``自公布之日起施行`` / ``自发布之日起施行`` give the version date, ``last_article_promulgation``, but only for
   a text never revised: a revision keeps the first enactment's clause, as the 2023 民事诉讼法 does);
3. ``table``: :data:`EFFECTIVE_TABLE`, for the versions whose texts state no usable date;
4. ``unknown``.

Guiding cases (``案例/``) are not read as law: they hold no articles, and a case is not a statute in force; the
reader reports them as skipped. Folder indexes (``_index.md``) and the template (``法律法规模版.md``) are skipped too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Iterable, Iterator

from legalrag.errors import InputError
from legalrag.numerals import NUMERAL_CHARS, to_int

SKIPPED_FOLDERS = ("案例",)
SKIPPED_FILES = ("_index.md", "法律法规模版.md", "README.md")

# Versions whose effective date their text does not state in a form read above (checked by hand in the text).
EFFECTIVE_TABLE: dict[tuple[str, str], str] = {
    ("民事诉讼法", "2023-09-01"): "2024-01-01",
    ("中华人民共和国刑法", "2023-12-29"): "2024-03-01",  # 刑法修正案（十二）
    ("中华人民共和国刑法", "2020-12-26"): "2021-03-01",  # 刑法修正案（十一）, the 2023-06-05 snapshot's text
}

# Titles the 2023-06-05 corpus names otherwise than by their file name (its article names must stay reproducible).
USUAL_TITLES = {("民法典", None): "中华人民共和国民法典", ("刑法", "刑法"): "中华人民共和国刑法"}

_FILE_DATE = re.compile(r"\((\d{4})-(\d{2})-(\d{2})\)$")
_FILE_DATE_LOOSE = re.compile(r"\(([^()]*\d[^()]*)\)$")
_LINE_DATE = re.compile(r"^\s*(\d{4})年(\d{1,2})月(\d{1,2})日\s*(.*)$")
_ARTICLE = re.compile(rf"^第([{NUMERAL_CHARS}0-9]+)条(?:之([{NUMERAL_CHARS}0-9]+))?(?:[ \u3000\u00a0]+|$)")
_ARTICLE_AT_END = re.compile(rf"第([{NUMERAL_CHARS}0-9]+)条(?:之([{NUMERAL_CHARS}0-9]+))?$")
_HEADING = re.compile(r"^(#{1,6})\s*(.*?)\s*$")
_COMMENT = re.compile(r"<!--.*?-->")
_INFO_END = "<!-- INFO END -->"
_ASCII_DATE = re.compile(r"自\s*([0-9０-９]{4})\s*年\s*([0-9０-９]{1,2})\s*月\s*([0-9０-９]{1,2})\s*日\s*起\s*施行")
_HAN_DATE = re.compile(r"自([〇○零一二三四五六七八九]{4})年([一二三四五六七八九十]{1,3})月([一二三四五六七八九十]{1,3})日起施行")
_ON_PROMULGATION = re.compile(r"自(?:公布|发布|颁布|修订发布)之日起施行")
_HEADER_EFFECTIVE_IN = re.compile(r"自(\d{4})年(\d{1,2})月(\d{1,2})日(?:起)?施行")
_INVISIBLE = str.maketrans({"\u200b": None, "\ufeff": None, "\u200c": None, "\u200d": None})
_HAN_DIGIT = {"〇": 0, "○": 0, "零": 0, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_FULLWIDTH = str.maketrans("０１２３４５６７８９", "0123456789")


@dataclass(frozen=True)
class Problem:
    """Something wrong with one file, at one line (0: the file as a whole)."""

    path: str
    line: int
    kind: str  # missing_title | no_articles | same_date | bad_date | duplicate_article | dates_backwards | two_folders
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}: {self.message}"


@dataclass(frozen=True)
class Article:
    """One article of one version: its number (``"26"``, ``"133-1"``), label (第二十六条), text and 编/章/节 path."""

    number: str
    label: str
    text: str
    path: tuple[str, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class LawFile:
    """One file read: a version of a law (several files of one law, the 民法典's books, are joined later)."""

    path: str  # relative to the folder read
    folder: str
    title: str  # the usual title: the file name without its date (the 2023 corpus's article names use it)
    full_title: str  # the header's ``# `` title
    subtitle: str
    version: str | None  # ISO date
    version_source: str  # file_name | history | none
    history: tuple[tuple[str, str], ...]  # (ISO date, event), in file order
    articles: tuple[Article, ...]
    header_effective: str | None = None
    last_article_effective: str | None = None
    last_article_on_promulgation: bool = False


@dataclass(frozen=True)
class Folder:
    """What reading a folder gave: the files read, the problems, and the files skipped (with why)."""

    files: tuple[LawFile, ...]
    problems: tuple[Problem, ...]
    skipped: tuple[tuple[str, str], ...] = field(default=())


def iso(y: int, m: int, d: int) -> str:
    return date(y, m, d).isoformat()  # ValueError on 2023-02-30


def _han_year(s: str) -> int:
    return int("".join(str(_HAN_DIGIT[c]) for c in s))


def effective_in(text: str) -> tuple[str | None, bool]:
    """(the date of a ``自…起施行`` in ``text``, whether it says "on promulgation")."""
    m = _ASCII_DATE.search(text)
    if m:
        try:
            return iso(*(int(g.translate(_FULLWIDTH)) for g in m.groups())), False
        except ValueError:
            return None, False
    m = _HAN_DATE.search(text)
    if m:
        try:
            return iso(_han_year(m.group(1)), to_int(m.group(2)), to_int(m.group(3))), False
        except (ValueError, KeyError):
            return None, False
    return None, bool(_ON_PROMULGATION.search(text))


def article_number(main: str, sub: str | None) -> str:
    n = str(to_int(main))
    return f"{n}-{to_int(sub)}" if sub else n


def usual_title(folder: str, stem: str) -> str:
    return USUAL_TITLES.get((folder, None)) or USUAL_TITLES.get((folder, stem)) or stem


def read_file(path: Path, root: Path) -> tuple[LawFile | None, list[Problem]]:
    """One file, or None with the problems that make it unreadable (a missing title, no articles, a bad date)."""
    rel = path.relative_to(root).as_posix()
    folder = path.relative_to(root).parts[0] if len(path.relative_to(root).parts) > 1 else ""
    problems: list[Problem] = []
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return None, [Problem(rel, 0, "unreadable", f"not UTF-8 text ({exc}); save it as UTF-8")]
    lines = raw.translate(_INVISIBLE).splitlines()
    stem = path.stem
    version, version_source = None, "none"
    m = _FILE_DATE.search(stem)
    if m:
        stem = stem[: m.start()].rstrip()
        try:
            version, version_source = iso(*(int(g) for g in m.groups())), "file_name"
        except ValueError:
            problems.append(Problem(rel, 0, "bad_date", f"the file name's date {m.group(0)} is not a calendar "
                                    "date; name the file <title>(YYYY-MM-DD).md"))
            return None, problems
    elif _FILE_DATE_LOOSE.search(stem):
        problems.append(Problem(rel, 0, "bad_date", f"the file name's date {_FILE_DATE_LOOSE.search(stem).group(0)} "
                                "is not in the form (YYYY-MM-DD); name the file <title>(YYYY-MM-DD).md"))
        return None, problems
    full_title = subtitle = ""
    history: list[tuple[str, str]] = []
    header_effective: str | None = None
    body_start = None
    for i, line in enumerate(lines):
        if _INFO_END in line:
            body_start = i + 1
            break
        text = _COMMENT.sub("", line).strip()
        if not text:
            continue
        if text.startswith("# "):
            if not full_title:
                full_title = text[2:].strip()
            elif not subtitle:
                subtitle = text[2:].strip()
            continue
        dm = _LINE_DATE.match(text)
        if dm:  # other header lines (front matter, notes) are not history
            try:
                d = iso(int(dm.group(1)), int(dm.group(2)), int(dm.group(3)))
            except ValueError:
                problems.append(Problem(rel, i + 1, "bad_date", f"{text[:30]!r} is not a calendar date; write "
                                        "the history line as YYYY年M月D日 <event>"))
                continue
            event = dm.group(4).strip()
            history.append((d, event))
            if "施行" in event:
                inner = _HEADER_EFFECTIVE_IN.search(event)
                header_effective = iso(*(int(g) for g in inner.groups())) if inner else d
    if not full_title:
        problems.append(Problem(rel, 1, "missing_title", "the file does not start with a '# <title>' line; add "
                                "the law's title as its first line"))
        return None, problems
    if body_start is None:
        body_start = next((i for i, line in enumerate(lines) if _ARTICLE.match(line.strip())), len(lines))
    articles = _articles(lines, body_start, rel, problems)
    if not articles:
        problems.append(Problem(rel, body_start + 1, "no_articles", "no paragraph starts with 第X条; each article "
                                "must be a paragraph of its own beginning 第X条 (or 第X条之N)"))
        return None, problems
    if version is None and history:
        events = [d for d, e in history if "施行" not in e] or [d for d, _ in history]
        version, version_source = max(events), "history"
    last_date, on_prom = None, False
    for a in reversed(articles[-3:]):
        last_date, on_prom = effective_in(a.text)
        if last_date or on_prom:
            break
    return LawFile(rel, folder, usual_title(folder, stem), full_title, subtitle, version, version_source,
                   tuple(history), tuple(articles), header_effective, last_date, on_prom), problems


def _articles(lines: list[str], start: int, rel: str, problems: list[Problem]) -> list[Article]:
    articles: list[Article] = []
    seen: set[str] = set()
    path: list[tuple[int, str]] = []
    current: tuple[str, str, int, tuple[str, ...]] | None = None
    paragraphs: list[str] = []

    def close() -> None:
        if current is None:
            return
        number, label, line, p = current
        if number in seen:
            problems.append(Problem(rel, line, "duplicate_article", f"{label} appears again; the first is kept"))
            return
        seen.add(number)
        articles.append(Article(number, label, "".join(f"{t}\n\n" for t in paragraphs).rstrip("\n") + "\n", p, line))

    for i in range(start, len(lines)):
        text = _COMMENT.sub("", lines[i]).strip()
        if not text:
            continue
        h = _HEADING.match(text)
        if h:
            level = len(h.group(1))
            path = [(lv, t) for lv, t in path if lv < level] + [(level, " ".join(h.group(2).split()))]
            continue
        m = _ARTICLE.match(text)
        if m:
            try:
                number = article_number(m.group(1), m.group(2))
            except ValueError:
                m = None
        if m:
            close()
            label = text[: m.end()].strip()
            current = (number, label, i + 1, tuple(t for _, t in path))
            rest = text[m.end():].strip()
            paragraphs = [rest] if rest else []
        elif current is not None:
            paragraphs.append(text)
    close()
    return articles


def iter_law_files(root: Path) -> Iterator[tuple[Path, str | None]]:
    """Every Markdown file under ``root`` in a stable order, with why it is skipped (None: read it)."""
    for p in sorted(root.rglob("*.md")):
        rel = p.relative_to(root)
        if p.name in SKIPPED_FILES:
            yield p, "folder index or template"
        elif rel.parts[0] in SKIPPED_FOLDERS:
            yield p, "guiding case (案例/): not a statute, no articles; not read as law"
        else:
            yield p, None


def read_folder(root: str | Path, only: Iterable[str] | None = None) -> Folder:
    """Read every law file under ``root``; raise InputError when the folder is not in this format at all."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"no such folder: {root}; pass a checkout of the law repository (folders of "
                         "<title>(YYYY-MM-DD).md files)", path=str(root))
    wanted = set(only) if only is not None else None
    files, problems, skipped = [], [], []
    for p, why in iter_law_files(root):
        if why:
            skipped.append((p.relative_to(root).as_posix(), why))
            continue
        if wanted is not None and p.relative_to(root).as_posix() not in wanted:
            continue
        f, probs = read_file(p, root)
        problems.extend(probs)
        if f is not None:
            files.append(f)
    if not files:
        raise InputError(f"{root} holds no law file in the expected layout (Markdown files starting '# <title>', "
                         f"history lines, '{_INFO_END}', then paragraphs beginning 第X条); "
                         f"{len(problems)} problem(s), first: {problems[0] if problems else 'no .md files'}",
                         path=str(root))
    return Folder(tuple(files), tuple(problems), tuple(skipped))
