"""Query-rewriting agents for statute retrieval (the LegalMALR agents), each one prompt template on one LLM.

- ``single_element``: colloquial wording into precise legal terms (one query).
- ``supplementary_element``: implicit thresholds, actors, obligations and qualifiers made explicit (one query).
- ``multi_element``: several focused sub-queries, each retrieved separately (2-4 queries).
- ``supportive_law``: interpretive, procedural and auxiliary provisions (1-2 queries).
- ``semantic_abnormality``: an analyzer diagnoses the question (JSON anomaly type + explanation), then a
  rewriter repairs it (one query). Two calls.

``rewrite(llm, agent, query, lang=...)`` returns a ``Rewrite`` with the queries and the call record; a reply
that stays unusable after the bounded re-asks gives no queries and an ``error``, never an exception.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from legalrag.errors import InputError, StructuredOutputError
from legalrag.llm.base import LLM
from legalrag.llm.structured import CallRecord, ReplyError, structured_call
from legalrag.prompts import render_prompt


class Agent(str, enum.Enum):
    SINGLE_ELEMENT = "single_element"
    SUPPLEMENTARY_ELEMENT = "supplementary_element"
    MULTI_ELEMENT = "multi_element"
    SUPPORTIVE_LAW = "supportive_law"
    SEMANTIC_ABNORMALITY = "semantic_abnormality"


MAX_QUERIES = {Agent.SINGLE_ELEMENT: 1, Agent.SUPPLEMENTARY_ELEMENT: 1, Agent.MULTI_ELEMENT: 4,
               Agent.SUPPORTIVE_LAW: 2, Agent.SEMANTIC_ABNORMALITY: 1}
ANOMALY_TYPES = ("none", "typo", "contradiction", "ambiguity", "irrelevant", "other")
MAX_QUERY_CHARS = 300

QUERIES_SCHEMA = {"type": "object", "properties": {"queries": {"type": "array", "items": {"type": "string"},
                                                                "minItems": 1, "maxItems": 4}},
                  "required": ["queries"]}
ANALYSIS_SCHEMA = {"type": "object", "properties": {"anomaly_type": {"type": "string", "enum": list(ANOMALY_TYPES)},
                                                     "explanation": {"type": "string"}},
                   "required": ["anomaly_type", "explanation"]}

LANGUAGE_RULES = {
    ("zh", "zh"): "用中文写查询。",
    ("zh", "en"): "法条库是中文的：无论问题用什么语言，都用中文写查询。",
    ("en", "en"): "Write the queries in English.",
    ("en", "zh"): "The statute corpus is in English: write the queries in English whatever the question's language.",
}


@dataclass(frozen=True)
class Rewrite:
    agent: Agent
    queries: tuple[str, ...]
    record: CallRecord
    analysis: dict[str, str] | None = None
    error: str | None = None
    extra_records: tuple[CallRecord, ...] = field(default=())

    @property
    def tokens(self) -> int:
        return sum(r.usage.total_tokens for r in (self.record, *self.extra_records))

    @property
    def calls(self) -> int:
        return self.record.attempts + sum(r.attempts for r in self.extra_records)

    @property
    def seconds(self) -> float:
        return sum(r.usage.seconds for r in (self.record, *self.extra_records))


def parse_queries(value: Any, rec: CallRecord, *, limit: int, original: str = "") -> tuple[str, ...]:
    """Clean a rewriter's reply into at most ``limit`` distinct non-empty queries; repairs are noted."""
    if isinstance(value, dict):
        items = value.get("queries")
        if items is None:
            for key in ("query", "rewritten_query", "rewrite", "sub_queries", "subqueries"):
                if key in value:
                    items = value[key]
                    rec.repairs.append(f"read queries from {key!r}")
                    break
    elif isinstance(value, list):
        items = value
        rec.repairs.append("reply was a bare list")
    elif isinstance(value, str):
        items = [value]
        rec.repairs.append("reply was a bare string")
    else:
        items = None
    if isinstance(items, str):
        items = [items]
    if not isinstance(items, list):
        raise ReplyError('expected {"queries": ["..."]}')
    queries: list[str] = []
    for item in items:
        if isinstance(item, dict):  # [{"query": "..."}]
            item = item.get("query") or item.get("text") or ""
        if not isinstance(item, str):
            continue
        q = " ".join(item.split())[:MAX_QUERY_CHARS]
        if q and q not in queries:
            queries.append(q)
    if not queries:
        raise ReplyError('"queries" is empty: give at least one non-empty query string')
    if len(queries) > limit:
        rec.repairs.append(f"kept the first {limit} of {len(queries)} queries")
        queries = queries[:limit]
    if original and queries == [" ".join(original.split())]:
        rec.repairs.append("rewrite repeats the question unchanged")
    return tuple(queries)


