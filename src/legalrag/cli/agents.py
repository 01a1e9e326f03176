"""`legalrag agents rollouts` (N seeded planner rollouts per query, and their stability), and the agent options
of `legalrag search` (cli/retrieval.py) and `legalrag eval retrieval` (cli/eval/retrieval.py).

``--agents`` runs the planner loop (multi-agent query rewriting) over the chosen first-stage retriever;
``--rerank llm-listwise|llm-pointwise|llm-yesno`` reranks with the LLM (after the loop, over its pool, when
``--agents`` is given); ``--model URL#NAME`` sends every LLM call to an OpenAI-compatible server instead of
the embedded model; ``--trace FILE`` writes the trajectories as JSONL. LLM calls are
cached on disk, so re-running an evaluation costs only the calls not made before.

The commands call :func:`agent_pipeline` when an agent option is set; `legalrag train policy`
(cli/train/policy.py) samples with :func:`planner_loop`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer

from legalrag.cli._options import RolloutOptions, option_list, parse_options
from legalrag.cli.apps import app
from legalrag.cli.common import IndexOrDemoOption, JsonOption, LLMOption, llm_spec, print_json, root
from legalrag.wiring import LLM_RERANKERS

agents_app = typer.Typer(no_args_is_help=True, help="The statute agents' planner: rollouts and their stability.")
app.add_typer(agents_app, name="agents")


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


def load_training_queries(idx: Any, path: Path, first: int = 0, skip: int = 0):
    """Queries with gold (training and rollouts score against it), the ``skip``..``skip+first`` slice."""
    from legalrag.errors import InputError
    from legalrag.evaluation.datasets import load_queries

    qs = load_queries(path, idx, require_gold=False)
    for i, q in enumerate(qs, 1):
        if not q.gold_ids:
            raise InputError(f"query {q.id!r} has no gold articles: training and rollouts need gold "
                             "(gold_ids or gold_names on every line)", path=str(path), line=i, field="gold_ids")
    qs = qs[skip:]
    return qs[:first] if first else qs


def planner_loop(ctx: typer.Context, idx: Any, *, retriever: Optional[str], model: Optional[str],
                 policy: Optional[Path], endpoint: Optional[str], endpoint_model: Optional[str],
                 threads: Optional[int], max_rounds: int, llm: Any = None, fused: bool = False):
    """A PlannerLoop on a RecordingLLM over the index's first stage (and its light reranker, if any)."""
    from legalrag.agents.planner import PlannerConfig, PlannerLoop
    from legalrag.training.policy.trajectory import RecordingLLM
    from legalrag.retrieval.pipeline import build_pipeline
    from legalrag.wiring import index_language, make_policy_llm

    if llm is None:
        llm = (make_policy_llm(policy, model, threads=threads) if policy is not None
               else root(ctx).make_llm(model, endpoint, endpoint_model, threads=threads))
    cfg = PlannerConfig(lang=index_language(idx), max_rounds=max_rounds, fused=fused)
    return PlannerLoop(RecordingLLM(llm), build_pipeline(idx, retriever).retriever,
                       light_reranker=light_reranker(idx), config=cfg)


def variability_table(summary: dict, title: str):
    from rich.table import Table

    table = Table(title=title)
    for col in ("queries", "rollouts", "max", "mean", "min", *summary["categories"]):
        table.add_column(col, justify="right")
    table.add_row(str(summary["queries"]), str(summary["rollouts_per_query"]),
                  *(f"{summary[k]:.4f}" for k in ("max", "mean", "min")),
                  *(str(v) for v in summary["categories"].values()))
    return table


@agents_app.command("rollouts")
def rollouts_cmd(
    ctx: typer.Context,
    index: IndexOrDemoOption = None,
    queries: Path = typer.Option(..., "--queries", help="Query JSONL with gold (query_id, query, gold_ids/names)."),
    out: Path = typer.Option(..., "--out", help="Trajectories JSONL (appended per query; a rerun resumes)."),
    model: LLMOption = None,
    option: List[str] = option_list(RolloutOptions, "The rollouts, the planner loop's bounds and seeds, KEY=VALUE, "
                                                    "repeatable"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="PNG: per-query max / mean / min pool recall."),
    as_json: JsonOption = False,
) -> None:
    """Run the planner loop N times per query (sampling at the agents' temperatures, different seeds), write
    every trajectory, and report per-query max / mean / min pool recall and LegalMALR's stability categories.
    Without --index: the default index, as `search`; threads: the runtime.threads setting."""
    o = parse_options(RolloutOptions, option)
    max_rounds, fused_planner, seed, threads, n, skip = o.max_rounds, o.fused_planner, o.seed, None, o.n, o.skip
    first, retriever, policy = o.limit, o.retriever, Path(o.policy) if o.policy else None
    model, endpoint, endpoint_model = llm_spec(model)
    from tqdm import tqdm

    from legalrag.training.policy.rollouts import collect_rollouts, summarise, variability

    idx = root(ctx).index(index, progress=not as_json)
    qs = load_training_queries(idx, queries, first, skip)
    loop = planner_loop(ctx, idx, retriever=retriever, model=model, policy=policy, endpoint=endpoint,
                        endpoint_model=endpoint_model, threads=threads, max_rounds=max_rounds, fused=fused_planner)
    from legalrag.training.policy.rollouts import read_rollouts

    seen: dict[str, set[int]] = {}
    for t in read_rollouts(out):
        seen.setdefault(t.query_id, set()).add(t.rollout)
    bar = tqdm(total=len(qs), initial=sum(len(seen.get(q.id, ())) >= n for q in qs), desc="rollouts", unit="query")
    recalls: list[float] = []

    def progress(q, group) -> None:
        recalls.extend(t.pool_recall for t in group)
        bar.update(1)
        bar.set_postfix(pool_recall=f"{sum(recalls) / len(recalls):.3f}")

    trajs = collect_rollouts(loop, qs, out, n=n, base_seed=seed, progress=progress)
    bar.close()
    wanted = {q.id for q in qs}
    rows = variability(t for t in trajs if t.query_id in wanted)
    summary = summarise(rows)
    if plot is not None:
        from legalrag.evaluation.plots import plot_series

        ordered = sorted(rows, key=lambda r: -r.mean)
        plot_series({k: [getattr(r, k) for r in ordered] for k in ("max", "mean", "min")}, plot,
                    x=list(range(1, len(ordered) + 1)), xlabel="query (by mean pool recall)",
                    ylabel="pool recall", title=f"{n} rollouts per query")
    if as_json:
        print_json(summary)
        return
    from rich.console import Console

    Console().print(variability_table(summary, f"pool recall over {n} rollouts ({out.name})"))
