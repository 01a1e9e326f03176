"""Sentencing-relevant facts read from the facts of a criminal case by rules, each with its span.

What a court weighs when it fixes the term and the fine is mostly stated in the facts in a few fixed phrasings:
the amount involved (``人民币10万元``, ``价值一万二千元``, ``2.3万余元``), drug quantities (``甲基苯丙胺净重3.5克``),
the victims and defendants, and the statutory circumstances (自首, 坦白, 认罪认罚, 退赔, 谅解, 累犯, 从犯, 未遂,
未成年, 立功...). Every match keeps its character span in the facts, so a prediction built on it can show
the sentence it came from. A circumstance preceded by a negation (``不构成自首``, ``无前科``) is recorded as
negated and does not count.

Odd input is reported, never fatal: facts with no amount yield no amount features (``amount_max`` 0 and a
note); totals that disagree (two different ``共计`` sums) are flagged ``contradictory_amounts``; facts longer
than ``max_chars`` are read up to that length and a note says so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from legalrag.judgment.numbers import numbers_in

MAX_FACT_CHARS = 6000

_NUM = r"[0-9][0-9,，]*(?:\.[0-9]+)?|[零〇一二两三四五六七八九十百千万亿壹贰叁肆伍陆柒捌玖拾佰仟点]+"
_AMOUNT = re.compile(rf"(?:人民币|价值|共计|合计|总计|累计|计|金额|款)?\s*({_NUM})\s*(亿|万|千)?\s*余?\s*元")
_TOTAL_BEFORE = re.compile(r"(?:共计|合计|总计|累计|总价值|总额|共)[^，。；]{0,8}$")
_DRUG_WORDS = re.compile(r"毒品|甲基苯丙胺|冰毒|海洛因|大麻|氯胺酮|K粉|麻古|可卡因|吗啡|鸦片|摇头丸|MDMA|甲卡西酮")
_GRAMS = re.compile(rf"({_NUM})\s*(千克|公斤|克|kg|g)(?![a-zA-Z])", re.IGNORECASE)
_VICTIM = re.compile(r"被害人([\u4e00-\u9fa5]某{1,2}[0-9]?|[\u4e00-\u9fa5]{1,2}[0-9]{1,2}|[\u4e00-\u9fa5]{2,3}(?=[，。、；：（）和等的在]))")
_DEFENDANT = re.compile(r"被告人([\u4e00-\u9fa5]某{1,2}[0-9]?|[\u4e00-\u9fa5]{1,2}[0-9]{1,2}|[\u4e00-\u9fa5]{2,3}(?=[，。、；：（）和等的在]))")
_DATE = re.compile(r"[0-9]{4}年[0-9]{1,2}月(?:[0-9]{1,2}日)?")
_NEGATION = re.compile(r"(?:不|无|未|没有|不能|不予|不具有|不具备|不属于|不成立|否认)[^，。；]{0,3}$")

# name -> pattern; names are the feature keys a model and a judge read.
CIRCUMSTANCES: dict[str, re.Pattern] = {
    "自首": re.compile(r"自首|主动投案|自动投案|投案"),
    "坦白": re.compile(r"坦白|如实供述|如实交代"),
    "认罪认罚": re.compile(r"认罪认罚|具结书"),
    "当庭自愿认罪": re.compile(r"当庭自愿认罪|当庭认罪|庭审中[^，。]{0,6}认罪|自愿认罪|供认不讳|无异议"),
    "退赃退赔": re.compile(r"退赃|退赔|退缴|退还|返还|追回|发还"),
    "赔偿": re.compile(r"赔偿"),
    "谅解": re.compile(r"谅解"),
    "累犯": re.compile(r"累犯|刑满释放"),
    "前科": re.compile(r"前科|曾因|曾于[^，。]{0,20}判处|被判处|行政拘留|劳动教养|强制隔离戒毒"),
    "缓刑考验期内": re.compile(r"缓刑考验期"),
    "从犯": re.compile(r"从犯|次要作用|辅助作用"),
    "主犯": re.compile(r"主犯|主要作用"),
    "共同犯罪": re.compile(r"伙同|共同|结伙|预谋|分工"),
    "未遂": re.compile(r"未遂|未得逞|未得手|当场识破|被当场抓获|意志以外"),
    "中止": re.compile(r"犯罪中止"),
    "未成年": re.compile(r"未成年|未满十八周岁|不满十八周岁|已满十六周岁|已满十四周岁"),
    "立功": re.compile(r"立功|检举|揭发"),
    "多次": re.compile(r"多次|[三四五六七八九十0-9]+次"),
    "入户": re.compile(r"入户"),
    "持械": re.compile(r"持刀|持械|凶器|匕首|砍刀"),
    "轻微伤": re.compile(r"轻微伤"),
    "轻伤": re.compile(r"轻伤"),
    "重伤": re.compile(r"重伤"),
    "死亡": re.compile(r"死亡|致死"),
    "醉酒": re.compile(r"醉酒|乙醇含量|酒精含量"),
    "扣押": re.compile(r"扣押|缴获|查获|收缴"),
    "数额巨大": re.compile(r"数额巨大|数额特别巨大|情节严重|情节特别严重"),
}


@dataclass(frozen=True)
class Match:
    """One rule match: the feature it supports, the value read (yuan, grams, 1 for a circumstance), the span."""

    name: str
    value: float
    start: int
    end: int
    text: str
    negated: bool = False

    def to_dict(self) -> dict:
        return {"name": self.name, "value": self.value, "span": [self.start, self.end], "text": self.text,
                "negated": self.negated}


@dataclass(frozen=True)
class FactFeatures:
    """Everything the rules read from one case's facts (``matches``) and what it summarises to (``values``)."""

    matches: tuple[Match, ...] = ()
    values: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def present(self, name: str) -> bool:
        return self.values.get(name, 0.0) > 0

    @property
    def circumstances(self) -> list[str]:
        return [n for n in CIRCUMSTANCES if self.present(n)]

    def evidence(self, name: str, limit: int = 3) -> list[Match]:
        """The non-negated matches behind feature ``name`` (amount features share the matches named ``amount``)."""
        key = "amount" if name.startswith("amount") else ("drug_grams" if name.startswith("drug") else name)
        return [m for m in self.matches if m.name == key and not m.negated][:limit]

    def to_dict(self) -> dict:
        return {"values": dict(self.values), "notes": list(self.notes),
                "matches": [m.to_dict() for m in self.matches]}


