"""Verification agents: for each proposed addition, the LLM reads the facts and the provision's text and
answers accept, reject or correct (naming the right provision) as JSON.

Calls run concurrently in a bounded thread pool (``concurrency``). The embedded model serialises its calls,
so concurrency only pays with a remote endpoint; the bound keeps a remote server from being flooded.
A verdict that cannot be parsed after the re-asks counts as "accept" (the rule or co-citation evidence
stands) and is marked ``parsed=False``; a correction naming an unknown provision is kept as unresolved.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from legalrag.llm.base import LLM
from legalrag.types import Document, Step

_SCHEMA = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["accept", "reject", "correct"]},
        "provision": {"type": "string"},
        "reason": {"type": "string"},
    },
    "required": ["decision", "reason"],
}


@dataclass(frozen=True)
class Verdict:
    provision: str
    decision: str  # accept | reject | correct
    corrected: str | None = None
    resolved: bool = True  # False when a correction names no corpus document
    reason: str = ""
    parsed: bool = True
    calls: int = 0


@dataclass(frozen=True)
class Proposal:
    provision: str
    reason: str


def verify_one(llm: LLM, facts: str, proposal: Proposal, lookup: Callable[[str], Document | None], *,
               max_chars: int = 1200, article_chars: int = 500) -> tuple[Verdict, Step]:
    from legalrag.errors import StructuredOutputError
    from legalrag.llm.structured import CallRecord, ReplyError, structured_call
    from legalrag.prompts import article_block, render_prompt

    doc = lookup(proposal.provision)
    article = article_block(doc, article_chars) if doc is not None else proposal.provision

    def parse(obj: Any, _rec) -> tuple[str, str | None, str]:
        if not isinstance(obj, dict) or obj.get("decision") not in ("accept", "reject", "correct"):
            raise ReplyError('expected {"decision": "accept" | "reject" | "correct", ...}')
        corrected = str(obj.get("provision") or "").strip() or None
        if obj["decision"] == "correct" and corrected is None:
            raise ReplyError('"correct" needs the right provision id in "provision"')
        return obj["decision"], corrected, str(obj.get("reason", ""))[:300]

    messages = render_prompt("cite_verify", facts=facts.strip()[:max_chars], provision_id=proposal.provision,
                               provision=article, reason=proposal.reason)
    start = time.perf_counter()
    rec = CallRecord()
    try:  # a verifier that cannot decide keeps the proposal (recorded below), it never stops the run
        value = structured_call(llm, messages, parse, schema=_SCHEMA, temperature=0.0, max_tokens=80, retries=1,
                                record=rec).value
    except StructuredOutputError:
        value = None
    if value is None:
        verdict = Verdict(proposal.provision, "accept", reason="no usable verdict; kept", parsed=False,
                          calls=rec.attempts)
    else:
        decision, corrected, reason = value
        if decision == "correct" and corrected == proposal.provision:
            decision, corrected = "accept", None
        resolved = corrected is None or lookup(corrected) is not None
        verdict = Verdict(proposal.provision, decision, corrected if decision == "correct" else None, resolved,
                          reason, calls=rec.attempts)
    step = Step(agent="cite-verify", action=verdict.decision, input=proposal.provision,
                output={"corrected": verdict.corrected, "reason": verdict.reason, "resolved": verdict.resolved},
                seconds=time.perf_counter() - start, tokens=rec.usage.total_tokens,
                error=None if verdict.parsed else "; ".join(rec.errors) or "no usable reply")
    return verdict, step


def verify_all(llm: LLM, facts: str, proposals: Sequence[Proposal], lookup: Callable[[str], Document | None], *,
               concurrency: int = 4) -> list[tuple[Verdict, Step]]:
    """Verify every proposal, at most ``concurrency`` at a time; results keep the input order."""
    if not proposals:
        return []
    if concurrency <= 1 or len(proposals) == 1:
        return [verify_one(llm, facts, p, lookup) for p in proposals]
    with ThreadPoolExecutor(max_workers=min(concurrency, len(proposals))) as pool:
        return list(pool.map(lambda p: verify_one(llm, facts, p, lookup), proposals))
