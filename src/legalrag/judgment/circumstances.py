"""The statutory circumstances the facts state, each with the sentence that shows it.

Rules over the statutory definitions, one per circumstance:

- 自首 (刑法第六十七条第一款: 犯罪以后自动投案，如实供述自己的罪行; 第二款: 被采取强制措施后如实供述司法机关还未
  掌握的本人其他罪行，以自首论): the word, or a voluntary surrender (自动投案, 主动投案, 主动到公安机关, 报警后在
  现场等候), or the 第二款 confession of other crimes;
- 坦白 (第六十七条第三款: 不具有自首情节，但是如实供述自己罪行): the word, or a truthful confession after arrest
  (到案后如实供述); never together with 自首, which the third paragraph excludes;
- 立功 (第六十八条: 揭发他人犯罪行为，查证属实，或者提供重要线索，从而得以侦破其他案件): the word, or reporting
  another's crime (检举揭发), or helping to catch a suspect (协助抓获);
- 累犯 (第六十五条第一款): the word, or a release from a fixed-term sentence (有期徒刑……刑满释放) at most five years
  before the crime;
- 从犯 (第二十七条: 在共同犯罪中起次要或者辅助作用): the word, or 次要作用 / 辅助作用;
- 未遂 (第二十三条: 已经着手实行犯罪，由于犯罪分子意志以外的原因而未得逞): the word, or 未得逞 / 意志以外;
- 认罪认罚 (刑事诉讼法第十五条): the word, or a signed 认罪认罚具结书.

Each finding carries a tier. ``certain``: the facts show what the definition demands, and only these are stated
in a draft as fact. ``possible``: a cue the definition does not settle, reported (``find_circumstances(...,
tiers=TIERS)``) but never stated. The definitions decide the tier:

- 自首 is certain for the word, for the 第二款 confession of other crimes, or for a surrender (自动投案, 投案,
  报警后在现场等候: the 视为自动投案 situations) followed in the facts by a truthful confession (如实供述, 供认;
  a 主动/自动 surrender also by an admission at trial, 无异议: the 1998 interpretation counts a confession made
  before the first-instance judgment); a surrender the facts never follow with one is possible;
- 坦白 is certain for a truthful confession; the bare word without one, or a confession where a possible 自首
  is found (the third paragraph needs 不具有自首情节), is possible;
- 认罪认罚 is certain with a signed 具结书 (签署, 签字具结); the bare words are possible;
- a circumstance's name in the prosecution's or a party's assessment (公诉机关认为, 建议) is possible: the court
  may not find it.

A mention preceded by a negation (``不构成自首``, ``不能认定为累犯``) does not count. Each found circumstance comes
with the sentence of the facts that shows it and the statutory provision it engages, so a draft states it
with its evidence and cites the right paragraph (第六十七条第三款 for 坦白). Facts the rules cannot decide give no
circumstance: the draft then states none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date
from typing import Sequence

TIERS = ("certain", "possible")
NAMES = ("自首", "坦白", "立功", "累犯", "从犯", "未遂", "认罪认罚")
# the provision each circumstance engages (law, article key, paragraph)
PROVISIONS: dict[str, tuple[str, str, int | None]] = {
    "自首": ("中华人民共和国刑法", "67", 1),
    "坦白": ("中华人民共和国刑法", "67", 3),
    "立功": ("中华人民共和国刑法", "68", None),
    "累犯": ("中华人民共和国刑法", "65", 1),
    "从犯": ("中华人民共和国刑法", "27", None),
    "未遂": ("中华人民共和国刑法", "23", None),
    "认罪认罚": ("中华人民共和国刑事诉讼法", "15", None),
}
MAX_CHARS = 20_000

_NEG = re.compile(r"(?:不|无|未|没有|不能|不予|不应|不宜|不具有|不具备|不属于?|不成立|不构成|不认定|否认|拒不|是否)"
                  r"[^，。；]{0,6}$")
_SENTENCE = re.compile(r"[^。；！？\n]+[。；！？\n]?")
# a party's claim is not a fact: the defence's submissions (辩护人提出……系自首) are left out
_CLAIM = re.compile(r"辩护人|辩称|辩护意见|辩解|辩护称|提出[^。；]{0,6}意见|请求法庭|要求从轻")

_RULES: dict[str, re.Pattern] = {
    "自首": re.compile(r"自首|自动投案|主动投案|投案|主动到[^，。；]{0,12}(?:公安|派出所|交警|警务|刑警|检察)"
                     r"[^，。；]{0,8}(?:说明|交代|供述|接受|投案|到案)|报警[^。；]{0,12}(?:在现场|原地|现场)等(?:候|待)"
                     r"|如实供述[^。；]{0,10}(?:司法机关|侦查机关|公安机关)(?:尚|还)?未掌握"),
    "坦白": re.compile(r"坦白|(?:到案|归案|抓获|被抓|案发)(?:后|以后)[^。；]{0,16}(?:如实供述|如实交代|供认)"
                     r"|如实供述(?:了)?(?:自己|其|本人)?(?:的)?(?:主要)?(?:犯罪事实|罪行|犯罪行为)"),
    "立功": re.compile(r"立功|检举揭发|揭发他人|检举他人|协助[^，。；]{0,10}抓获|提供[^，。；]{0,10}线索[^。；]{0,16}"
                     r"(?:抓获|侦破|破获)"),
    "累犯": re.compile(r"累犯"),
    "从犯": re.compile(r"从犯|次要作用|辅助作用"),
    "未遂": re.compile(r"未遂|未得逞|未能得逞|意志以外"),
    "认罪认罚": re.compile(r"认罪认罚|具结书"),
}
# the prosecution's or a party's assessment: a circumstance named there is the court's to find
_ASSESSED = re.compile(r"公诉机关|检察院|起诉书?|指控|建议|认为|量刑")
_CONFESSION = re.compile(r"如实供述|如实交代|如实供认|供认|如实陈述")
# a voluntary surrender (主动, 自动) the defendant later admits in any form, trial included
_ADMITTED = re.compile(_CONFESSION.pattern + r"|无异议|没有(?:提出)?异议|不持异议|自愿认罪|当庭认罪")
_SIGNED = re.compile(r"具结")
_RELEASE = re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})日[^，。；]{0,6}(?:刑满释放|释放|出狱)")
_PRISON = re.compile(r"有期徒刑")
_DATE = re.compile(r"(\d{4})年(\d{1,2})月(?:(\d{1,2})日)?")


@dataclass(frozen=True)
class Circumstance:
    """One circumstance the facts state: its name, the sentence that shows it, the span of the words matched."""

    name: str
    sentence: str
    start: int
    end: int
    matched: str
    defendant: str | None = None  # the defendant its sentence names, when the facts name several
    tier: str = "certain"  # TIERS: only a certain finding is stated in a draft

    @property
    def provision(self) -> tuple[str, str, int | None]:
        return PROVISIONS[self.name]

    def to_dict(self) -> dict:
        law, article, para = self.provision
        return {"name": self.name, "sentence": self.sentence, "span": [self.start, self.end],
                "matched": self.matched, "defendant": self.defendant, "law": law, "article": article,
                "paragraph": para, "tier": self.tier}


def _sentences(text: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group()) for m in _SENTENCE.finditer(text)]


def _negated(text: str, start: int) -> bool:
    return bool(_NEG.search(text[max(0, start - 10):start]))


def _date(m: re.Match) -> date | None:
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3) or 1))
    except ValueError:
        return None


def _recidivism(text: str, sentences: Sequence[tuple[int, str]]) -> Circumstance | None:
    """A release from a fixed-term sentence at most five years before the first later date in the facts."""
    for off, s in sentences:
        m = _RELEASE.search(s)
        if not m or not _PRISON.search(s) or re.search(r"缓刑|拘役|管制", s):
            continue
        released = _date(m)
        if released is None:
            continue
        later = [d for d in (_date(x) for x in _DATE.finditer(text[off + len(s):])) if d and d > released]
        if later and (later[0] - released).days <= 5 * 366:
            return Circumstance("累犯", s.strip(), off + m.start(), off + m.end(), m.group())
    return None


def _defendant(sentence: str, at: int, names: Sequence[str]) -> str | None:
    """The defendant a circumstance belongs to: the last of ``names`` its sentence names before the match, else
    the only one it names."""
    before = [(sentence.rfind(n, 0, at), n) for n in names if sentence.rfind(n, 0, at) >= 0]
    if before:
        return max(before)[1]
    inside = [n for n in names if n in sentence]
    return inside[0] if len(inside) == 1 else None


def _tier(name: str, m: re.Match, sentence: str, rest: str) -> str:
    """``certain`` or ``possible`` for the match ``m`` of ``name``'s rule in ``sentence``; ``rest``: the facts
    from the match on (a surrender's confession may come sentences later)."""
    word = m.group() == name or m.group() in ("自首", "坦白", "立功", "从犯", "认罪认罚")
    if word and name != "累犯" and name != "未遂" and _ASSESSED.search(sentence) and not (
            name == "认罪认罚" and _SIGNED.search(sentence)):
        return "possible"
    if name == "自首" and m.group() != "自首" and "未掌握" not in m.group():
        admitted = _ADMITTED if re.match(r"主动|自动", m.group()) else _CONFESSION  # a bare 投案: a confession
        return "certain" if admitted.search(rest) else "possible"
    if name == "坦白" and m.group() == "坦白":
        return "certain" if _CONFESSION.search(sentence) else "possible"
    if name == "认罪认罚":
        return "certain" if _SIGNED.search(sentence) else "possible"
    return "certain"


def find_circumstances(facts: str, defendants: Sequence[str] | None = None,
                       tiers: Sequence[str] = ("certain",)) -> list[Circumstance]:
    """The circumstances of :data:`NAMES` the facts state, in that order, each once per defendant (its first
    certain evidence, else its first possible one). ``tiers``: those returned (default the certain ones, the
    only ones a draft states; :data:`TIERS` for all). ``defendants``: the names the facts give (default:
    ``defendants.defendants_in_facts``); with several, each circumstance carries the one its sentence names
    (None when it names none)."""
    bad = [t for t in tiers if t not in TIERS]
    if bad:
        raise ValueError(f"tiers: unknown tier {bad[0]!r} (expected one of {TIERS})")
    from legalrag.judgment.defendants import defendants_in_facts

    text = (facts or "")[:MAX_CHARS]
    names = list(defendants_in_facts(text) if defendants is None else defendants)
    several = len(names) > 1
    sentences = _sentences(text)
    found: dict[tuple[str, str | None], Circumstance] = {}
    for off, s in sentences:
        if _CLAIM.search(s):
            continue
        for name, pat in _RULES.items():
            for m in pat.finditer(s):
                if _negated(s, m.start()):
                    continue
                who = _defendant(s, m.start(), names) if several else None
                tier = _tier(name, m, s, text[off + m.start():])
                have = found.get((name, who))
                if have is None or (have.tier == "possible" and tier == "certain"):
                    found[(name, who)] = Circumstance(name, s.strip(), off + m.start(), off + m.end(), m.group(),
                                                      who, tier)
    if not any(n == "累犯" for n, _ in found):
        r = _recidivism(text, sentences)
        if r is not None:
            found[("累犯", None)] = r
    for name, who in list(found):  # 第六十七条第三款: 坦白 only without 自首; a possible 自首 leaves it possible
        surrender = [found[k] for k in (("自首", who), ("自首", None)) if k in found]
        if name == "坦白" and surrender:
            if any(c.tier == "certain" for c in surrender):
                del found[(name, who)]
            else:
                found[(name, who)] = replace(found[(name, who)], tier="possible")
    order = {n: i for i, n in enumerate(NAMES)}
    return sorted((c for c in found.values() if c.tier in tiers), key=lambda c: (order[c.name], c.start))


def circumstance_names(facts: str) -> set[str]:
    return {c.name for c in find_circumstances(facts)}


# ------------------------------------------------------------------------------------ gold labels

_GOLD: dict[str, re.Pattern] = {
    "自首": re.compile(r"自首|自动投案|主动投案"),
    "坦白": re.compile(r"坦白|如实供述|如实交代"),
    "立功": re.compile(r"立功"),
    "累犯": re.compile(r"累犯"),
    "从犯": re.compile(r"从犯"),
    "未遂": re.compile(r"未遂"),
    "认罪认罚": re.compile(r"认罪认罚|具结书"),
}
# the provisions a court cites for each circumstance (the citing clause of its reasoning)
_GOLD_CITED: dict[str, re.Pattern] = {
    "自首": re.compile(r"第六十七条(?:第[一二三]款[、，]?)*第[一二]款"),
    "坦白": re.compile(r"第六十七条(?:第[一二三]款[、，]?)*第三款"),
    "立功": re.compile(r"第六十八条"),
    "累犯": re.compile(r"第六十五条"),
    "从犯": re.compile(r"第二十七条"),
    "未遂": re.compile(r"第二十三条"),
    "认罪认罚": re.compile(r"刑事诉讼法》?第十五条"),
}


def stated_in_reasoning(reasoning: str) -> set[str]:
    """The circumstances a court's reasoning (本院认为, with its citing clause) finds: those whose provision
    it cites (第六十七条第三款 for 坦白), and those it states and does not deny anywhere (a reasoning that says
    ``不能认定为自首`` finds no 自首 unless it cites 第六十七条第一款). 坦白 is a truthful confession found
    without 自首, as 第六十七条第三款 defines it. These are the gold labels the extractor is measured against."""
    text = re.sub(r"第([一二三四五六七八九十]+)、([一二三四五六七八九十]+)款", r"第\1款、第\2款", reasoning or "")
    text = re.sub(r"(第六十七条(?:第[一二三]款)?)、(第[一二三]款)", r"\1\2", text)
    out = set()
    for name, pat in _GOLD.items():
        hits = [m for m in pat.finditer(text)]
        if hits and not any(_negated(text, m.start()) for m in hits):
            out.add(name)
    for name, pat in _GOLD_CITED.items():
        if pat.search(text):
            out.add(name)
    if "自首" in out and not _GOLD_CITED["坦白"].search(text):
        out.discard("坦白")
    return out
