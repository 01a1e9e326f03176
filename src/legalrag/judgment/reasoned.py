"""Draft a judgment around a predicted structure: the model writes only the reasoning (本院认为).

The structure predictor decides charges, articles, term, fine and probation; the drafter puts that decision
into the ``judgment_reasoning`` prompt as what the reasoning must justify, asks the model for a JSON reply
(``ReasoningReply``, validated with ``legalrag.llm.structured``), and assembles the document itself:
heading, facts, the model's reasoning, the citing clause of the predicted articles and the result section in
the court's format (``compose.py``). Every draft therefore parses and states the predicted decision.

The model can disagree only through the reply's ``disagree`` flag (with the field and a reason), which is
recorded and counted, never acted on. Without an LLM (``llm=None``) the reasoning is a template written from
the structure. A reply that cannot be parsed after the retries is recorded and the template reasoning is used,
so a draft is never lost.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Optional

from pydantic import BaseModel, ConfigDict, Field

from legalrag.errors import InputError
from legalrag.judgment.compose import compose_document, fine_phrase, months_phrase, template_reasoning
from legalrag.judgment.extract import extract_fields
from legalrag.judgment.grounding import ground_reasoning
from legalrag.judgment.predict import StructurePredictor
from legalrag.judgment.sections import split_sections
from legalrag.judgment.structure import Structure
from legalrag.numerals import to_chinese

MAX_PROMPT_FACT_CHARS = 700


class ReasoningReply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reasoning: str = Field(min_length=10, description="本院认为 paragraph")
    disagree: bool = False
    disagree_field: Optional[Literal["charges", "articles", "prison", "fine", "probation"]] = None
    disagree_reason: str = ""


@dataclass(frozen=True)
class ReasonedDraft:
    document: str
    structure: Structure
    reasoning: str
    source: str  # "llm", "template" (no LLM) or "template-fallback" (the LLM reply could not be parsed)
    disagreement: Mapping[str, str] | None = None
    error: str | None = None
    notes: tuple[str, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    law_versions: Any = None  # temporal.LawVersions: the version of each article applied (刑法第十二条)

    @property
    def parsed(self) -> bool:
        return split_sections(self.document).parsed

    def to_dict(self) -> dict:
        return {"document": self.document, "structure": self.structure.to_dict(), "reasoning": self.reasoning,
                "source": self.source, "disagreement": self.disagreement, "error": self.error,
                "notes": list(self.notes), "parsed": self.parsed,
                "fields": extract_fields(self.document).to_dict(), "timings": dict(self.timings),
                "law_versions": self.law_versions.to_dict() if self.law_versions is not None else None}


def decision_text(s: Structure) -> str:
    """The predicted decision in words, as the prompt states it."""
    lines = ["罪名：" + "、".join(c.name for c in s.charges if c.listed)]
    if s.article_numbers:
        from legalrag.judgment.compose import articles_clause, circumstance_paragraphs

        lines.append("适用：" + articles_clause(s.article_numbers, circumstance_paragraphs(s))[2:-3])
    months = s.prison.value or 0
    lines.append("刑罚：" + (months_phrase(months) if months else "免予刑事处罚")
                 + ("，适用缓刑" if s.probation.value else "，不适用缓刑"))
    lines.append("罚金：" + (fine_phrase(s.fine.value) if s.fine.value else "不判处罚金"))
    return "\n".join(lines)


def circumstances_text(s: Structure) -> str:
    """The circumstances the prompt lets the model state: the statutory ones the extractor found, each with the
    sentence of the facts that shows it, and the other rule features (退赔, 谅解 ...) with their words."""
    from legalrag.judgment.circumstances import NAMES

    out = [f"{c.name}（事实原文：“{c.sentence[:80]}”）" for c in s.stated_circumstances]
    for name in s.features.circumstances:
        if name in NAMES:
            continue
        ev = s.features.evidence(name, 1)
        out.append(f"{name}（事实原文：“{ev[0].text}”）" if ev else name)
    if "amount_total" in s.features.values:
        out.append(f"涉案金额约{int(s.features.values['amount_total'])}元")
    if "drug_grams" in s.features.values:
        out.append(f"毒品数量约{s.features.values['drug_grams']:g}克")
    return "；".join(out) or "（未识别出特别情节）"


class ReasonedDrafter:
    """``predictor`` decides, ``llm`` (any ``legalrag.llm.base.LLM``, or None) writes the reasoning;
    ``charge_reader`` (a ``charge_llm.ChargeReader``, or None) checks the charges the predictor is not sure of."""

    def __init__(self, predictor: StructurePredictor, llm=None, *, max_tokens: int = 320, retries: int = 1,
                 max_fact_chars: int = MAX_PROMPT_FACT_CHARS, charge_reader=None):
        self.predictor, self.llm, self.charge_reader = predictor, llm, charge_reader
        self.max_tokens, self.retries, self.max_fact_chars = max_tokens, retries, max_fact_chars

    def messages(self, facts: str, s: Structure) -> list[dict[str, str]]:
        from legalrag.prompts import load_prompt

        return list(load_prompt("judgment_reasoning").render(
            facts=facts[: self.max_fact_chars], decision=decision_text(s), circumstances=circumstances_text(s)))

    def draft(self, facts: str, case_id: str | None = None, structure: Structure | None = None) -> ReasonedDraft:
        if not isinstance(facts, str) or not facts.strip():
            raise InputError("the case facts are empty", field="facts")
        t0 = time.perf_counter()
        s = structure or self.predictor.predict(facts, case_id, charge_reader=self.charge_reader)
        t_predict = time.perf_counter() - t0
        if s.undecided:
            raise InputError("the facts are too short to decide a judgment; top charges: " + "、".join(
                f"{c.name} (p={c.prob:.2f})" for c in s.charges if c.listed) + ". Give the facts of the case "
                "(what was done, when, the amounts or injuries, how the defendant behaved after)", field="facts")
        notes = list(s.notes)
        if len(facts) > self.max_fact_chars and self.llm is not None:
            notes.append(f"facts shown to the model truncated from {len(facts)} to {self.max_fact_chars} characters")
        source, disagreement, error = "template", None, None
        reasoning = template_reasoning(s)
        if self.llm is not None:
            from legalrag.llm.structured import StructuredOutputError, structured_call

            try:
                reply = structured_call(self.llm, self.messages(facts, s), ReasoningReply, self.retries,
                                        max_tokens=self.max_tokens).value
                reasoning, removed = ground_reasoning(reply.reasoning, facts, s)
                source = "llm"
                if removed:
                    notes.append("removed from the model's reasoning, as the facts do not state it: "
                                  + "、".join(removed))
                if reply.disagree:
                    disagreement = {"field": reply.disagree_field or "unspecified", "reason": reply.disagree_reason}
            except StructuredOutputError as exc:
                source, error = "template-fallback", str(exc)[:300]
                notes.append("the model's reply could not be parsed; the template reasoning is used")
        t_generate = time.perf_counter() - t0 - t_predict
        return ReasonedDraft(compose_document(facts, reasoning, s), s, reasoning, source, disagreement, error,
                             tuple(notes), {"predict": round(t_predict, 3), "generate": round(t_generate, 3)})
