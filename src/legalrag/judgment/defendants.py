"""Several defendants: who is tried (read from the facts), what each was sentenced to (read from a gold
judgment), and what the facts say about each one.

The JuDGE evaluator sums the *distinct* term phrases of a result section (``extract.py``): two defendants
sentenced to 有期徒刑六个月 each count six months, one sentenced to three years and one to one year count
four years. So a result stating one clause per defendant, with each defendant's own predicted term, is scored
exactly as the court's result is; a single predicted total is not (it cannot collapse equal terms).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from legalrag.judgment.extract import _fine_phrases, _term_phrases, term_months
from legalrag.judgment.numbers import numbers_in
from legalrag.judgment.sections import split_sections

# A defendant's name as facts and judgments write it: 张某, 李某某, 王某甲, 陈1, or a plain two- or
# three-character name; several may share one 被告人 (被告人张某、李某).
_NAME = r"[\u4e00-\u9fa5](?:某{1,2}[甲乙丙丁戊0-9]?|[\u4e00-\u9fa5]{1,2}?)"
_LISTED = re.compile(rf"被告人((?:{_NAME}[、和及与])*{_NAME})(?=[，。、；：（）\s和等的在因于将与伙被从到向对持驾犯系供归如是均]|$)")
# Characters that start the word after 被告人 when it is no name (被告人的供述, 被告人系初犯, 被告人归案后...).
_NOT_A_NAME = set("的供系在对及是自归到当犯放驾无均等之人所因具辩认已称主从如向于被将与持亦虽既经其")
_SENTENCED = re.compile(r"被告人([\u4e00-\u9fa5]{1,4}?)犯")

# Circumstances that differ between co-defendants, read from the sentences that name each one.
LOCAL = {
    "主犯": re.compile(r"主犯|主要作用|起意|纠集|指使"),
    "从犯": re.compile(r"从犯|次要作用|辅助作用"),
    "自首": re.compile(r"自首|投案"),
    "坦白": re.compile(r"坦白|如实供述"),
    "累犯": re.compile(r"累犯|刑满释放|曾因|前科"),
    "谅解": re.compile(r"谅解|赔偿|退赔|退赃"),
}
DEFENDANT_COLUMNS = ("def_count", "def_index", "def_mention_share") + tuple("def_" + k for k in LOCAL)


def defendants_in_facts(facts: str) -> list[str]:
    """The names following 被告人 in the facts, in order of first mention, kept when the facts name them at
    least twice (a name seen once is usually a co-offender tried elsewhere or a misread phrase)."""
    found: list[str] = []
    for m in _LISTED.finditer(facts or ""):
        for name in re.split(r"[、和及与]", m.group(1)):
            if len(name) >= 2 and name[0] not in _NOT_A_NAME and name not in found:
                found.append(name)
    return [n for n in found if facts.count(n) >= 2]


def sentenced_defendants(judgment: str) -> list[str]:
    """The defendants a judgment's result section sentences (``被告人X犯…罪``), in order."""
    result = split_sections(judgment).result or judgment
    return list(dict.fromkeys(_SENTENCED.findall(result)))


@dataclass(frozen=True)
class DefendantSentence:
    name: str
    months: int | None  # the evaluator's reading of this defendant's clause (distinct term phrases summed)
    fine_yuan: int | None


def defendant_sentences(judgment: str) -> list[DefendantSentence]:
    """Each sentenced defendant's own term and fine, read from the stretch of the result that starts at
    ``被告人X犯`` and runs to the next defendant's (the evaluator's rules, applied per defendant)."""
    result = split_sections(judgment).result or judgment
    starts = [(m.start(), m.group(1)) for m in _SENTENCED.finditer(result)]
    out: dict[str, DefendantSentence] = {}
    for k, (pos, name) in enumerate(starts):
        if name in out or any(name.startswith(n) for n in out):
            continue
        end = next((p for p, n in starts[k + 1:] if n != name), len(result))
        clause = result[pos:end]
        phrases = list(dict.fromkeys(_term_phrases(clause)))
        months = sum(term_months(p) for p in phrases) if phrases else None
        fines = [numbers_in(p) for p in dict.fromkeys(_fine_phrases(clause))]
        fine = sum(int(n[0]) for n in fines if len(n) == 1) if fines else None
        if months is not None or fine is not None:  # a clause with no sentence is no defendant's (被告人X的犯罪…)
            out[name] = DefendantSentence(name, months, fine)
    return list(out.values())


def local_features(facts: str, name: str, names: list[str]) -> dict[str, float]:
    """What distinguishes defendant ``name`` among ``names``: their count, its rank, its share of the name
    mentions, and the circumstances stated in the sentences that name it."""
    text = facts or ""
    sentences = [s for s in re.split(r"[。；]", text) if name in s]
    total = sum(text.count(n) for n in names) or 1
    row = {"def_count": float(len(names)), "def_index": float(names.index(name)) if name in names else 0.0,
           "def_mention_share": text.count(name) / total}
    for key, pat in LOCAL.items():
        row["def_" + key] = float(sum(bool(pat.search(s)) for s in sentences))
    return row


def defendant_rows(facts: str, names: list[str]) -> list[tuple[str, dict[str, float]]]:
    """(name, features) per defendant tried: one row each when the facts name several, else a single row."""
    if len(names) >= 2:
        return [(n, local_features(facts, n, names)) for n in names]
    name = names[0] if names else ""
    return [(name, local_features(facts, name, [name]) if name else single_defendant())]


def single_defendant() -> dict[str, float]:
    return {c: 0.0 for c in DEFENDANT_COLUMNS} | {"def_count": 1.0, "def_mention_share": 1.0}
