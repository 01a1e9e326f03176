"""`legalrag train policy`: GRPO on the planner and rewriting agents' LoRA adapters (the rollouts it learns
from: `legalrag agents rollouts`, cli/agents.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer

from legalrag.cli._options import option_list, parse_options
from legalrag.cli._train_options import PolicyOptions
from legalrag.cli.agents import load_training_queries, planner_loop
from legalrag.cli.apps import train_app
from legalrag.cli.common import BenchIndexOption, print_json, root


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
    index: BenchIndexOption = None,
    queries: Path = typer.Option(..., "--queries", help="Training queries with gold (query_id, query, gold_ids)."),
    out: Path = typer.Option(..., "--out", help="Policy directory to write (read by `search --agents -o "
                             "policy=DIR` and `serve -o policy=DIR`)."),
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
    idx = root(ctx).index(index, snapshot=True)
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
