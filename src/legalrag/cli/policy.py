"""`legalrag agents rollouts` (N seeded planner rollouts per query, and their stability) and
`legalrag train policy` (GRPO on the planner and rewriting agents' LoRA adapters)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from legalrag.cli.apps import app
from legalrag.cli.common import print_json, root
from legalrag.cli.train import train_app

agents_app = typer.Typer(no_args_is_help=True, help="The statute agents' planner: rollouts and their stability.")
app.add_typer(agents_app, name="agents")


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
                 threads: Optional[int], max_rounds: int, llm: Any = None):
    """A PlannerLoop on a RecordingLLM over the index's first stage (and its light reranker, if any)."""
    from legalrag.agents.planner import PlannerConfig, PlannerLoop
    from legalrag.cli.agents import light_reranker
    from legalrag.training.policy.trajectory import RecordingLLM
    from legalrag.wiring import build_pipeline, index_language, make_policy_llm

    if llm is None:
        llm = (make_policy_llm(policy, model, threads=threads) if policy is not None
               else root(ctx).make_llm(model, endpoint, endpoint_model, threads=threads))
    cfg = PlannerConfig(lang=index_language(idx), max_rounds=max_rounds)
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
    index: Path = typer.Option(..., "--index", help="Index directory (its first stage retrieves each query)."),
    queries: Path = typer.Option(..., "--queries", help="Query JSONL with gold (query_id, query, gold_ids/names)."),
    out: Path = typer.Option(..., "--out", help="Trajectories JSONL (appended per query; a rerun resumes)."),
    n: int = typer.Option(8, "--n", min=1, help="Rollouts per query (seeds 0, 1000, 2000, ...)."),
    first: int = typer.Option(0, "--first", min=0, help="Only the first N queries (after --skip); 0 = all."),
    skip: int = typer.Option(0, "--skip", min=0, help="Skip the first N queries of the file."),
    retriever: Optional[str] = typer.Option(None, "--retriever", help="Index component (default: the first built)."),
    model: Optional[str] = typer.Option(None, "--model", help="Embedded model (qwen2.5-0.5b, qwen2.5-1.5b, GGUF)."),
    policy: Optional[Path] = typer.Option(None, "--policy", help="A trained policy directory (its LoRA adapter)."),
    endpoint: Optional[str] = typer.Option(None, "--endpoint", help="OpenAI-compatible endpoint URL."),
    endpoint_model: Optional[str] = typer.Option(None, "--endpoint-model", help="Model name at --endpoint."),
    threads: Optional[int] = typer.Option(None, "--threads", min=1, help="Threads of the embedded model."),
    max_rounds: int = typer.Option(4, "--max-rounds", min=1, max=10),
    seed: int = typer.Option(0, "--seed", help="Base seed; rollout r uses seed + 1000 r."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="PNG: per-query max / mean / min pool recall."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Run the planner loop N times per query (sampling at the agents' temperatures, different seeds), write
    every trajectory, and report per-query max / mean / min pool recall and LegalMALR's stability categories."""
    from tqdm import tqdm

    from legalrag.training.policy.rollouts import collect_rollouts, summarise, variability

    idx = root(ctx).open_index(index)
    qs = load_training_queries(idx, queries, first, skip)
    loop = planner_loop(ctx, idx, retriever=retriever, model=model, policy=policy, endpoint=endpoint,
                        endpoint_model=endpoint_model, threads=threads, max_rounds=max_rounds)
    bar = tqdm(total=len(qs), desc="rollouts", unit="query")
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