def _number(token: str) -> float | None:
    nums = numbers_in(token.replace(",", "").replace("，", ""))
    return nums[0] if len(nums) == 1 else None


_UNIT = {"万": 10_000.0, "千": 1_000.0, "亿": 100_000_000.0, "千克": 1000.0, "公斤": 1000.0, "kg": 1000.0}


def _amounts(text: str) -> tuple[list[Match], list[float]]:
    out, totals = [], []
    for m in _AMOUNT.finditer(text):
        value = _number(m.group(1))
        if value is None or value <= 0:
            continue
        value *= _UNIT.get(m.group(2) or "", 1.0)
        out.append(Match("amount", value, m.start(1), m.end(), text[m.start(1):m.end()]))
        if _TOTAL_BEFORE.search(text[max(0, m.start() - 12):m.start(1)]):
            totals.append(value)
    return out, totals


def _drug_grams(text: str) -> list[Match]:
    out = []
    for sentence in re.finditer(r"[^。；]+", text):
        s = sentence.group()
        if not _DRUG_WORDS.search(s):
            continue
        for m in _GRAMS.finditer(s):
            value = _number(m.group(1))
            if value is None:
                continue
            value *= _UNIT.get(m.group(2).lower(), 1.0)
            start = sentence.start() + m.start()
            out.append(Match("drug_grams", value, start, sentence.start() + m.end(), m.group()))
    return out


def _circumstances(text: str) -> list[Match]:
    out = []
    for name, pat in CIRCUMSTANCES.items():
        for m in pat.finditer(text):
            before = text[max(0, m.start() - 6):m.start()]
            out.append(Match(name, 1.0, m.start(), m.end(), m.group(), negated=bool(_NEGATION.search(before))))
    return out


def _names(pattern: re.Pattern, text: str, kind: str) -> list[Match]:
    seen: dict[str, Match] = {}
    for m in pattern.finditer(text):
        seen.setdefault(m.group(1), Match(kind, 1.0, m.start(), m.end(), m.group()))
    return list(seen.values())


def extract_features(facts: str, *, max_chars: int = MAX_FACT_CHARS) -> FactFeatures:
    """Read the features of ``facts`` (see the module docstring); never raises on odd text."""
    notes = []
    text = facts or ""
    if len(text) > max_chars:
        notes.append(f"facts truncated from {len(text)} to {max_chars} characters for feature extraction")
        text = text[:max_chars]
    amounts, totals = _amounts(text)
    drugs = _drug_grams(text)
    circ = _circumstances(text)
    victims = _names(_VICTIM, text, "victim")
    defendants = _names(_DEFENDANT, text, "defendant")
    values: dict[str, float] = {}
    if amounts:
        vals = [a.value for a in amounts]
        distinct = sorted(set(vals))
        values["amount_max"] = max(vals)
        values["amount_sum"] = sum(distinct)
        values["amount_count"] = float(len(vals))
        values["amount_total"] = max(totals) if totals else max(vals)
        values["amount_log"] = math.log1p(values["amount_total"])
        if len(set(totals)) > 1:
            notes.append("contradictory amounts: different totals stated "
                         + ", ".join(f"{t:g}" for t in sorted(set(totals))) + "; the largest is used")
            values["contradictory_amounts"] = 1.0
    else:
        notes.append("no amount in yuan found in the facts")
    if drugs:
        values["drug_grams"] = max(d.value for d in drugs)
        values["drug_log"] = math.log1p(values["drug_grams"])
    values["victims"] = float(len(victims))
    values["defendants"] = float(max(1, len(defendants)))
    values["incidents"] = float(len(set(_DATE.findall(text))))
    values["fact_chars"] = float(len(text))
    for name in CIRCUMSTANCES:
        hits = [m for m in circ if m.name == name and not m.negated]
        if hits:
            values[name] = float(len(hits))
    matches = tuple(sorted(amounts + drugs + circ + victims + defendants, key=lambda m: (m.start, m.name)))
    return FactFeatures(matches, values, tuple(notes))


# Feature groups (for ablations and for the model's column list); a column absent from a case is 0.
GROUPS: dict[str, tuple[str, ...]] = {
    "amounts": ("amount_max", "amount_sum", "amount_count", "amount_total", "amount_log", "contradictory_amounts"),
    "drugs": ("drug_grams", "drug_log"),
    "people": ("victims", "defendants", "incidents", "fact_chars"),
    "mitigating": ("自首", "坦白", "认罪认罚", "当庭自愿认罪", "退赃退赔", "赔偿", "谅解", "从犯", "未遂", "中止",
                   "未成年", "立功"),
    "aggravating": ("累犯", "前科", "缓刑考验期内", "主犯", "共同犯罪", "多次", "入户", "持械", "轻微伤", "轻伤",
                    "重伤", "死亡", "醉酒", "扣押", "数额巨大"),
}
COLUMNS: tuple[str, ...] = tuple(c for cols in GROUPS.values() for c in cols)
