"""Read charges, prison term, fine and cited Criminal Law articles out of a Chinese criminal judgment.

The rules follow the JuDGE evaluation (re-implemented, see ``docs/lab/notebook.md``), because benchmark figures
depend on them. Each field is read from its section first and from the whole raw document when the section
yields nothing:

- **Charges** (from the result section): each clause of the result (split on ``一、`` / ``（一）`` numbering,
  else on ``。；``) is cut before ``撤销``, ``罪犯`` is dropped, and every ``犯……罪`` is mapped to the official
  charge list (``data/judge/cause_codes.txt``, from JuDGE, MIT): exact name; else the shortest official name
  that contains the written one as a subsequence (``贩卖毒品罪`` -> ``走私、贩卖、运输、制造毒品罪``); else,
  for names under 30 characters, the closest official name by normalised edit distance below 0.4; else it
  is dropped.
- **Prison term in months** (from the result section): each distinct phrase ``有期徒刑/拘役/管制`` + up to
  7 characters + ``年/月``, cut at the first punctuation mark, ``以``, ``缓`` or ``至``, counts
  ``years * 12 + months``. Conventions: the probation of a suspended sentence (``缓刑``) is ignored (the
  imposed term counts); ``无期徒刑`` = 240 months; ``死刑`` = 10001 (a sentinel: a death sentence scores
  0 against anything but a death sentence); ``无罪`` and ``免予刑事处罚`` = 0 months; distinct phrases
  are summed (several defendants or counts), repeated identical phrases count once; no phrase at all =
  ``None`` (not stated).
- **Fine in yuan** (from the result section): each distinct phrase ``罚金`` + up to 15 characters + ``元``,
  cut at the first punctuation mark, ``以``, ``已`` or ``至``; a phrase holding exactly one number counts it
  (``罚金人民币二万元`` = 20000, ``5000元``, ``1.5万元``); phrases are summed; none = ``None``.
- **Articles** (from the reasoning section): in each stretch from ``《中华人民共和国刑法》`` or ``《刑法》`` to
  the next ``。《判附规``, every ``第…条`` counts; a list sharing one title (``第二百六十六条、第六十七条第三款``)
  gives all of them; paragraphs (``第三款``) are recorded but the benchmark compares article numbers only,
  and ``之一`` articles count as their base number there (``第一百三十三条之一`` -> 133), as in JuDGE.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from legalrag.judgment.numbers import numbers_in
from legalrag.judgment.sections import Sections, split_sections
from legalrag.numerals import NUMERAL_CHARS, to_int

LIFE_MONTHS = 240
DEATH_MONTHS = 10001


@dataclass(frozen=True)
class CitedArticle:
    """An article of the Criminal Law cited in a judgment: 第一百三十三条之一第二款 -> (133, 1, 2)."""

    number: int
    suffix: int | None = None  # the N of 之N
    paragraph: int | None = None  # 第N款

    @property
    def key(self) -> str:
        """Canonical form, e.g. ``133-1``."""
        return f"{self.number}-{self.suffix}" if self.suffix else str(self.number)


@dataclass(frozen=True)
class JudgmentFields:
    """What the evaluator reads from one judgment; ``None`` means the field was not stated."""

    charges: tuple[str, ...] = ()
    prison_months: int | None = None
    fine_yuan: int | None = None
    articles: tuple[CitedArticle, ...] = ()
    sections: Sections = field(default_factory=Sections, repr=False)

    @property
    def article_numbers(self) -> tuple[int, ...]:
        """Distinct article numbers (what the benchmark compares)."""
        return tuple(sorted({a.number for a in self.articles}))

    def to_dict(self) -> dict:
        return {
            "charges": list(self.charges),
            "prison_months": self.prison_months,
            "fine_yuan": self.fine_yuan,
            "articles": [a.key for a in self.articles],
            "article_numbers": list(self.article_numbers),
        }


# ----------------------------------------------------------------------------------------------- charges

@lru_cache(maxsize=1)
def charge_names() -> tuple[str, ...]:
    """The official charge names, in the order of the shipped list."""
    text = resources.files("legalrag").joinpath("data/judge/cause_codes.txt").read_text(encoding="utf-8")
    return tuple(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))


_CHARGE = re.compile(r"犯([^罪犯，。；《》（）]+?罪)")
_CLAUSE_NUMBER = re.compile(r"[一二三四五六七八九十]{1,3}、|（[一二三四五六七八九十]{1,3}）")


def _is_subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


def _edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


@lru_cache(maxsize=4096)
def normalize_charge(written: str) -> str:
    """Map a charge as written to its official name, or ``""`` when nothing is close enough."""
    name = written.replace(" ", "")
    if name[:1] in ("有", "的", "了"):
        name = name[1:]
    names = charge_names()
    if name in names:
        return name
    containing = [n for n in names if _is_subsequence(name, n)]
    if containing:
        return min(containing, key=len)
    if len(name) < 30:
        best, best_d = "", 1.0
        for n in names:
            d = _edit_distance(name, n) / max(len(name), len(n))
            if d < best_d:
                best, best_d = n, d
        if best_d < 0.4:
            return best
    return ""


def charges_in(text: str) -> list[str]:
    """Official charge names found in ``犯……罪`` phrases of ``text`` (de-duplicated, in order found)."""
    clauses = _CLAUSE_NUMBER.split(text)
    if len(clauses) == 1:
        clauses = re.split(r"[；。]", clauses[0])
    found: dict[str, None] = {}
    for clause in clauses:
        if "撤销" in clause:
            clause = clause[: clause.find("撤销")]
        for written in _CHARGE.findall(clause.replace("罪犯", "")):
            name = normalize_charge(written)
            if name:
                found.setdefault(name)
    return list(found)


# ------------------------------------------------------------------------------------------ prison, fine

_TERM = re.compile(r"(?:管制|拘役|有期徒刑).{1,7}[年月]")
_TERM_STOP = re.compile(r"[,;，。！？、；：（以缓至]")
_NO_TERM = re.compile(r"无期徒刑|死刑|无罪|免予刑事处罚|免于刑事处罚|免予刑事处分")
_FINE = re.compile(r"罚金.{1,15}元")
_FINE_STOP = re.compile(r"[，。！？、；：以已至（]")


def _cut_at(text: str, stop: re.Pattern) -> str:
    m = stop.search(text)
    return text[: m.start()] if m else text


def _term_phrases(text: str) -> list[str]:
    # Kinds are scanned one after another, as the benchmark does; duplicates collapse later.
    out = []
    for kind in ("管制", "拘役", "有期徒刑"):
        out += [_cut_at(m, _TERM_STOP) for m in re.findall(kind + r".{1,7}[年月]", text)]
    out += _NO_TERM.findall(text)
    return out


def term_months(phrase: str) -> int:
    """Months of one sentence phrase (see the module docstring for the conventions)."""
    nums = numbers_in(phrase)
    if len(nums) == 2:
        if "年" in phrase and "月" in phrase:
            return int(nums[0]) * 12 + int(nums[1])
        return int(nums[0])
    if len(nums) == 1:
        if "年" in phrase:
            return int(nums[0]) * 12
        return int(nums[0]) if "月" in phrase else 0
    if not nums:
        if "无期徒刑" in phrase:
            return LIFE_MONTHS
        if "死刑" in phrase:
            return DEATH_MONTHS
    return 0  # 无罪 / 免予刑事处罚, or a phrase too irregular to read


def prison_months_in(result: str, full_text: str) -> int | None:
    phrases = _term_phrases(result) or _term_phrases(full_text)
    if not phrases:
        return None
    return sum(term_months(p) for p in dict.fromkeys(phrases))


def _fine_phrases(text: str) -> list[str]:
    phrases = [_cut_at(m, _FINE_STOP) for m in _FINE.findall(text)]
    return [p.replace(",", "") for p in phrases if "元" in p]


def fine_yuan_in(result: str, full_text: str) -> int | None:
    phrases = _fine_phrases(result) or _fine_phrases(full_text)
    if not phrases:
        return None
    total = 0
    for p in dict.fromkeys(phrases):
        nums = numbers_in(p)
        if len(nums) == 1:  # 罚金一万元二千元 and the like are ambiguous: skipped, as in the benchmark
            total += int(nums[0])
    return total


# -------------------------------------------------------------------------------------------- articles

_LAW_SPANS = (
    re.compile(r"《中华人民共和国刑法》第.*?[。《判附规]"),
    re.compile(r"《刑法》第.*?[。《判附规]"),
    re.compile(r"《中华人民共和国刑法》\s?[零一二三四五六七八九十第]+.*?[。《判附规]"),
)
_ARTICLE = re.compile(rf"第([{NUMERAL_CHARS}]+)条(?:之([一二三四五六七八九十]+))?(?:第([{NUMERAL_CHARS}]+)款)?")


def articles_in(reasoning: str, full_text: str) -> list[CitedArticle]:
    """Criminal Law articles cited in the reasoning (or, failing that, anywhere in the document)."""
    spans: set[str] = set()
    for pat in _LAW_SPANS:
        spans.update(pat.findall(reasoning))
    if not spans:
        for pat in _LAW_SPANS:
            spans.update(pat.findall(full_text))
    found: dict[CitedArticle, None] = {}
    for span in sorted(spans):
        for m in _ARTICLE.finditer(span):
            if not re.fullmatch(r"[一二三四五六七八九零十百]+", m.group(1)):
                continue  # the benchmark reads only plain numerals up to 百
            try:
                art = CitedArticle(to_int(m.group(1)),
                                   to_int(m.group(2)) if m.group(2) else None,
                                   to_int(m.group(3)) if m.group(3) else None)
            except ValueError:
                continue
            found.setdefault(art)
    return list(found)


# ------------------------------------------------------------------------------------------- all fields

def extract_fields(document: str, sections: Sections | None = None) -> JudgmentFields:
    """Split ``document`` (unless ``sections`` is given) and read every field the evaluator compares."""
    sec = sections if sections is not None else split_sections(document)
    charges = charges_in(sec.result) or charges_in(document)
    return JudgmentFields(
        charges=tuple(charges),
        prison_months=prison_months_in(sec.result, document),
        fine_yuan=fine_yuan_in(sec.result, document),
        articles=tuple(articles_in(sec.reasoning, document)),
        sections=sec,
    )
