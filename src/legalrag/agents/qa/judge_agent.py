"""Judge agent: is the evidence enough to answer? Deterministic error-page filter first, then the model at
temperature 0 returns sufficient / reason / missing / a refined next query aimed at primary sources."""

from __future__ import annotations

from typing import Sequence

from legalrag.agents.qa._llm import ask_json
from legalrag.prompts import render_prompt
from legalrag.agents.qa.evidence import evidence_block
from legalrag.agents.qa.models import JudgeVerdict
from legalrag.llm.base import LLM
from legalrag.search.base import SearchResult


def judge(llm: LLM, question: str, evidence: Sequence[SearchResult], *, max_chars: int = 400) -> JudgeVerdict:
    """The verdict on already-filtered ``evidence``; with no evidence the verdict needs no model call."""
    if not evidence:
        return JudgeVerdict(sufficient=False, reason="No usable source was retrieved.",
                            missing=["authority"], next_query=question[:300])
    messages = render_prompt("qa_judge", question=question, evidence=evidence_block(evidence, max_chars))
    return ask_json(llm, messages, JudgeVerdict, max_tokens=120)
