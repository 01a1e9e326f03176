"""Verification agents: for each proposed addition, the LLM reads the facts and the provision's text and
answers accept, reject or correct (naming the right provision) as JSON.

Two ways: ``verify_all`` makes one call per proposal (each with a one-sentence reason), concurrently in a
bounded thread pool (``concurrency``; the embedded model serialises its calls, so concurrency only pays with a
remote endpoint, and the bound keeps a remote server from being flooded). ``verify_batch`` asks once for every
proposal of a case: the facts are read once and no reasons are written, so it costs one prefill and a short
reply instead of one of each per proposal; its schema fixes the ids and the number of verdicts.
A verdict that cannot be parsed after the re-asks counts as "accept" (the rule or co-citation evidence
stands) and is marked ``parsed=False``; a correction naming an unknown provision is kept as unresolved.
"""

from __future__ import annotations

import re
import time
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
class VerificationVerdict:
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


def _verdict(provision: str, decision: str, corrected: str | None, reason: str,
             lookup: Callable[[str], Document | None], *, calls: int) -> VerificationVerdict:
    """A parsed reply as a verdict: a "correction" to the proposal itself is an accept, and a correction is
    resolved when it names a corpus document."""
    if decision == "correct" and corrected == provision:
        decision, corrected = "accept", None
    resolved = corrected is None or lookup(corrected) is not None
    return VerificationVerdict(provision, decision, corrected if decision == "correct" else None, resolved, reason,
                               calls=calls)


def verify_one(llm: LLM, facts: str, proposal: Proposal, lookup: Callable[[str], Document | None], *,
               max_chars: int = 1200, article_chars: int = 500, case_first: bool = False) -> tuple[VerificationVerdict, Step]:
    from legalrag.citepredict.prompting import stage_prompt
    from legalrag.errors import StructuredOutputError
    from legalrag.llm.structured import CallRecord, ReplyError, structured_call
    from legalrag.prompts import article_block

    doc = lookup(proposal.provision)
    article = article_block(doc, article_chars) if doc is not None else proposal.provision

    def parse(obj: Any, _rec) -> tuple[str, str | None, str]:
        if not isinstance(obj, dict) or obj.get("decision") not in ("accept", "reject", "correct"):
            raise ReplyError('expected {"decision": "accept" | "reject" | "correct", ...}')
        corrected = str(obj.get("provision") or "").strip() or None
        if obj["decision"] == "correct" and corrected is None:
            raise ReplyError('"correct" needs the right provision id in "provision"')
        return obj["decision"], corrected, str(obj.get("reason", ""))[:300]

    messages = stage_prompt("verify", facts, case_first=case_first, max_chars=max_chars,
                            provision_id=proposal.provision, provision=article, reason=proposal.reason)
    start = time.perf_counter()
    rec = CallRecord()
    try:  # a verifier that cannot decide keeps the proposal (recorded below), it never stops the run
        value = structured_call(llm, messages, parse, schema=_SCHEMA, temperature=0.0, max_tokens=80, retries=1,
                                record=rec).value
    except StructuredOutputError:
        value = None
    if value is None:
        verdict = VerificationVerdict(proposal.provision, "accept", reason="no usable verdict; kept", parsed=False,
                                      calls=rec.attempts)
    else:
        verdict = _verdict(proposal.provision, *value, lookup, calls=rec.attempts)
    step = Step(agent="cite-verify", action=verdict.decision, input=proposal.provision,
                output={"corrected": verdict.corrected, "reason": verdict.reason, "resolved": verdict.resolved},
                seconds=time.perf_counter() - start, tokens=rec.usage.total_tokens,
                error=None if verdict.parsed else "; ".join(rec.errors) or "no usable reply")
    return verdict, step


def verify_all(llm: LLM, facts: str, proposals: Sequence[Proposal], lookup: Callable[[str], Document | None], *,
               concurrency: int = 4, case_first: bool = False) -> list[tuple[VerificationVerdict, Step]]:
    """Verify every proposal, at most ``concurrency`` at a time; results keep the input order."""
    from legalrag.llm.parallel import ordered_map

    return ordered_map(lambda p: verify_one(llm, facts, p, lookup, case_first=case_first), proposals, concurrency)


_TRAILING_IDS = re.compile(r"\s*\([^()]*\)\s*$")


