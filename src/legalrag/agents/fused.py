"""The fused planner call: one structured call per round picks the agent AND writes its reformulations.

The two-call planner spends a decision call (``mas_planner_*``) and then the chosen agent's rewrite call
(``mas_<agent>_*``; two calls for ``semantic_abnormality``). In fused mode one prompt (``mas_planner_fused_*``)
describes every agent and what its queries should be (it shows the decisions, the reformulations and the pool's
size; not the pool's titles, which a 1.5B model copied into its queries), and the reply is
``{"action": "<agent or exit>", "reason": "...", "queries": ["..."]}``:

- ``exit`` carries no queries (any given are dropped, and the drop is noted as a repair);
- an agent's queries are cleaned like a rewriter's (``parse_queries``: distinct, non-empty, at most
  ``MAX_QUERY_CHARS`` each) and capped at that agent's ``MAX_QUERIES``;
- an agent named with no usable queries is re-asked with the error shown; when the re-asks run out, the agent
  the last reply named is kept in ``named`` so the loop can count it as a failed rewrite of that agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from legalrag.agents.actions import ACTIONS, EXIT, parse_decision
from legalrag.agents.rewrite import MAX_QUERIES, Agent, parse_queries
from legalrag.llm.structured import CallRecord, ReplyError

FUSED_SCHEMA = {"type": "object",
                "properties": {"action": {"type": "string", "enum": list(ACTIONS)}, "reason": {"type": "string"},
                               "queries": {"type": "array", "items": {"type": "string"},
                                           "maxItems": max(MAX_QUERIES.values())}},
                "required": ["action", "reason", "queries"]}


@dataclass(frozen=True)
class FusedReply:
    action: str  # an agent's name or "exit"
    reason: str
    queries: tuple[str, ...]  # empty for exit


def parse_fused(value: Any, rec: CallRecord, *, query: str, named: list[str] | None = None) -> FusedReply:
    """Parse a fused reply; raise ReplyError (shown to the model on the re-ask) when it cannot be used.

    ``named`` collects the agents that replies named, usable or not (the last one is what the loop charges a
    failed rewrite to)."""
    action, reason = parse_decision(value, rec)
    raw = value.get("queries") if isinstance(value, dict) else None
    if action == EXIT:
        if raw:
            rec.repairs.append("queries dropped: an exit carries none")
        return FusedReply(EXIT, reason, ())
    if named is not None:
        named.append(action)
    limit = MAX_QUERIES[Agent(action)]
    wanted = "1 query" if limit == 1 else f"1 to {limit} queries"
    if not isinstance(value, dict) or not any(k in value for k in ("queries", "query", "rewritten_query")):
        raise ReplyError(f'"queries" is missing: {action} needs {wanted} in "queries"')
    try:
        queries = parse_queries(value, rec, limit=limit, original=query)
    except ReplyError as exc:
        raise ReplyError(f"{exc} ({action} needs {wanted})") from None
    return FusedReply(action, reason, queries)
