"""The predicted structure of a criminal judgment (what :mod:`legalrag.judgment.predict` returns): charges and
articles with their probabilities and evidence, prison months, fine and probation with the features behind them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from legalrag.judgment.features import FactFeatures


@dataclass(frozen=True)
class Scored:
    """One predicted charge or article, its probability and why."""

    name: str
    prob: float
    evidence: Mapping[str, Any] = field(default_factory=dict)
    listed: bool = True  # False: a charge named in the facts but not in the charge list (kept, flagged)

    def to_dict(self) -> dict:
        return {"name": self.name, "prob": round(self.prob, 4), "listed": self.listed, "evidence": dict(self.evidence)}


@dataclass(frozen=True)
class Amount:
    """A predicted number (months or yuan) with the model's largest feature contributions and the neighbours'."""

    value: int | None
    raw: float | None = None
    prob: float | None = None  # for the fine: P(a fine is imposed)
    evidence: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"value": self.value, "raw": None if self.raw is None else round(self.raw, 2),
                "prob": None if self.prob is None else round(self.prob, 4), "evidence": dict(self.evidence)}


@dataclass(frozen=True)
class Structure:
    """The predicted decision for one case."""

    charges: tuple[Scored, ...]
    articles: tuple[Scored, ...]
    prison: Amount
    fine: Amount
    probation: Amount  # value 1 / 0
    defendants: tuple[str, ...]
    features: FactFeatures
    notes: tuple[str, ...] = ()
    low_confidence: bool = False
    # Several defendants, each with its own term and fine ({name, months, fine_yuan, features}); empty when one
    # sentence covers the case. ``prison.value`` is then the sum of the distinct terms (what the evaluator reads).
    sentences: tuple[Mapping[str, Any], ...] = ()
    # facts too short to decide (undecided.py): top charges with probabilities, no sentence, no article
    undecided: bool = False
    # the statutory circumstances the facts state, each with its sentence (circumstances.py): the only ones a
    # draft may state
    circumstances: tuple[Any, ...] = ()

    @property
    def stated_circumstances(self) -> tuple[Any, ...]:
        """The circumstances a draft states: those the extractor found whose provision the predicted articles
        cite (the rules' reading and the model's agree: 坦白 with 第六十七条), and 认罪认罚, which the Criminal
        Law does not define (its provision is the Criminal Procedure Law's)."""
        arts = {str(a.name) for a in self.articles}
        return tuple(c for c in self.circumstances
                     if c.provision[0] != "中华人民共和国刑法" or c.provision[1] in arts)

    @property
    def circumstance_names(self) -> list[str]:
        """The names of :attr:`stated_circumstances`."""
        return list(dict.fromkeys(c.name for c in self.stated_circumstances))

    @property
    def charge_names(self) -> list[str]:
        return [c.name for c in self.charges]

    @property
    def article_numbers(self) -> list[int]:
        return sorted(int(a.name) for a in self.articles)

    def to_dict(self) -> dict:
        return {"charges": [c.to_dict() for c in self.charges], "articles": [a.to_dict() for a in self.articles],
                "prison_months": self.prison.to_dict(), "fine_yuan": self.fine.to_dict(),
                "probation": self.probation.to_dict(), "defendants": list(self.defendants),
                "features": self.features.to_dict(), "notes": list(self.notes),
                "low_confidence": self.low_confidence, "sentences": [dict(x) for x in self.sentences],
                "undecided": self.undecided, "circumstances": [c.to_dict() for c in self.circumstances]}
