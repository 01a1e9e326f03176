"""Query agent: the question (and any clarifications) -> prioritised search intents, one per legal issue.

Every intent is in the language of the texts of the source it goes to (a paraphrase in another language finds
nothing in a BM25 index), and the question itself is always searched as well, first, so a plan the model gets
wrong never leaves a run with less than the question would have found.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from legalrag.agents.qa._llm import ask_json
from legalrag.agents.qa.language import describe, language_name, target_lang, text_lang
from legalrag.prompts import render_prompt
from legalrag.agents.qa.models import QueryPlan, SearchIntent
from legalrag.errors import LegalRagError
from legalrag.llm.base import LLM


def plan_queries(llm: LLM, question: str, sources: Sequence[str], clarifications: Sequence[str] = (),
                 max_intents: int = 3, langs: Mapping[str, str] | None = None) -> tuple[list[SearchIntent], str | None]:
    """The question as the first intent, then the model's intents sorted by priority, targeting only configured
    sources and written in the language ``langs`` gives for their source (default: the question's). An intent
    in another language is dropped and named in the returned note; on a malformed model reply the note is the
    error, for the trajectory."""
    qlang = text_lang(question)
    langs = dict(langs) if langs is not None else {s: qlang for s in sources}
    messages = render_prompt("qa_query", question=question, sources=", ".join(sources) or "none",
                      clarifications="\n".join(f"- {c}" for c in clarifications) or "(none)",
                      max_intents=max_intents, languages=describe(langs),
                      question_language=language_name(qlang))
    notes: list[str] = []
    try:
        plan = ask_json(llm, messages, QueryPlan, max_tokens=150)
        intents = plan.intents
    except LegalRagError as exc:  # a malformed reply, or a model call that failed or hung
        intents = []
        notes.append(str(exc))
    cleaned = [SearchIntent(query=question.strip()[:300], source="any", priority=1)]
    for intent in sorted(intents, key=lambda i: i.priority):
        if len(cleaned) > max_intents:
            break
        source = intent.source if intent.source in sources else "any"
        query = intent.query.strip()
        if not query or any(query == c.query for c in cleaned):
            continue
        want = target_lang(source, langs, qlang)
        if text_lang(query) != want:
            notes.append(f"dropped {query!r}: not in {language_name(want)}, the language of source {source!r}")
            continue
        cleaned.append(SearchIntent(query=query, source=source, priority=intent.priority))
    return cleaned, "; ".join(notes) or None
