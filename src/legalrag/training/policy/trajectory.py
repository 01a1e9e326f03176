"""One rollout of the planner loop as training data.

The policy's actions are its replies: every planner decision and every rewriting agent's reply (re-asks
included). ``RecordingLLM`` wraps the sampling LLM for one rollout and keeps each call's messages and reply
text exactly as sent and received, so the learner can score the very tokens that were sampled; the loop's
own ``Step``s give the retrieval side (what each reformulation retrieved, the pool).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from legalrag.llm.base import LLM, ChatRequest, ChatResult
from legalrag.types import Query


class RecordingLLM:
    """Passes every call to ``llm`` and records ``{"messages", "reply", "temperature", "seed", "tokens",
    "seconds"}``; JSON-schema and logprob support are the wrapped model's."""

    def __init__(self, llm: LLM):
        self.llm = llm
        self.model_id = llm.model_id
        self.backend = getattr(llm, "backend", "")
        self.supports_json_schema = getattr(llm, "supports_json_schema", False)
        self.supports_logprobs = getattr(llm, "supports_logprobs", False)
        self.calls: list[dict[str, Any]] = []

    def chat(self, request: ChatRequest) -> ChatResult:
        result = self.llm.chat(request)
        self.calls.append({"messages": [dict(m) for m in request.messages], "reply": result.text,
                           "temperature": request.temperature, "seed": request.seed,
                           "tokens": result.completion_tokens, "seconds": round(result.seconds, 4)})
        return result


@dataclass(frozen=True)
class Trajectory:
    """A rollout: ``retrieved`` is one ``{"source", "query", "ids"}`` per retrieval step, in order."""

    query_id: str
    query: str
    gold_ids: tuple[str, ...]
    rollout: int
    seed: int
    actions: tuple[str, ...]
    reformulations: tuple[str, ...]
    retrieved: tuple[dict[str, Any], ...]
    pool: tuple[str, ...]
    gold_gain: tuple[int, ...]
    planner_iterations: int
    refused_exits: int
    failures: int
    repairs: int
    stop_reason: str
    tokens: int
    seconds: float
    calls: tuple[dict[str, Any], ...] = ()
    reward: dict[str, float] = field(default_factory=dict)

    @property
    def pool_recall(self) -> float:
        gold = set(self.gold_ids)
        return len(gold & set(self.pool)) / len(gold) if gold else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pool_recall"] = round(self.pool_recall, 6)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Trajectory":
        names = set(cls.__dataclass_fields__)
        d = {k: v for k, v in d.items() if k in names}
        for k in ("gold_ids", "actions", "reformulations", "retrieved", "pool", "gold_gain", "calls"):
            d[k] = tuple(d.get(k, ()))
        return cls(**d)


def run_rollout(loop: Any, query: Query, *, rollout: int, seed: int) -> Trajectory:
    """Run ``loop`` (a PlannerLoop whose LLM is a :class:`RecordingLLM`, reset here) once on ``query``."""
    from legalrag.training.policy.reward import gold_gains

    recorder = loop.llm
    if not isinstance(recorder, RecordingLLM):
        raise TypeError("run_rollout needs a PlannerLoop built on a RecordingLLM")
    recorder.calls = []
    loop.config = replace(loop.config, seed=seed)
    t0 = time.perf_counter()
    result = loop.run(query.text)
    seconds = time.perf_counter() - t0
    retrieved = tuple({"source": s.input["source"], "query": s.input["query"], "ids": list(s.output["ids"])}
                      for s in result.steps if s.agent == "retriever")
    decisions = [s for s in result.steps if s.agent == "planner" and "round" in (s.input or {})]
    return Trajectory(
        query_id=query.id, query=query.text, gold_ids=tuple(query.gold_ids), rollout=rollout, seed=seed,
        actions=tuple(s.action for s in decisions), reformulations=result.reformulations, retrieved=retrieved,
        pool=tuple(h.id for h in result.pool), gold_gain=tuple(gold_gains([r["ids"] for r in retrieved],
                                                                           query.gold_ids)),
        planner_iterations=len(decisions), refused_exits=result.refused_exits, failures=result.failures,
        repairs=result.repairs, stop_reason=result.stop_reason, tokens=result.tokens, seconds=round(seconds, 3),
        calls=tuple(recorder.calls))
