"""Multiple-choice answering: with retrieved evidence (simple / multi modes) and the two closed-book
baselines (zero-shot, chain of thought) under the same model."""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from legalrag.agents.qa._llm import ask_json, ask_text
from legalrag.prompts import render_prompt
from legalrag.agents.qa.evidence import evidence_block
from legalrag.agents.qa.models import ChoiceAnswer
from legalrag.errors import LegalRagError, StructuredOutputError
from legalrag.llm.base import LLM
from legalrag.search.base import SearchResult

_FINAL = re.compile(r"(?:answer|答案)\s*(?:is|为|是)?\s*[:：]?\s*\(?([A-F])\)?", re.IGNORECASE)


def format_choices(choices: Mapping[str, str]) -> str:
    return "\n".join(f"{k}. {v}" for k, v in choices.items())


def _fallback_letter(text: str, letters: Sequence[str]) -> str | None:
    """The letter a free-text reply settles on: the last 'Answer: X', else the last standalone letter."""
    found = [m.group(1).upper() for m in _FINAL.finditer(text) if m.group(1).upper() in letters]
    if found:
        return found[-1]
    standalone = [x for x in re.findall(r"(?<![A-Za-z])([A-F])(?![A-Za-z])", text) if x in letters]
    return standalone[-1] if standalone else None


def option_sources(choices: Mapping[str, str], evidence: Sequence[SearchResult],
                   by_option: Mapping[str, Sequence[str]] | None) -> str:
    """``A: [1], [3]`` per choice: the numbered sources retrieved for that choice (``by_option`` maps a letter to
    the ids of its results); "(none)" for a choice with none, and one line saying so without a per-choice search."""
    if not by_option:
        return "(the sources were retrieved for the question as a whole)"
    number = {r.id: n for n, r in enumerate(evidence, 1)}
    lines = []
    for letter in choices:
        refs = [f"[{number[i]}]" for i in by_option.get(letter, ()) if i in number]
        lines.append(f"{letter}: {', '.join(refs) if refs else '(none)'}")
    return "\n".join(lines)


def choose(llm: LLM, question: str, choices: Mapping[str, str], evidence: Sequence[SearchResult] | None,
           *, max_chars: int = 400, lang: str | None = None,
           by_option: Mapping[str, Sequence[str]] | None = None) -> tuple[str | None, str, str | None]:
    """(letter, rationale, error). ``evidence=None`` is the zero-shot baseline (no sources in the prompt). The
    rationale is asked for in ``lang`` (default: the question's language); ``by_option`` lists the sources
    retrieved for each choice."""
    from legalrag.agents.qa.language import language_name, text_lang

    language = language_name(lang or text_lang(question))
    if evidence is None:
        messages = render_prompt("qa_mcq_zero", question=question, choices=format_choices(choices), language=language)
    else:
        messages = render_prompt("qa_mcq", question=question, choices=format_choices(choices),
                                 evidence=evidence_block(evidence, max_chars), language=language,
                                 option_sources=option_sources(choices, evidence, by_option))
    try:
        reply = ask_json(llm, messages, ChoiceAnswer, max_tokens=100)
    except StructuredOutputError as exc:
        letter = next((x for raw in reversed(exc.raw) if (x := _fallback_letter(raw, list(choices)))), None)
        return letter, "", str(exc)
    except LegalRagError as exc:  # the model call failed or hung: no answer, recorded
        return None, "", str(exc)
    if reply.answer not in choices:
        return None, reply.rationale, f"answer {reply.answer} is not one of the choices"
    return reply.answer, reply.rationale, None


def choose_cot(llm: LLM, question: str, choices: Mapping[str, str], *, max_tokens: int = 256) -> tuple[str | None, str]:
    """Chain-of-thought baseline: reason step by step in free text, end with 'Answer: X'."""
    try:
        text = ask_text(llm, render_prompt("qa_mcq_cot", question=question, choices=format_choices(choices)),
                        max_tokens=max_tokens)
    except LegalRagError as exc:
        return None, f"model call failed: {exc}"
    return _fallback_letter(text, list(choices)), text
