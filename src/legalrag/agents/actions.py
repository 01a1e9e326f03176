"""The planner's actions: the agents' names plus ``exit``, and how a planner reply's action is read.

Shared by the two-call planner (``{"action", "reason"}``) and the fused call (``+ "queries"``)."""

from __future__ import annotations

import difflib
import re
from typing import Any

from legalrag.agents.rewrite import Agent
from legalrag.llm.structured import CallRecord, ReplyError

EXIT = "exit"
ACTIONS = tuple(a.value for a in Agent) + (EXIT,)
_ALIASES = {"finish": EXIT, "stop": EXIT, "done": EXIT, "end": EXIT, "quit": EXIT, "结束": EXIT, "退出": EXIT,
            "single": "single_element", "supplementary": "supplementary_element", "multi": "multi_element",
            "decompose": "multi_element", "decomposition": "multi_element", "supportive": "supportive_law",
            "abnormality": "semantic_abnormality", "semantic": "semantic_abnormality"}
PLANNER_SCHEMA = {"type": "object", "properties": {"action": {"type": "string", "enum": list(ACTIONS)},
                                                    "reason": {"type": "string"}},
                  "required": ["action", "reason"]}


def normalise_action(raw: Any, rec: CallRecord) -> str:
    """Map a planner's action to a known one (case, separators, aliases, close spellings) or raise."""
    if not isinstance(raw, str) or not raw.strip():
        raise ReplyError(f'"action" must be one of {list(ACTIONS)}')
    key = re.sub(r"[\s\-]+", "_", raw.strip().lower())
    if key in ACTIONS:
        if key != raw:
            rec.repairs.append(f"action {raw!r} read as {key!r}")
        return key
    for alias, target in _ALIASES.items():
        if key == alias or key.startswith(alias + "_") or key.endswith("_" + alias):
            rec.repairs.append(f"action {raw!r} read as {target!r}")
            return target
    close = difflib.get_close_matches(key, ACTIONS, n=1, cutoff=0.75)
    if close:
        rec.repairs.append(f"action {raw!r} read as {close[0]!r}")
        return close[0]
    raise ReplyError(f"unknown action {raw!r}; choose one of {list(ACTIONS)}")


def parse_decision(value: Any, rec: CallRecord) -> tuple[str, str]:
    """``(action, reason)`` from a planner reply (a bare string is read as the action)."""
    if isinstance(value, str):
        value = {"action": value}
        rec.repairs.append("reply was a bare string")
    if not isinstance(value, dict):
        raise ReplyError('expected {"action": "...", "reason": "..."}')
    action = value.get("action", value.get("agent"))
    return normalise_action(action, rec), " ".join(str(value.get("reason") or "").split())[:300]
