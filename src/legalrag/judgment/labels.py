"""Labelled cases for training the structure predictors: facts plus what the gold judgment decided.

Labels are read from the gold judgment with the benchmark's own extractor (``extract.py``), so what the
predictors learn is exactly what ``legalrag eval judgment`` scores. A judgment that yields no charge or no
sentence (no result section, or text the extractor cannot read) is skipped and counted, never guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from legalrag.errors import InputError
from legalrag.judgment.defendants import defendant_sentences
from legalrag.judgment.extract import DEATH_MONTHS, LIFE_MONTHS, extract_fields


@dataclass(frozen=True)
class LabelledCase:
    id: str
    facts: str
    charges: tuple[str, ...]
    articles: tuple[int, ...]
    prison_months: int | None
    fine_yuan: int | None
    probation: bool
    # (name, months, fine) per sentenced defendant when the result sentences several (else empty)
    defendants: tuple[tuple[str, int | None, int | None], ...] = ()
    # "judge": the gold judgment's full labels; "cail": CAIL2018 labels (cail.py), which list only the charges'
    # own articles and say nothing of probation
    source: str = "judge"

    @property
    def complete(self) -> bool:
        """Whether the labels hold the general-part articles and the probation decision."""
        return self.source != "cail"

    @property
    def prison_capped(self) -> float:
        """Months for regression: a death sentence counts as life (240) so one case cannot dominate a fit."""
        if self.prison_months is None:
            return 0.0
        return float(min(self.prison_months, LIFE_MONTHS) if self.prison_months != DEATH_MONTHS else LIFE_MONTHS)

    def to_dict(self) -> dict:
        out = {"id": self.id, "charges": list(self.charges), "articles": list(self.articles),
               "prison_months": self.prison_months, "fine_yuan": self.fine_yuan, "probation": self.probation,
               "defendants": [list(d) for d in self.defendants]}
        if self.source != "judge":
            out["source"] = self.source
        return out


@dataclass(frozen=True)
class LabelReport:
    cases: tuple[LabelledCase, ...]
    skipped: tuple[tuple[str, str], ...]  # (id, why)


def label_case(case_id: str, facts: str, judgment: str) -> LabelledCase | str:
    """The labels of one case, or the reason it cannot be used."""
    if not isinstance(judgment, str) or not judgment.strip():
        return "empty judgment"
    fields = extract_fields(judgment)
    if not fields.charges:
        return "no charge could be read from the judgment"
    if fields.prison_months is None:
        return "no sentence could be read from the judgment"
    if not facts or not facts.strip():
        return "empty facts"
    result = fields.sections.result or judgment
    several = defendant_sentences(judgment)
    return LabelledCase(case_id, facts, tuple(fields.charges), tuple(fields.article_numbers), fields.prison_months,
                        fields.fine_yuan, "缓刑" in result,
                        tuple((d.name, d.months, d.fine_yuan) for d in several) if len(several) > 1 else ())


def label_cases(facts: Mapping[str, str], judgments: Mapping[str, str | None],
                ids: Sequence[str] | None = None) -> LabelReport:
    cases, skipped = [], []
    for case_id in ids if ids is not None else sorted(facts):
        if case_id not in judgments:
            skipped.append((case_id, "no judgment for this id"))
            continue
        got = label_case(case_id, facts.get(case_id, ""), judgments[case_id] or "")
        if isinstance(got, str):
            skipped.append((case_id, got))
        else:
            cases.append(got)
    return LabelReport(tuple(cases), tuple(skipped))


def load_facts(path: str | Path) -> dict[str, str]:
    """Case facts from JSON lines with an id (``text_id`` / ``id``) and the facts (``text`` / ``facts``)."""
    p = Path(path)
    if not p.exists():
        raise InputError("facts file not found; pass a JSONL file of {text_id|id, text|facts}", path=str(p))
    out: dict[str, str] = {}
    with p.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not JSON ({exc.msg})", path=str(p), line=lineno) from None
            case_id = rec.get("text_id", rec.get("id"))
            text = rec.get("text", rec.get("facts"))
            if case_id is None or not isinstance(text, str):
                raise InputError("each line needs an id (text_id or id) and the facts (text or facts)",
                                 path=str(p), line=lineno)
            out[str(case_id)] = text
    if not out:
        raise InputError("the facts file has no cases", path=str(p))
    return out


def sorted_split(ids: Sequence[str], n_train: int) -> tuple[list[str], list[str]]:
    """The first ``n_train`` ids in sorted order train, the rest are evaluated (the stated JuDGE split)."""
    ordered = sorted(ids)
    return ordered[:n_train], ordered[n_train:]
