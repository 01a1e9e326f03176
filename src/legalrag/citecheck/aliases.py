"""Law titles: normalisation and an alias table built from the titles a corpus actually contains.

Writers cite the same law many ways: ``《中华人民共和国刑法》``, ``中华人民共和国刑法``, ``刑法``, ``《刑法》``;
an interpretation as ``《最高人民法院关于适用〈中华人民共和国刑事诉讼法〉的解释》`` while the corpus calls it
``最高人民法院关于适用《刑事诉讼法》的解释``. :func:`law_key` reduces all of these to one key.

The table has two tiers. *Exact* keys come from a title itself (book-title marks, spaces, the
``中华人民共和国`` prefix and bracket styles do not count). *Short* keys drop a trailing parenthesis such as
``（试行）`` or ``（二）`` and a leading issuer such as ``最高人民法院``; they are used only when no exact key
matches, and a short key shared by several laws is reported as ambiguous instead of being guessed. Between the two,
*abbreviations* (``民诉法`` for 民事诉讼法, ``婚姻法解释`` for the three interpretations it may mean) come from
``data/citations/abbreviations_zh.json``; one that names several corpus laws is ambiguous too.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Iterable, Mapping, Sequence

PRC = "中华人民共和国"
_SPACES = re.compile(r"[\s\u3000]+")
_TRAILING_PAREN = re.compile(r"（[^（）]{1,12}）$")
_ISSUER = re.compile(r"^(?:(?:最高人民法院|最高人民检察院|公安部|司法部|国家安全部|国务院)[、和与]?)+(?=关于)")
_JOINT_ISSUERS = re.compile(r"(最高人民法院)(最高人民检察院)")
_ISSUER_BRACKETED = re.compile(
    r"^((?:(?:最高人民法院|最高人民检察院|公安部|司法部|国家安全部|国务院)[、和与]?)+)《(关于(?:[^《》]|《[^《》]*》)*)》$")
_CJK = re.compile(r"[\u4e00-\u9fff]")

# Relative titles refer to "this law": they only make sense inside the law itself.
RELATIVE_TITLES = frozenset({"本法", "该法", "同法", "本条例", "本规定", "本解释", "本办法", "本决定", "本细则", "本规则",
                             "该条例", "该规定", "该解释", "该办法", "该决定", "本意见", "该意见"})


@functools.lru_cache(maxsize=1)
def shipped_abbreviations() -> dict[str, tuple[str, ...]]:
    """The shipped short names: ``{"民诉法": ("民事诉讼法",), ...}``."""
    path = resources.files("legalrag").joinpath("data", "citations", "abbreviations_zh.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    return {k: tuple(v) for k, v in data["abbreviations"].items()}


def law_key(title: str) -> str:
    """The comparison key of a law title: 《中华人民共和国刑法》, 中华人民共和国刑法 and 刑法 all give 刑法.

    Non-Chinese titles (``BGG``, ``18 U.S.C.``) are compared without spaces and dots, case-insensitively.
    """
    t = _SPACES.sub("", title or "")
    if not _CJK.search(t):
        return t.replace(".", "").casefold()
    t = t.translate(str.maketrans({"(": "（", ")": "）", "〈": "《", "〉": "》", "<": "《", ">": "》", "﹤": "《",
                                  "﹥": "》", "＜": "《", "＞": "》"}))
    while t.startswith("《") and t.endswith("》") and _balanced(t[1:-1]):
        t = t[1:-1]
    if t.startswith(PRC) and len(t) > len(PRC):
        t = t[len(PRC):]
    t = _JOINT_ISSUERS.sub(r"\1、\2", t)  # 最高人民法院 最高人民检察院关于... (space) = 最高人民法院、最高人民检察院关于...
    t = _ISSUER_BRACKETED.sub(r"\1\2", t)  # 最高人民法院《关于…的解释》 = 最高人民法院关于…的解释
    return t.replace("《" + PRC, "《")


def short_keys(key: str) -> set[str]:
    """Weaker keys for a title key: without a trailing （试行）/（二）, without a leading issuer, or both."""
    out = set()
    for k in (key, _TRAILING_PAREN.sub("", key)):
        out.add(k)
        out.add(_ISSUER.sub("", k))
    out.discard(key)
    return {k for k in out if len(k) >= 2}


def surface_forms(title: str) -> set[str]:
    """Ways a title may appear unbracketed in running text (used to find titles written without 《》)."""
    t = _SPACES.sub("", title)
    forms = {t, title.strip()}  # with its spaces too: 最高人民法院 最高人民检察院关于…
    if t.startswith(PRC):
        forms.add(t[len(PRC):])
    elif _CJK.search(t) and t.endswith("法"):
        forms.add(PRC + t)
    for f in list(forms):  # 关于适用《刑事诉讼法》的解释 is also written 关于适用《中华人民共和国刑事诉讼法》的解释
        if "《" in f:
            forms.add(f.replace("《" + PRC, "《"))
            forms.add(re.sub("《(?!" + PRC + ")", "《" + PRC, f))
    for f in list(forms):
        forms.update(short_keys(f) if _CJK.search(f) else ())
    return {f for f in forms if len(f) >= 2}


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch == "《"
        depth -= ch == "》"
        if depth < 0:
            return False
    return depth == 0


@dataclass(frozen=True)
class LawMatch:
    """The corpus titles a written title may mean: one title when ``ok``, several when ``ambiguous``."""

    written: str
    titles: tuple[str, ...]
    exact: bool = True  # False when only a short key (without （试行）, issuer...) matched

    @property
    def ok(self) -> bool:
        return len(self.titles) == 1

    @property
    def ambiguous(self) -> bool:
        return len(self.titles) > 1

    @property
    def title(self) -> str | None:
        return self.titles[0] if self.ok else None


_ORDINAL = {c: i for i, c in enumerate("一二三四五六七八九十", 1)}


def _title_order(title: str) -> tuple[str, int]:
    """Sort key: 解释（二） before 解释（三）, not by the characters' code points."""
    m = re.search(r"（([一二三四五六七八九十])）$", title)
    return (title[:m.start()], _ORDINAL[m.group(1)]) if m else (title, 0)


