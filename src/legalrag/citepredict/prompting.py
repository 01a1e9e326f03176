"""The prompts of the citation pipeline's LLM stages, in two layouts.

Per stage (``case_first=False``): each stage's template (``cite_analysis``, ``cite_verify``,
``cite_verify_batch``; the reranker's own prompt) opens with that stage's instructions and carries the facts
in its user message, so the runtime reads the facts again in every stage.

Case first (``case_first=True``): every call of a case opens with the same system message, ``cite_case``,
which holds only the facts; the stage's instructions and its own material follow as the user message
(``cite_case_<stage>``). Calls of one case then share their longest part as a prefix, and a runtime that
keeps its prompt (KV) cache between calls, as the embedded llama.cpp does, reads the facts once per case.
"""

from __future__ import annotations

from typing import Any

from legalrag.prompts import render_prompt

FACT_CHARS = 1200  # the facts as the LLM stages read them


def stage_prompt(stage: str, facts: str, *, case_first: bool, max_chars: int = FACT_CHARS,
                 **variables: Any) -> list[dict[str, str]]:
    """The messages for ``stage`` (analysis, rerank, verify, verify_batch) on ``facts`` in the chosen layout."""
    text = facts.strip()[:max_chars]
    if case_first:
        return render_prompt("cite_case", facts=text) + render_prompt(f"cite_case_{stage}", **variables)
    return render_prompt(f"cite_{stage}", facts=text, **variables)
