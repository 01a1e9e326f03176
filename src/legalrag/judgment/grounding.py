"""Drafts that state only what the facts support: circumstances, paragraphs and names.

- **Circumstances** (自首, 坦白, 累犯, 退赃退赔, 谅解, 未成年 ...): a draft's reasoning may state one only when the
  facts state it (the rule features of ``features.py``, the same ones the structure model reads and shows as its
  evidence). :func:`ground_reasoning` drops every clause of a reasoning that states an unsupported one and says
  which; :func:`unsupported_circumstances` is the measure (negated mentions such as 不构成自首 do not count).
- **Paragraphs**: a reasoning that carries its own result (``判决结果：被告人……``) is cut before it, since the
  result section is assembled from the structure; :func:`dedupe_paragraphs` drops any paragraph already stated
  and :func:`repeated_paragraphs` counts them.
- **Names**: the prosecuting procuratorate is read from the facts (``XX市XX区人民检察院指控``); when the facts
  name none, the heading keeps a marked placeholder (``公诉机关XX人民检察院``) instead of a nameless one.
"""

from __future__ import annotations

import re
from typing import Sequence

from legalrag.judgment.features import extract_features

# the circumstances a draft may state only when the facts do
CHECKED = ("自首", "坦白", "认罪认罚", "当庭自愿认罪", "退赃退赔", "赔偿", "谅解", "累犯", "前科", "缓刑考验期内",
           "从犯", "主犯", "未遂", "中止", "未成年", "立功")
PLACEHOLDER = "XX"
_PROCURATORATE = re.compile(r"([\u4e00-\u9fa5]{2,24}?人民检察院)")
_LEADING = re.compile(r"^(?:公诉机关|经|由|本案由|起诉书指控|指控)")
_CLAUSE = re.compile(r"[^，。；！？,;\n]+[，。；！？,;\n]?")
_RESULT_IN_REASONING = re.compile(r"(?:判决结果|判决如下|判决主文)[:：]|(?:^|\n)[ \t]*(?:一、)?被告人[^\n，。；]{1,20}犯[^\n，。；]{1,30}罪[，,]\s*判处")


def stated(text: str) -> set[str]:
    """The circumstances of :data:`CHECKED` that ``text`` states (not negated)."""
    f = extract_features(text)
    return {n for n in CHECKED if f.present(n)}


def supported(facts: str, structure=None) -> set[str]:
    """The circumstances the facts state: the statutory ones (自首, 坦白, 立功, 累犯, 从犯, 未遂, 认罪认罚) as the
    circumstance extractor found them (circumstances.py, each with its sentence; with a structure, those it
    states, ``Structure.stated_circumstances``), the others as the rule features found them."""
    from legalrag.judgment.circumstances import NAMES, find_circumstances

    feats = structure.features if structure is not None else extract_features(facts)
    found = set(structure.circumstance_names) if structure is not None and hasattr(structure, "circumstances") \
        else {c.name for c in find_circumstances(facts)}
    return {n for n in CHECKED if n not in NAMES and feats.present(n)} | found


def unsupported_circumstances(text: str, facts: str, structure=None) -> list[str]:
    return sorted(stated(text) - supported(facts, structure))


def ground_reasoning(reasoning: str, facts: str, structure=None) -> tuple[str, list[str]]:
    """(the reasoning without its result part and without every clause that states a circumstance the facts do
    not, the circumstances removed)."""
    m = _RESULT_IN_REASONING.search(reasoning)
    text = reasoning[: m.start()] if m and m.start() > 0 else reasoning
    allowed = supported(facts, structure)
    kept, removed = [], []
    for clause in _CLAUSE.findall(text):
        bad = stated(clause) - allowed
        if bad:
            removed += sorted(bad)
            continue
        kept.append(clause)
    out = "".join(kept).strip()
    return (out if out else text.strip()), sorted(set(removed))


def _norm(paragraph: str) -> str:
    return re.sub(r"[\s，。；：:,.;、“”\"'（）()]", "", paragraph)


def repeated_paragraphs(document: str, min_chars: int = 8) -> int:
    """How many paragraphs (lines) of ``document`` repeat an earlier one, or restate the result's sentence."""
    seen: list[str] = []
    count = 0
    for line in document.split("\n"):
        n = _norm(line)
        if len(n) < min_chars:
            continue
        if n in seen or any(len(n) >= 16 and (n in s or s in n) and min(len(n), len(s)) >= 16 for s in seen):
            count += 1
        seen.append(n)
    return count


def _repeats(n: str, seen: Sequence[str]) -> bool:
    return n in seen or any(len(n) >= 16 and (n in s or s in n) and min(len(n), len(s)) >= 16 for s in seen)


def dedupe_paragraphs(document: str, min_chars: int = 8) -> str:
    """``document`` without the lines :func:`repeated_paragraphs` counts (a line stated before, or restating
    an earlier line's sentence), and without a sentence repeated inside one line (the judgment line written
    twice: ``一、被告人张某犯盗窃罪，判处……。一、被告人张某犯盗窃罪，判处……。``)."""
    seen: list[str] = []
    out = []
    for line in document.split("\n"):
        line = _dedupe_sentences(line)
        n = _norm(line)
        if len(n) >= min_chars and _repeats(n, seen):
            continue
        if len(n) >= min_chars:
            seen.append(n)
        out.append(line)
    return "\n".join(out)


_SENTENCING = re.compile(r"被告人[^。，]{1,20}犯[^。，]{1,30}罪[，,]?(?:判处|决定执行|免予)")


def _dedupe_sentences(line: str) -> str:
    parts = re.findall(r"[^。]+。?", line)
    if len(parts) < 2:
        return line
    kept, seen = [], set()
    for p in parts:
        n = re.sub(r"^[一二三四五六七八九十]+、", "", _norm(p))
        if len(n) >= 16 and n in seen and _SENTENCING.search(p):  # only a judgment line; the facts stay as given
            continue
        seen.add(n)
        kept.append(p)
    return "".join(kept)


def procuratorate(facts: str) -> str:
    """The procuratorate the facts name (``XX市XX区人民检察院``), or a marked placeholder."""
    for m in _PROCURATORATE.finditer(facts[:600]):
        name = _LEADING.sub("", m.group(1))
        if len(name) > len("人民检察院"):
            return name
    return PLACEHOLDER + "人民检察院"


def defendant_names(names: Sequence[str]) -> str:
    """The defendants as the result names them, or a marked placeholder when the facts name none."""
    return "、".join(dict.fromkeys(names)) if names else PLACEHOLDER
