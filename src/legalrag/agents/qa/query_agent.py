"""Query agent: the question (and any clarifications) -> prioritised search intents, one per legal issue."""

from __future__ import annotations

from typing import Sequence

from legalrag.agents.qa._llm import ask_json
from legalrag.prompts import render_prompt
from legalrag.agents.qa.models import QueryPlan, SearchIntent
from legalrag.errors import StructuredOutputError
from legalrag.llm.base import LLM


def plan_queries(llm: LLM, question: str, sources: Sequence[str], clarifications: Sequence[str] = (),
                 max_intents: int = 3) -> tuple[list[SearchIntent], str | None]:
    """Intents sorted by priority, targeting only configured sources. On a malformed model reply the question
    itself becomes the single intent and the error is returned for the trajectory."""
    messages = render_prompt("qa_query", question=question, sources=", ".join(sources) or "none",
                      clarifications="\n".join(f"- {c}" for c in clarifications) or "(none)",
                      max_intents=max_intents)
    try:
        plan = ask_json(llm, messages, QueryPlan, max_tokens=150)
        intents, error = plan.intents, None
    except StructuredOutputError as exc:
        intents, error = [], str(exc)
    cleaned = []
    for intent in sorted(intents, key=lambda i: i.priority)[:max_intents]:
        source = intent.source if intent.source in sources else "any"
        if intent.query.strip() and all(intent.query.strip() != c.query for c in cleaned):
            cleaned.append(SearchIntent(query=intent.query.strip(), source=source, priority=intent.priority))
    if not cleaned:
        cleaned = [SearchIntent(query=question.strip()[:300], source="any", priority=1)]
    return cleaned, error
