"""Judge agent: is the evidence enough to answer? Deterministic error-page filter first, then the model at
temperature 0 returns sufficient / reason / missing / a refined next query aimed at primary sources."""

from __future__ import annotations

from typing import Sequence

from legalrag.agents.qa._llm import ask_json
from legalrag.prompts import render_prompt
from legalrag.agents.qa.evidence import evidence_block
from legalrag.agents.qa.language import language_name, text_lang
from legalrag.agents.qa.models import SufficiencyVerdict
from legalrag.llm.base import LLM
from legalrag.search.base import SearchResult


def judge(llm: LLM, question: str, evidence: Sequence[SearchResult], *, max_chars: int = 400,
          query_lang: str = "") -> SufficiencyVerdict:
    """The verdict on already-filtered ``evidence``; with no evidence the verdict needs no model call.
    ``query_lang`` (zh/en, default the question's) is the language the refined query must be in."""
    if not evidence:
        return SufficiencyVerdict(sufficient=False, reason="No usable source was retrieved.",
                                  missing=["authority"], next_query=question[:300])
    language = language_name(query_lang or text_lang(question))
    messages = render_prompt("qa_judge", question=question, evidence=evidence_block(evidence, max_chars),
                             language=language)
    return ask_json(llm, messages, SufficiencyVerdict, max_tokens=120)
