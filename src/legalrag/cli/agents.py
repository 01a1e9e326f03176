"""Agent options for `legalrag search` (cli/retrieval.py) and `legalrag eval retrieval` (cli/eval/retrieval.py).

``--agents`` runs the planner loop (multi-agent query rewriting) over the chosen first-stage retriever;
``--rerank llm-listwise|llm-pointwise|llm-yesno`` reranks with the LLM (after the loop, over its pool, when
``--agents`` is given); ``--model URL#NAME`` sends every LLM call to an OpenAI-compatible server instead of
the embedded model; ``--trace FILE`` writes the trajectories as JSONL. LLM calls are
cached on disk, so re-running an evaluation costs only the calls not made before.

The commands call :func:`agent_pipeline` when an agent option is set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from legalrag.wiring import LLM_RERANKERS

def wants_agents(agents: bool, rerank: str | None, endpoint: str | None, policy: Path | None = None) -> bool:
    return bool(agents or endpoint or policy or (rerank in LLM_RERANKERS))


class TracingMASRetriever:
    """The planner loop as a retriever that rewrites the whole trace file after every query (atomically)."""

    name = "mas"

    def __init__(self, loop: Any, trace: Path | None):
        self.loop, self.trace = loop, trace
        self.results: list[Any] = []

    @property
    def last(self):
        return self.results[-1] if self.results else None

    def retrieve(self, query: str, k: int = 10, filter=None):
        from legalrag.serialize import step_to_dict
        from legalrag.io import write_jsonl

        res = self.loop.run(query, filter=filter)
        self.results.append(res)
        if self.trace is not None:
            rows = []
            for i, r in enumerate(self.results):
                rows += [{"query_index": i, **step_to_dict(s)} for s in r.steps]
                rows.append({"query_index": i, "summary": r.summary()})
            write_jsonl(self.trace, rows)
        return list(res.hits[:k])


def light_reranker(index: Any):
    """The cheap reranker that cuts each reformulation's top 30 to 10: the index's learned ranker when it has
    one (``legalrag train ranker``), else none (the first-stage order decides)."""
    if not (Path(index.path) / "ranker" / "spec.json").exists():
        return None
    from legalrag.wiring import make_reranker

    return make_reranker("learned", index)


def agent_pipeline(index: Any, retriever: str | None, rerank: str | None, *, agents: bool = False,
                   endpoint: str | None = None, endpoint_model: str | None = None, model: str | None = None,
                   trace: Path | None = None, max_rounds: int = 4, llm: Any = None, root: Any = None,
                   policy: Path | None = None, fused: bool = False):
    """A ``retrieval.pipeline.Pipeline`` with the LLM stages wired to one (cached) LLM (``root.make_llm``);
    ``policy`` (a ``legalrag train policy`` directory) runs the embedded model with its LoRA adapter;
    ``fused`` makes the planner write the chosen agent's queries in its own call (one call per round)."""
    from legalrag.errors import InputError
    from legalrag.retrieval.pipeline import Pipeline
    from legalrag.wiring import Root, make_policy_llm, make_reranker

    if trace is not None and not agents:
        raise InputError("-o trace=FILE writes the agents' trajectory; add --agents")
    if fused and not agents:
        raise InputError("-o fused_planner=true is a mode of the agents' planner; add --agents")
    if policy is not None and (not agents or endpoint):
        raise InputError("-o policy=DIR is the agents' trained policy on the embedded model: add --agents, "
                         "give --model an embedded model, not an endpoint URL")
    if llm is None and policy is None:
        from legalrag.cli.common import require_endpoint_model

        require_endpoint_model(root or Root(), endpoint, endpoint_model)
    if llm is None:
        llm = (make_policy_llm(policy, model) if policy is not None
               else (root or Root()).make_llm(model, endpoint, endpoint_model))
    if not agents:
        return (root or Root()).build_pipeline(index, retriever, rerank, llm=llm)
    from legalrag.agents.planner import PlannerConfig, PlannerLoop

    base = (root or Root()).build_pipeline(index, retriever)
    final = make_reranker(rerank, index, llm=llm) if rerank and rerank != "none" else None
    lang = index.manifest.get("lang", "zh")
    cfg = PlannerConfig(lang=lang if lang in ("zh", "en") else "zh", max_rounds=max_rounds, fused=fused)
    loop = PlannerLoop(llm, base.retriever, light_reranker=light_reranker(index), final_reranker=final, config=cfg)
    return Pipeline(retriever=TracingMASRetriever(loop, trace))