@dataclass
class AliasTable:
    """Maps written law titles to the titles used in a corpus. Build with :meth:`from_titles`."""

    exact: dict[str, set[str]] = field(default_factory=dict)
    short: dict[str, set[str]] = field(default_factory=dict)
    abbreviations: dict[str, set[str]] = field(default_factory=dict)
    surfaces: frozenset[str] = frozenset()
    _max_surface: int = 0

    @classmethod
    def from_titles(cls, titles: Iterable[str],
                    abbreviations: Mapping[str, Sequence[str]] | None = None) -> "AliasTable":
        """``abbreviations``: short name -> the titles it names (default: the shipped table); a short name is
        kept for the titles of ``titles`` it names, and dropped when it names none of them."""
        table = cls()
        surfaces: set[str] = set()
        for title in {t for t in titles if t}:
            key = law_key(title)
            table.exact.setdefault(key, set()).add(title)
            for k in short_keys(key):
                table.short.setdefault(k, set()).add(title)
            surfaces |= surface_forms(title)
        for short, targets in (shipped_abbreviations() if abbreviations is None else abbreviations).items():
            found = {t for target in targets for t in table.exact.get(law_key(target), ())}
            if found and law_key(short) not in table.exact:
                table.abbreviations[law_key(short)] = found
                surfaces.add(short)
        table.surfaces = frozenset(surfaces)
        table._max_surface = max(map(len, surfaces), default=0)
        return table

    @property
    def titles(self) -> set[str]:
        return set().union(*self.exact.values()) if self.exact else set()

    def lookup(self, written: str) -> LawMatch:
        """Corpus titles for a title as written; empty when unknown, several when ambiguous."""
        key = law_key(written)
        found = self.exact.get(key)
        if found:
            return LawMatch(written, tuple(sorted(found)))
        found = self.abbreviations.get(key)
        if found:
            return LawMatch(written, tuple(sorted(found, key=_title_order)), exact=len(found) == 1)
        found = self.short.get(key)
        if not found:  # the written title may carry a parenthesis or issuer the corpus title lacks
            for k in sorted(short_keys(key), key=len, reverse=True):
                found = self.exact.get(k)
                if found:
                    break
        return LawMatch(written, tuple(sorted(found or (), key=_title_order)), exact=False)

    def title_ending_at(self, text: str) -> str | None:
        """The longest known title that ``text`` ends with (for titles written without 《》), or None."""
        for n in range(min(self._max_surface, len(text)), 1, -1):
            if text[-n:] in self.surfaces:
                return text[-n:]
        return None
