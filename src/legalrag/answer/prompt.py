"""The answer prompt: the evidence as the model reads it, the dialogue so far, and the messages fitted to the
model's context.

The prompts with no quoted basis (``prompts/answer.md``, or the shorter ``answer_brief.md``) put the fixed
instructions first (a runtime's prompt cache keeps them between calls), then the dialogue so far, the evidence and
the question. Each article enters the prompt cut to the clauses that match the query, within ``evidence_tokens``;
a guided answer's prompt (``prompts/answer_quoted.md``) gives the model its basis's quotes only.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from legalrag.citecheck import citation_label
from legalrag.errors import InputError
from legalrag.types import DEFAULTS, STYLES, AnswerSettings, Hit, Step, Turn

QUOTED_PROMPT = "answer_quoted"  # the guided answer around a quoted basis: conclusion, steps, when to see a lawyer


def format_sources(hits: Sequence[Hit], max_chars: int) -> str:
    blocks = []
    for i, h in enumerate(hits, 1):
        text = " ".join(h.document.text.split())
        if len(text) > max_chars:
            text = text[:max_chars] + "…"
        blocks.append(f"[{i}] {citation_label(h.document)}\n{text}")
    return "\n\n".join(blocks)


ROLE_LABELS = {"zh": {"user": "用户", "assistant": "助手"}, "en": {"user": "User", "assistant": "Assistant"}}


def check_turns(turns: Sequence[Turn]) -> list[Turn]:
    turns = list(turns)
    for i, t in enumerate(turns):
        if t.role not in ("user", "assistant"):
            raise InputError(f"turn {i + 1} has role {t.role!r}; use 'user' or 'assistant'")
    if not any(t.role == "user" and t.content.strip() for t in turns):
        raise InputError("the conversation has no user question")
    return turns


def full_context(turns: Sequence[Turn], lang: str = "zh", max_chars: int = 2000) -> str:
    """Every turn labelled by role; older turns are dropped first when over ``max_chars``."""
    labels = ROLE_LABELS.get(lang, ROLE_LABELS["en"])
    lines = [f"{labels[t.role]}: {' '.join(t.content.split())}" for t in check_turns(turns) if t.content.strip()]
    while len(lines) > 1 and sum(len(x) + 1 for x in lines) > max_chars:
        lines.pop(0)
    return "\n".join(lines)


def history_text(turns: Sequence[Turn], lang: str, max_chars: int) -> str:
    return full_context(turns, lang, max_chars) if turns else ""


def build_messages(question: str, hits: Sequence[Hit], *, lang: str, settings: AnswerSettings = DEFAULTS,
                   history: str = "", query: str | None = None, n_ctx: int | None = None,
                   terms: Callable[[str], list[str]] | None = None,
                   basis: Any = None) -> tuple[list[dict[str, str]], list[Step]]:
    """The answer prompt and the steps that record how it was fitted: with ``n_ctx`` known, a question too long
    for the context is cut (noted) and the evidence budget shrinks to what is left. Evidence is selected
    against ``query`` (the processor's standalone question in a consultation; default the question). With a
    quoted ``basis`` (``answer.basis.Basis``) the evidence is its quotes only (``prompts/answer_quoted.md``)."""
    from legalrag.answer.evidence import MIN_EVIDENCE_ROOM, keep_last_tokens, prompt_evidence
    from legalrag.llm.tokens import estimate_message_tokens, estimate_tokens
    from legalrag.prompts import load_prompt

    prompt = load_prompt(QUOTED_PROMPT if basis is not None else STYLES[settings.style])
    steps: list[Step] = []
    room = None
    if n_ctx:
        fixed = estimate_message_tokens(prompt.render(question="", sources="x", history=history, language=lang))
        room = n_ctx - settings.max_tokens - fixed
        reserve = MIN_EVIDENCE_ROOM if hits else 0  # one short piece of evidence with its article name
        q_tokens = estimate_tokens(question)
        if q_tokens > room - reserve:
            keep = max(16, room - reserve)
            note = (f"the question was cut from about {q_tokens} to its last {keep} tokens to fit the model's "
                    f"context of {n_ctx} tokens (with max_tokens {settings.max_tokens}); ask a shorter question or use a "
                    "model with a larger context")
            steps.append(Step("answer", "cut_question", input=q_tokens, output=note))
            question, q_tokens = keep_last_tokens(question, keep), keep  # the question is at a paste's end
        room -= q_tokens
    if basis is not None:
        from legalrag.answer.basis import prompt_quotes
        from legalrag.answer.evidence import select_evidence

        if hits and settings.evidence_tokens is not None:  # a budget too small for any evidence is refused alike
            select_evidence(query or question, list(hits)[:1], budget=settings.evidence_tokens, label=lambda h: citation_label(h.document), lang=lang,
                            setting="evidence_tokens (--evidence-tokens)")
        sources = prompt_quotes(basis)
    elif not hits:
        sources = ""
    elif settings.evidence_tokens is None:
        sources = format_sources(hits, settings.max_article_chars)
    else:
        sources, step = prompt_evidence(query or question, hits, budget=settings.evidence_tokens, lang=lang,
                                        agent="answer", room=room, terms=terms)
        steps.append(step)
    return prompt.render(question=question, sources=sources, history=history, language=lang), steps