def parse_analysis(value: Any, rec: CallRecord) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ReplyError('expected {"anomaly_type": "...", "explanation": "..."}')
    kind = str(value.get("anomaly_type") or value.get("type") or "").strip().lower()
    if kind not in ANOMALY_TYPES:
        if not kind:
            raise ReplyError(f'"anomaly_type" is missing; use one of {list(ANOMALY_TYPES)}')
        rec.repairs.append(f"unknown anomaly type {kind!r} read as 'other'")
        kind = "other"
    return {"anomaly_type": kind, "explanation": " ".join(str(value.get("explanation") or "").split())[:300]}


def _ask(llm: LLM, messages: list, parse: Any, schema: dict, opts: dict) -> tuple[Any, CallRecord]:
    """One structured call; a reply that never parses gives None (the agent records it, the loop goes on)."""
    rec = CallRecord()
    try:
        return structured_call(llm, messages, parse, schema=schema, record=rec, **opts).value, rec
    except StructuredOutputError:
        return None, rec


def rewrite(llm: LLM, agent: Agent | str, query: str, *, lang: str = "zh", query_lang: str | None = None,
            temperature: float = 0.8, max_tokens: int = 160, retries: int = 2, seed: int | None = None) -> Rewrite:
    """Run one rewriting agent on ``query``; ``lang`` is the corpus (and prompt) language."""
    try:
        agent = Agent(agent)
    except ValueError:
        raise InputError(f"unknown agent {agent!r}; choose one of {[a.value for a in Agent]}") from None
    if lang not in ("zh", "en"):
        raise InputError(f"lang must be 'zh' or 'en', got {lang!r}")
    rule = LANGUAGE_RULES[(lang, query_lang or lang)]
    limit = MAX_QUERIES[agent]

    def parse(value: Any, rec: CallRecord) -> tuple[str, ...]:
        return parse_queries(value, rec, limit=limit, original=query)

    opts = dict(temperature=temperature, max_tokens=max_tokens, retries=retries, seed=seed)
    analysis = None
    extra: tuple[CallRecord, ...] = ()
    if agent is Agent.SEMANTIC_ABNORMALITY:
        analysis, arec = _ask(llm, render_prompt(f"mas_abnormality_analyzer_{lang}", query=query), parse_analysis,
                              ANALYSIS_SCHEMA, opts)
        extra = (arec,)
        if analysis is None:  # the rewriter can still work without a diagnosis
            analysis = {"anomaly_type": "other", "explanation": "diagnosis unavailable"}
        messages = render_prompt(f"mas_abnormality_rewriter_{lang}", query=query, language_rule=rule, **analysis)
    else:
        messages = render_prompt(f"mas_{agent.value}_{lang}", query=query, language_rule=rule)
    queries, rec = _ask(llm, messages, parse, QUERIES_SCHEMA, opts)
    error = None if queries else f"no usable queries after {rec.attempts} attempts: {'; '.join(rec.errors)}"
    return Rewrite(agent=agent, queries=queries or (), record=rec, analysis=analysis, error=error,
                   extra_records=extra)
