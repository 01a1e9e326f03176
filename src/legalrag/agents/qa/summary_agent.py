"""Summary agent: the answer with numbered citations [n], then a check of every citation and every sentence.

A citation resolves when its number points to a retrieved source; a sentence with no citation, or whose
citations share almost no words with the cited sources, is flagged as unsupported (shown, never hidden).
"""

from __future__ import annotations

import re
from typing import Sequence

from legalrag.agents.qa._llm import ask_text, render
from legalrag.agents.qa.evidence import evidence_block
from legalrag.llm.base import LLM
from legalrag.search.base import SearchResult
from legalrag.search.fetch import tokens
from legalrag.types import Citation

_MARK = re.compile(r"\[(\d{1,2})\]")
_SENTENCE = re.compile(r"[^。！？.!?\n]+[。！？.!?]?")


def summarise(llm: LLM, question: str, evidence: Sequence[SearchResult], gaps: str = "",
              *, max_tokens: int = 400, max_chars: int = 700) -> str:
    messages = render("qa_summary", question=question, evidence=evidence_block(evidence, max_chars),
                      gaps=gaps or "(none)")
    return ask_text(llm, messages, max_tokens=max_tokens).strip()


def check_citations(answer: str, evidence: Sequence[SearchResult]) -> tuple[list[Citation], list[str]]:
    """Citations found in ``answer`` (resolved or not) and the sentences flagged as unsupported."""
    citations: dict[str, Citation] = {}
    for m in _MARK.finditer(answer):
        n = int(m.group(1))
        if m.group(0) in citations:
            continue
        if 1 <= n <= len(evidence):
            r = evidence[n - 1]
            citations[m.group(0)] = Citation(text=m.group(0), canonical=r.title, resolved=True,
                                             document_id=r.id, in_retrieved=True, document_text=r.text[:500])
        else:
            citations[m.group(0)] = Citation(text=m.group(0), canonical="", resolved=False)
    unsupported = []
    for s in _SENTENCE.finditer(answer):
        sentence = s.group(0).strip()
        words = tokens(_MARK.sub("", sentence))
        if len(words) < 4 or sentence.lower().startswith(("sources", "could not", "unable", "note")):
            continue
        nums = [int(n) for n in _MARK.findall(sentence) if 1 <= int(n) <= len(evidence)]
        if not nums:
            unsupported.append(sentence)
            continue
        source_words = set(w for n in nums for w in tokens(evidence[n - 1].text))
        if sum(w in source_words for w in words) / len(words) < 0.2:
            unsupported.append(sentence)
    return list(citations.values()), unsupported
