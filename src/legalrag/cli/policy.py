"""`legalrag agents rollouts` (N seeded planner rollouts per query, and their stability) and
`legalrag train policy` (GRPO on the planner and rewriting agents' LoRA adapters)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer

from legalrag.cli._options import RolloutOptions, option_list, parse_options
from legalrag.cli._train_options import PolicyOptions
from legalrag.cli.apps import app
from legalrag.cli.common import IndexOption, IndexOrDemoOption, JsonOption, LLMOption, llm_spec, print_json, root
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
                 threads: Optional[int], max_rounds: int, llm: Any = None, fused: bool = False):
    """A PlannerLoop on a RecordingLLM over the index's first stage (and its light reranker, if any)."""
    from legalrag.agents.planner import PlannerConfig, PlannerLoop
    from legalrag.cli.agents import light_reranker
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


def _sampler_factory(ctx: typer.Context, idx: Any, *, model_name: str, base: dict, settings: Any, reward: Any,
                     work: Path, retriever: Optional[str], threads: Optional[int], max_rounds: int,
                     fused: bool = False):
    """Each step: export the current adapters as a llama.cpp adapter and sample with the embedded runtime."""
    from legalrag.training.policy.model import save_policy
    from legalrag.training.policy.trajectory import run_rollout
    from legalrag.wiring import make_policy_llm

    held: list[Any] = []

    def make_sampler(model: Any):
        for old in held:  # one llama.cpp model at a time
            getattr(old, "close", lambda: None)()
        held.clear()
        save_policy(work / "sampler", model, base=base, settings=settings, reward=reward.as_dict())
        llm = make_policy_llm(work / "sampler", model_name, cache=False, threads=threads)
        held.append(llm)
        loop = planner_loop(ctx, idx, retriever=retriever, model=None, policy=None, endpoint=None,
                            endpoint_model=None, threads=threads, max_rounds=max_rounds, llm=llm, fused=fused)
        return lambda q, seed: run_rollout(loop, q, rollout=seed, seed=seed)

    return make_sampler


@train_app.command("policy")
def train_policy_cmd(
    ctx: typer.Context,
    index: IndexOption = None,
    queries: Path = typer.Option(..., "--queries", help="Training queries with gold (query_id, query, gold_ids)."),
    out: Path = typer.Option(..., "--out", help="Policy directory to write (read by --policy DIR)."),
    model: str = typer.Option("qwen2.5-0.5b", "--model", help="Base model: qwen2.5-coder-0.5b (id qwen2.5-0.5b), "
                              "qwen2.5-coder-1.5b or a GGUF path."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="PNG: mean reward and pool recall per step."),
    option: List[str] = option_list(PolicyOptions, "GRPO, LoRA and reward settings (GRPOSettings, RewardSettings), "
                                                   "the queries and the planner loop, KEY=VALUE, repeatable"),
) -> None:
    """GRPO on the planner and rewriting agents (one model, LoRA adapters on a frozen base): G rollouts per
    query sampled by the embedded runtime with the current adapters, rewards normalised within each group,
    the policy-gradient update computed with transformers + peft. Resumable; a GPU is used when present."""
    o = parse_options(PolicyOptions, option)
    first, skip, max_steps, retriever, threads = o.limit, o.skip, o.max_steps, o.retriever, o.threads
    max_rounds, fused_planner, restart = o.max_rounds, o.fused_planner, o.restart
    index = root(ctx).index_path(index)
    from legalrag.training import checkpoint as ckpt
    from legalrag.training.policy.grpo import GRPOSettings, chat_encoder
    from legalrag.training.policy.model import add_lora, load_base, save_policy
    from legalrag.training.policy.reward import RewardSettings
    from legalrag.training.policy.store import base_identity
    from legalrag.training.policy.trainer import fingerprint_of, train_policy

    settings = GRPOSettings(**o.grpo())
    reward = RewardSettings(**o.reward())
    idx = root(ctx).index(index)
    qs = load_training_queries(idx, queries, first, skip)
    base = base_identity(model)
    work = ckpt.open_work(out, restart)
    fp = fingerprint_of(base["id"], qs, settings, reward, {"index": str(idx.manifest.get("corpus", {}).get(
        "sha256", "")), "retriever": retriever, "max_rounds": max_rounds,
        **({"fused_planner": True} if fused_planner else {})})
    import torch

    if threads:
        torch.set_num_threads(threads)
    typer.echo(f"loading {model} for training (dequantised to fp32 on CPU, bf16 on GPU)", err=True)
    lm, tok = load_base(model)
    if torch.cuda.is_available():
        lm = lm.to(device="cuda", dtype=torch.bfloat16)
    lm = add_lora(lm, settings)
    make_sampler = _sampler_factory(ctx, idx, model_name=model, base=base, settings=settings, reward=reward,
                                    work=work, retriever=retriever, threads=threads, max_rounds=max_rounds,
                                    fused=fused_planner)
    record = train_policy(lm, chat_encoder(tok, settings.max_prompt_tokens), qs, make_sampler, settings=settings,
                          reward_settings=reward, work=work, fingerprint=fp, max_steps=max_steps)
    record.update(base=base, queries=str(queries), n_queries=len(qs), device="cuda" if torch.cuda.is_available()
                  else "cpu")
    save_policy(out, lm, base=base, settings=settings, reward=reward.as_dict(), record=record)
    if plot is not None and record["steps"]:
        from legalrag.evaluation.plots import plot_series

        rows = record["steps"]
        plot_series({"mean reward": [r["mean_reward"] for r in rows], "pool recall": [r["pool_recall"] for r in rows]},
                    plot, x=[r["step"] for r in rows], xlabel="GRPO step", ylabel="", ylim=(-0.5, 1.05),
                    title=f"GRPO on {model}: G={settings.group_size}, {settings.groups_per_step} groups/step")
    print_json({"out": str(out), "completed_steps": record["completed_steps"], "total_steps": record["total_steps"],
                "last": record["steps"][-1] if record["steps"] else None})