def _proposal_blocks(proposals: Sequence[Proposal], lookup: Callable[[str], Document | None],
                     article_chars: int) -> str:
    from legalrag.prompts import article_block

    blocks = []
    for n, p in enumerate(proposals, 1):
        doc = lookup(p.provision)
        article = article_block(doc, article_chars) if doc is not None else "(not in the corpus)"
        reason = _TRAILING_IDS.sub("", p.reason)  # "... similar labelled cases (id, id, ...)": the ids cost tokens
        why = f" (proposed because: {reason})" if reason else ""
        blocks.append(f"[{n}] id {p.provision}{why}\n{article}")
    return "\n\n".join(blocks)


def verify_batch(llm: LLM, facts: str, proposals: Sequence[Proposal], lookup: Callable[[str], Document | None], *,
                 max_chars: int = 1200, article_chars: int = 300, case_first: bool = False
                 ) -> tuple[list[VerificationVerdict], Step]:
    """One call for every proposal: a verdict per proposal (input order) and the call's step. A verdict the
    reply lacks, or a reply that never parses, keeps the proposal (``parsed=False``), as in ``verify_one``."""
    from legalrag.citepredict.prompting import stage_prompt
    from legalrag.errors import StructuredOutputError
    from legalrag.llm.structured import CallRecord, ReplyError, structured_call

    if not proposals:
        return [], Step(agent="cite-verify", action="batch", input=[], output=[])
    ids = list(dict.fromkeys(p.provision for p in proposals))
    verdict_schema = {"type": "object", "properties": {
        "decision": {"type": "string", "enum": ["accept", "reject", "correct"]}, "provision": {"type": "string"}},
        "required": ["decision"], "additionalProperties": False}
    # one required key per proposal: constrained decoding then writes each id once, in the order given
    schema = {"type": "object", "properties": {i: verdict_schema for i in ids}, "required": ids,
              "additionalProperties": False}

    def parse(obj: Any, _rec) -> dict[str, tuple[str, str | None]]:
        if not isinstance(obj, dict):
            raise ReplyError('expected {"<id>": {"decision": ...}, ...} with one entry per proposed provision')
        out: dict[str, tuple[str, str | None]] = {}
        for pid, item in obj.items():
            pid = str(pid).strip()
            if pid not in ids:
                continue
            if not isinstance(item, dict) or item.get("decision") not in ("accept", "reject", "correct"):
                raise ReplyError(f'the verdict for {pid} needs "decision": "accept" | "reject" | "correct"')
            corrected = str(item.get("provision") or "").strip() or None
            if item["decision"] == "correct" and corrected is None:
                raise ReplyError(f'the verdict for {pid} says "correct" but names no provision')
            out[pid] = (item["decision"], corrected)
        if not out:
            raise ReplyError(f"no verdict names a proposed id ({', '.join(ids)})")
        return out

    messages = stage_prompt("verify_batch", facts, case_first=case_first, max_chars=max_chars,
                            proposals=_proposal_blocks(proposals, lookup, article_chars))
    start = time.perf_counter()
    rec = CallRecord()
    try:  # as in verify_one: no usable reply keeps every proposal, recorded
        value = structured_call(llm, messages, parse, schema=schema, temperature=0.0,
                                max_tokens=16 + 32 * len(ids), retries=1, record=rec).value
    except StructuredOutputError:
        value = None
    verdicts = []
    for n, p in enumerate(proposals):
        calls = rec.attempts if n == 0 else 0  # the batch's calls are counted once
        got = (value or {}).get(p.provision)
        if got is None:
            verdicts.append(VerificationVerdict(p.provision, "accept", reason="no verdict in the batch reply; kept",
                                                parsed=False, calls=calls))
            continue
        verdicts.append(_verdict(p.provision, *got, "batch verdict", lookup, calls=calls))
    missing = [v.provision for v in verdicts if not v.parsed]
    step = Step(agent="cite-verify", action="batch", input=ids,
                output=[{"provision": v.provision, "decision": v.decision, "corrected": v.corrected,
                         "resolved": v.resolved} for v in verdicts],
                seconds=time.perf_counter() - start, tokens=rec.usage.total_tokens,
                error=(None if not missing else ("; ".join(rec.errors) or "no usable reply") if value is None
                       else f"no verdict for {', '.join(missing)}"))
    return verdicts, step
