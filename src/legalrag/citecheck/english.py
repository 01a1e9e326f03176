"""Chinese law cited in English: ``Article 82 of the Labour Contract Law``, ``Art. 40 of the Labor Contract Law of
the PRC``, ``PRC Civil Code art. 585``, ``Civil Code of the PRC, Article 1165``, ``Arts. 39-40 of ...``,
``Article 67, paragraph 3 of the Criminal Law``, ``Paragraph 2 of Article 67 of ...``, ``Article 26(1)(1) of ...``.

English titles are read through the English title table (``data/citations/english_titles.json``: the official
English titles, and common variants, of the corpus's most cited laws, and of the laws the 民法典 repealed). A
title is compared by :func:`en_key`: case, punctuation, ``the``, British spelling (Labour) and the jurisdiction
(``of the People's Republic of China``, ``of the PRC``, a leading ``PRC``/``China's``) do not count.

Rules (see :func:`extract_english`):

- The title follows the article (``Article 40 of the Labor Contract Law``) or comes right before it (``Civil Code
  of the PRC, Article 1165``). A title before the article counts only as a whole: ``Japanese Civil Code art. 709``
  is not the 民法典 (words before it may be dropped only up to a connecting word: ``Under the PRC Civil Code``).
- A title after the article may be followed by other words only from a lowercase word on: ``Article 40 of the
  Labor Contract Law and Article 47`` reads the Labor Contract Law; ``Article 40 of the Labor Contract Law
  Interpretation`` is a title the table does not know, never the Labor Contract Law.
- A bare ``Article 47`` inherits the last English title of the same sentence; with none, it is not read.
- ``Articles 39 and 40``, ``Arts. 39-40`` (a range gives its two ends, as in Chinese) give one citation each;
  ``Article 133-1`` or ``Article 133A`` is 第一百三十三条之一.
- ``paragraph N`` is 第N款, ``item N`` / ``subparagraph (N)`` is 第N项, ``(N)(M)`` is paragraph N item M; a single
  ``(N)`` is kept as written (writers use it for either) and only the article is checked.
- An unknown title is kept, with why: ``foreign`` when it names another jurisdiction (``German Civil Code``,
  ``Companies Act``) or ``this Law`` when it is relative.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import ClassVar, Iterable, Mapping

from legalrag.citecheck.base import CitationMatch

TABLE = "english_titles.json"

_CONNECTORS = frozenset("of the on for and in to by from with concerning regarding against over under about a an "
                        "its at or as between into upon".split())
_TITLE_INSIDE = frozenset("of on for concerning regarding in against over".split())  # words inside a title
_FOREIGN = re.compile(
    r"\b(?:Acts?|Ordinances?|Conventions?|Treaty|Federal|Constitution of the United States|United States|U\.\s?S\.|US"
    r"|USA|American|UK|U\.K\.|British|England|English|Wales|Scotland|Ireland|Irish|Germany|German|France|French"
    r"|Japan|Japanese|Korea|Korean|Taiwan|Taiwanese|Republic of China \(Taiwan\)|Singapore|Singaporean|India|Indian"
    r"|Swiss|Switzerland|Canada|Canadian|Australia|Australian|New Zealand|European|EU|Italy|Italian|Spain|Spanish"
    r"|Netherlands|Dutch|Russia|Russian|Vietnam|Vietnamese|Thailand|Thai|Malaysia|Malaysian|Brazil|Brazilian"
    r"|Mexico|Mexican|Hong Kong|Macao|Macau|California|New York|Delaware|Texas)\b")
_RELATIVE = re.compile(r"^(?:this|that|the said|the same|said)\s+(?:Law|Code|Regulations?|Rules|Provisions|"
                       r"Interpretation|Measures|Decision)$", re.I)
_HEAD_NOUN = re.compile(r"\b(?:Law|Code|Regulations?|Rules?|Provisions?|Interpretation|Measures|Decision|"
                        r"Constitution|Act|Ordinance|Convention|Treaty|Principles)\b", re.I)

_NUM = r"\d+(?:-\d+|[A-F]\b)?"
_LIST = rf"{_NUM}(?:\s*\(\d+\))*(?:\s*(?:,\s*(?:and\s+|or\s+)?|and\s+|or\s+|to\s+|through\s+|[-–]\s*){_NUM}(?:\s*\(\d+\))*)*"
_ART_WORD = r"(?:Articles?|ARTICLES?|articles?|Arts?\.|arts?\.|Art\b|art\b|Art(?=\d))"
_HEAD = re.compile(
    rf"(?P<item_before>(?:[Ii]tem|[Ss]ub-?paragraph|[Cc]lause)\s*\(?(?P<ib>\d+)\)?\s*(?:,\s*|of\s+(?:the\s+)?))?"
    rf"(?P<para_before>(?:[Pp]aragraph|[Pp]ara\.?)\s*(?P<pb>\d+)\s*(?:,\s*|of\s+(?:the\s+)?))?"
    rf"\b(?P<art_word>{_ART_WORD})\s*(?P<nums>{_LIST})"
    rf"(?:,?\s*(?:[Pp]aragraph|[Pp]ara\.?|§)\s*(?P<para>\d+))?"
    rf"(?:,?\s*(?:[Ii]tem|[Ss]ub-?paragraph|[Cc]lause)\s*\(?(?P<item>\d+)\)?)?")
_GAP_AFTER = re.compile(r"[ \t]{1,2}|,[ \t]|[ \t]?-[ \t]?")
_GAP_FIRST = re.compile(r"[ \t]*")
_RELATIVE_AFTER = re.compile(r",?\s*(?:of|in|under)\s+((?:this|that|the said|the same|said)\s+(?:Law|Code|Regulations?|"
                             r"Rules|Provisions|Interpretation|Measures|Decision))\b", re.I)
_OF_THE = re.compile(r",?\s*(?:of|in|under)\s+(?:the\s+)?")
_TITLE_WORD = re.compile(r"\(?[A-Z][\w'’.-]*\)?|\([IVX]+\)|[a-z]+|PRC")
_SENTENCE_END = re.compile(r"(?<![A-Z][a-z])(?<!\b[A-Z])(?<!\bArts)(?<!\bArt)(?<!\bNo)(?<!\bPara)[.!?。！？]\s|\n")
_SPELLING = {"labour": "labor", "defence": "defense", "organisation": "organization", "organised": "organized",
             "licence": "license", "programme": "program", "macau": "macao", "favour": "favor", "honour": "honor"}
_SINGULAR = {"regulations": "regulation", "provisions": "provision", "rules": "rule", "measures": "measure",
             "procedures": "procedure", "proceedings": "proceeding", "disputes": "dispute", "cases": "case"}
_JURISDICTION = [
    r"\bof (?:the )?peoples republic of china\b", r"\bof (?:the )?prc\b", r"^(?:the )?peoples republic of chinas?\b",
    r"^(?:the )?prcs?\b", r"^chinas\b", r"^chinese\b(?! medicine)", r"\bof china$", r"\bin china$"]


@functools.lru_cache(maxsize=8192)
def en_key(title: str) -> str:
    """The comparison key of an English title: ``the Labour Contract Law of the People's Republic of China`` and
    ``PRC Labor Contract Law`` both give ``labor contract law``."""
    s = title.replace("’", "'").replace("‘", "'").casefold()
    s = re.sub(r"'s?\b", "s", s.replace("s' ", "s "))  # people's -> peoples, villagers' -> villagers
    s = s.replace("&", " and ")
    s = re.sub(r"[^\w\s]", " ", s.replace("-", " "))
    s = " ".join(_SINGULAR.get(w, _SPELLING.get(w, w)) for w in s.split())
    s = s.replace("supreme peoples court", "spc").replace("supreme peoples procuratorate", "spp")
    for _ in range(2):
        for pat in _JURISDICTION:
            s = re.sub(pat, " ", s).strip()
    return " ".join(w for w in s.split() if w != "the")


@dataclass(frozen=True)
class EnglishTitles:
    """English title key -> corpus titles (Chinese). ``repealed``: titles of laws no longer in force."""

    keys: Mapping[str, tuple[str, ...]]
    repealed: frozenset[str] = frozenset()

    @property
    def n_laws(self) -> int:
        return len({t for ts in self.keys.values() for t in ts} - self.repealed)

    @classmethod
    def from_entries(cls, laws: Iterable[Mapping], repealed: Iterable[Mapping] = ()) -> "EnglishTitles":
        keys: dict[str, set[str]] = {}
        gone: set[str] = set()
        for group, is_repealed in ((laws, False), (repealed, True)):
            for n, entry in enumerate(group, 1):
                zh, en = entry.get("zh"), entry.get("en")
                if not zh or not isinstance(en, list) or not en:
                    raise ValueError(f"{TABLE}: entry {n} needs 'zh' (a title) and 'en' (a list of English titles)")
                if is_repealed:
                    gone.add(zh)
                for title in en:
                    keys.setdefault(en_key(title), set()).add(zh)
        return cls({k: tuple(sorted(v)) for k, v in keys.items()}, frozenset(gone))

    @classmethod
    @functools.lru_cache(maxsize=1)
    def load(cls) -> "EnglishTitles":
        """The shipped table."""
        path = resources.files("legalrag").joinpath("data", "citations", TABLE)
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls.from_entries(data["laws"], data.get("repealed", ()))

    def lookup(self, written: str) -> tuple[str, ...]:
        return self.keys.get(en_key(written), ())


@dataclass(frozen=True)
class EnglishCitation:
    """An English citation of Chinese law. ``written``: the English title as written (None: none given);
    ``titles``: the Chinese titles the table gives for it (one when known, several when ambiguous)."""

    written: str | None
    titles: tuple[str, ...]
    article: int
    sub_article: int | None = None
    paragraph: int | None = None
    item: int | None = None
    division: str | None = None  # a lone "(2)": paragraph or item, as the writer meant; not checked
    foreign: bool = False  # the title names another jurisdiction
    relative: bool = False  # "this Law"
    system: ClassVar[str] = "zh"

    @property
    def law(self) -> str | None:
        """The Chinese title when the table gives exactly one, else None."""
        return self.titles[0] if len(self.titles) == 1 else None

    @property
    def article_key(self) -> str:
        return f"{self.article}-{self.sub_article}" if self.sub_article else str(self.article)

    def as_chinese(self, law: str | None = None):
        from legalrag.citecheck.chinese import ChineseCitation

        return ChineseCitation(law if law is not None else self.law, self.article, self.sub_article,
                               self.paragraph, self.item)

    def english(self) -> str:
        """``Article 40, paragraph 1, item 2 of the Labor Contract Law`` (as a reader wrote it, normalised)."""
        out = f"Article {self.article}" + (f"-{self.sub_article}" if self.sub_article else "")
        out += self.division or ""
        if self.paragraph is not None:
            out += f", paragraph {self.paragraph}"
        if self.item is not None:
            out += f", item {self.item}"
        if not self.written:
            return out
        return f"{out} of {self.written}" if self.relative else f"{out} of the {self.written}"

    def canonical(self, law: str | None = None) -> str:
        """The Chinese form (``劳动合同法第四十条``) when the title is known, else the English form."""
        if law is not None or self.law is not None:
            return self.as_chinese(law).canonical()
        return self.english()

    def __str__(self) -> str:
        return self.canonical()


def parse_english(text: str, table: EnglishTitles | None = None) -> EnglishCitation:
    """Parse one whole English citation such as ``Art. 40 of the Labor Contract Law``; raise ValueError otherwise."""
    s = text.strip().rstrip(".")
    found = extract_english(s, table)
    if len(found) != 1 or found[0].span != (0, len(s)):
        raise ValueError(f"not a single English citation of Chinese law: {text!r}")
    return found[0].citation  # type: ignore[return-value]


def extract_english(text: str, table: EnglishTitles | None = None,
                    taken: Iterable[tuple[int, int]] = ()) -> list[CitationMatch]:
    """Every English citation of Chinese law in ``text`` (rules in the module docstring); spans in ``taken``
    (found by another parser) are skipped."""
    table = table if table is not None else EnglishTitles.load()
    taken = sorted(taken)
    starts = [s for s, _ in taken]
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    out: list[CitationMatch] = []
    last: tuple[str, tuple[str, ...], bool, bool, int] | None = None  # written, titles, foreign, relative, sentence
    for m in _HEAD.finditer(text):
        k = bisect.bisect_left(starts, m.end())  # spans starting before this match ends
        if any(e > m.start() for _, e in taken[max(0, k - 8):k]):
            continue
        sentence = bisect.bisect_right(ends, m.start())
        start, end = m.start(), m.end()
        title = _title_after(text, end, table)
        if title is not None and not title[0]:
            continue  # "Article 5 of the contract": not a law, and not the law of an earlier citation either
        if title is not None:
            written, titles, end = title
        else:
            before = _title_before(text, start, table)
            if before is not None:
                written, titles, start = before
            elif last is not None and last[4] == sentence:
                written, titles = last[0], last[1]
            else:
                continue  # "Art. 5" alone names no law: not read as Chinese law (another parser may know it)
        foreign = bool(written) and not titles and _FOREIGN.search(written) is not None
        relative = bool(written) and _RELATIVE.match(written) is not None
        if written is not None and not relative:
            last = (written, titles, foreign, relative, sentence)
        para, item = _opt(m.group("para") or m.group("pb")), _opt(m.group("item") or m.group("ib"))
        arts = _articles(m.group("nums"))
        for article, sub, parens in arts:
            p, i, division = para, item, None
            if len(parens) >= 2 and p is None and i is None:
                p, i = parens[0], parens[1]
            elif len(parens) == 1 and p is None and i is None:
                division = f"({parens[0]})"
            cit = EnglishCitation(written, titles, article, sub, p, i, division, foreign, relative)
            out.append(CitationMatch(cit, start, end, text[start:end], law_inherited=title is None and
                                     before is None and written is not None))
    return out


def _opt(s: str | None) -> int | None:
    return int(s) if s else None


def _articles(nums: str) -> list[tuple[int, int | None, list[int]]]:
    """``39 and 40`` -> [(39, None, []), (40, None, [])]; ``133-1`` -> [(133, 1, [])]; ``26(1)(1)`` keeps (1)(1)."""
    out: list[tuple[int, int | None, list[int]]] = []
    for part in re.finditer(rf"(\d+)(?:-(\d+)|([A-F])\b)?((?:\s*\(\d+\))*)(?=\s*(?:$|[,–-]|and|or|to|through))",
                            nums):
        base, tail, letter = int(part.group(1)), part.group(2), part.group(3)
        parens = [int(x) for x in re.findall(r"\((\d+)\)", part.group(4) or "")]
        if tail and int(tail) > base:  # 39-40: a range (its two ends), not 第三十九条之四十
            out += [(base, None, []), (int(tail), None, [])]
        elif tail:
            out.append((base, int(tail), parens))
        elif letter:
            out.append((base, "ABCDEF".index(letter) + 1, parens))
        else:
            out.append((base, None, parens))
    return out


def _words_after(text: str, pos: int) -> list[tuple[str, int, int]]:
    """The title-like words right after ``pos`` (capitalised words and connectors, one space apart)."""
    out: list[tuple[str, int, int]] = []
    i = pos
    while True:
        gap = (_GAP_AFTER if out else _GAP_FIRST).match(text, i)
        if gap is None:
            break
        w = _TITLE_WORD.match(text, gap.end())
        if w is None:
            break
        word = w.group(0).rstrip(".,")
        if word.endswith(")") and "(" not in word:  # "(Article 82 of the Labour Contract Law)": not the title's
            word = word[:-1]
        if word.startswith("(") and ")" not in word:
            break
        if not word or (word[0].islower() and word not in _CONNECTORS) or (gap.group(0).startswith(",") and
                                                                             not word[0].isupper()):
            break
        if re.fullmatch(r"Arts?|Articles?|Paragraph|Para|Item", word):
            break
        out.append((word, w.start(), w.start() + len(word)))
        i = w.start() + len(word)
    return out


def _title_after(text: str, pos: int, table: EnglishTitles) -> tuple[str, tuple[str, ...], int] | None:
    """``of [the] <title>`` right after an article number: (title as written, corpus titles, end)."""
    rel = _RELATIVE_AFTER.match(text, pos)
    if rel is not None:
        return rel.group(1), (), rel.end()
    m = _OF_THE.match(text, pos)
    if m is None:
        return None
    words = _words_after(text, m.end())
    while words and words[-1][0].lower() in _CONNECTORS:
        words.pop()
    if not words:
        return "", (), pos  # "Article 5 of the contract": it cites something that is not a law
    if not words[0][0][0].isupper():
        return None
    # Longest prefix that the table knows, where the next word (if any) is one a title may stop before.
    for n in range(len(words), 0, -1):
        if n < len(words) and not words[n][0][0].islower():
            continue  # "Labor Contract Law Interpretation" is not the Labor Contract Law
        if n < len(words) and words[n][0] in _TITLE_INSIDE and any(w[0][0].isupper() for w in words[n + 1:]):
            continue  # "Constitution of the United States", "Civil Code of Japan": the title goes on
        written = text[words[0][1]:words[n - 1][2]]
        found = table.lookup(written)
        if found:
            return written, found, words[n - 1][2]
    # Unknown: the whole run ("Constitution of the United States", "Civil Code of Japan"), or up to its last head
    # noun (Law, Code, Act...) when what follows is joined by a word that does not continue a title ("and", "as").
    for n in range(len(words), 0, -1):
        if _HEAD_NOUN.fullmatch(words[n - 1][0]):
            if n < len(words) and words[n][0] not in _TITLE_INSIDE:
                return text[words[0][1]:words[n - 1][2]], (), words[n - 1][2]
            break
    return text[words[0][1]:words[-1][2]], (), words[-1][2]


_WORD = re.compile(r"[A-Z][\w'’.-]*|\([IVX]+\)|[a-z]+")
# between a title and its article: a comma or an opening bracket; a note in brackets ("(2012 Amendment), ") is skipped
_GAP_LAST = re.compile(r"[ \t]*[,(]?[ \t]*")
_NOTE_BEFORE = re.compile(r"[ \t]*\([^()\n]{1,30}\)[ \t]*,?[ \t]*$")
_GAP = re.compile(r"[ \t]+|,[ \t]+")


def _words_before(text: str, pos: int) -> list[tuple[str, int, int]]:
    """The run of title-like words ending right before ``pos`` (one space or ", " apart), in reading order."""
    out: list[tuple[str, int, int]] = []
    note = _NOTE_BEFORE.search(text, max(0, pos - 40), pos)
    end = pos = note.start() if note else pos
    for w in reversed(list(_WORD.finditer(text, max(0, pos - 300), pos))):
        if not (_GAP if out else _GAP_LAST).fullmatch(text, w.end(), end):
            break
        out.append((w.group(0), w.start(), w.end()))
        end = w.start()
    out.reverse()
    return out


def _title_before(text: str, pos: int, table: EnglishTitles) -> tuple[str, tuple[str, ...], int] | None:
    """A known title written right before the article (``PRC Civil Code art. 585``): the whole run of title
    words, or its end after a connecting word (``Under the PRC Civil Code``)."""
    words = _words_before(text, pos)
    # drop trailing lowercase words that cannot end a title ("as stipulated in Art. 5": no title)
    if not words or not (words[-1][0][0].isupper() or words[-1][0].startswith("(")):
        return None
    for i in range(len(words)):
        if i > 0 and not _boundary(words[i - 1][0]) and not _names_prc(words, i):
            continue  # "Japanese Civil Code": the words before are part of the title, which is not the 民法典
        if words[i][0].lower() in _CONNECTORS or not words[i][0][0].isupper():
            continue
        written = text[words[i][1]:words[-1][2]].rstrip(", ")
        found = table.lookup(written)
        if found:
            return written, found, words[i][1]
    if not _HEAD_NOUN.fullmatch(words[-1][0]):
        return None
    # An unknown title (``Japanese Civil Code art. 709``): the words after the last connecting word, kept unresolved.
    first = max((i + 1 for i, (w, _, _) in enumerate(words) if _boundary(w)), default=0)
    return text[words[first][1]:words[-1][2]], (), words[first][1]


# Capitalised words that open a sentence or a phrase before a title ("See Civil Code art. 5"), not part of it.
_LEADING = frozenset("see under according per in as by pursuant also cf and but thus hence moreover further "
                     "furthermore article where when if since because while although whereas".split())


def _boundary(word: str) -> bool:
    """Whether a title cannot run on before ``word``: a connecting word, a lowercase word, a sentence opener."""
    return word.lower() in _CONNECTORS or word.lower() in _LEADING or not word[0].isupper()


def _names_prc(words: list[tuple[str, int, int]], i: int) -> bool:
    """Whether the words from ``i`` open with the PRC itself (``PRC Civil Code``, ``People's Republic of China``):
    what comes before them is not part of the title."""
    head = [w.replace("’", "'") for w, _, _ in words[i:i + 4]]
    return head[:1] in (["PRC"], ["China's"], ["Chinese"]) or head == ["People's", "Republic", "of", "China"]


__all__ = ["EnglishCitation", "EnglishTitles", "en_key", "extract_english", "parse_english"]
