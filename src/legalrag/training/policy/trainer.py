"""The GRPO training loop: sample G trajectories per query with the current adapters, score, normalise,
update; a checkpoint after every step (adapters, optimiser, scheduler, the record so far), so a killed run
resumes at the step it was in. Step k's rollout seeds depend only on (seed, k, query, g), so a resumed step
samples what the interrupted one would have."""

from __future__ import annotations

import json
import math
import random
import resource
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

from legalrag.errors import InputError
from legalrag.io import write_jsonl
from legalrag.training import checkpoint as ckpt
from legalrag.training.policy.grpo import (Encoder, GRPOSettings, group_advantages, make_optimizer,
                                           policy_gradient_step)
from legalrag.training.policy.model import AdapterSaver, load_adapter_weights
from legalrag.training.policy.reward import RewardSettings, reward_of
from legalrag.training.policy.trajectory import Trajectory
from legalrag.types import Query

Sampler = Callable[[Query, int], Trajectory]  # one rollout of the current policy on a query, with a seed


def peak_memory_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2  # KiB on Linux


def _batches(n_queries: int, settings: GRPOSettings) -> list[list[int]]:
    out: list[list[int]] = []
    for epoch in range(settings.epochs):
        order = list(range(n_queries))
        random.Random(settings.seed * 7919 + epoch).shuffle(order)
        out += [order[i:i + settings.groups_per_step] for i in range(0, n_queries, settings.groups_per_step)]
    return out


def train_policy(model: Any, encode: Encoder, queries: Sequence[Query], make_sampler: Callable[[Any], Sampler], *,
                 settings: GRPOSettings, reward_settings: RewardSettings, work: Path, fingerprint: str,
                 progress: bool = True, max_steps: int | None = None) -> dict[str, Any]:
    """Train ``model`` (a peft model) in place; returns the training record. ``make_sampler(model)`` is
    called at the start of each step and returns a sampler that uses the adapters as they are then."""
    missing = [q.id for q in queries if not q.gold_ids]
    if missing:
        raise InputError(f"training needs gold articles; queries without gold: {missing[:5]}", field="gold_ids")
    batches = _batches(len(queries), settings)
    total = len(batches)
    optimizer, scheduler = make_optimizer(model, settings, total)
    rows: list[dict[str, Any]] = []
    start = 0
    state = ckpt.load_checkpoint(work, fingerprint)
    if state is not None:
        load_adapter_weights(model, ckpt.checkpoint_model_dir(work))
        ckpt.restore_optimiser(work, optimizer, scheduler)
        start, rows = state["step"], state["steps"]
    stop = total if max_steps is None else min(total, max_steps)
    from tqdm import tqdm

    bar = tqdm(total=stop, initial=start, desc="grpo", unit="step", disable=not progress)
    for step in range(start, stop):
        t0 = time.perf_counter()
        sample = make_sampler(model)
        batch: list[tuple[float, Sequence[dict]]] = []
        trajs: list[Trajectory] = []
        rewards: list[float] = []
        group_stds: list[float] = []
        skipped = 0
        for qi in batches[step]:
            q = queries[qi]
            group = [sample(q, settings.seed * 1_000_003 + step * 10_007 + qi * 101 + g)
                     for g in range(settings.group_size)]
            parts = [reward_of(t, reward_settings) for t in group]
            rs = [p.total for p in parts]
            adv = group_advantages(rs, settings.adv_eps)
            skipped += all(a == 0.0 for a in adv)
            group_stds.append(statistics.pstdev(rs))
            for t, p, a in zip(group, parts, adv):
                trajs.append(replace(t, reward={**p.as_dict(), "advantage": round(a, 6)}))
                batch.append((a, t.calls))
            rewards += rs
        sample_s = time.perf_counter() - t0
        stats = policy_gradient_step(model, optimizer, scheduler, encode, batch, settings.max_grad_norm)
        row = {"step": step + 1, "queries": [queries[i].id for i in batches[step]],
               "mean_reward": statistics.fmean(rewards), "reward_std": statistics.pstdev(rewards),
               "mean_group_std": statistics.fmean(group_stds), "zero_std_groups": skipped,
               "pool_recall": statistics.fmean(t.pool_recall for t in trajs),
               "unusable_replies": sum(t.failures for t in trajs), "llm_calls": sum(len(t.calls) for t in trajs),
               **stats, "lr": scheduler.get_last_lr()[0], "sample_seconds": round(sample_s, 2),
               "seconds": round(time.perf_counter() - t0, 2), "peak_memory_gib": round(peak_memory_gib(), 3)}
        rows.append(row)
        write_jsonl(work / "trajectories" / f"step-{step + 1:05d}.jsonl", [t.to_dict() for t in trajs])
        ckpt.save_checkpoint(work, AdapterSaver(model), optimizer, scheduler,
                             {"fingerprint": fingerprint, "step": step + 1, "steps": rows})
        bar.update(1)
        bar.set_postfix(reward=f"{row['mean_reward']:.3f}", std=f"{row['reward_std']:.3f}",
                        recall=f"{row['pool_recall']:.3f}")
    bar.close()
    return {"settings": settings.as_dict(), "reward": reward_settings.as_dict(), "total_steps": total,
            "completed_steps": len(rows), "steps": rows}


def fingerprint_of(base_id: str, queries: Sequence[Query], settings: GRPOSettings, reward: RewardSettings,
                   extra: dict[str, Any] | None = None) -> str:
    import hashlib

    blob = json.dumps({"base": base_id, "queries": [(q.id, q.text, list(q.gold_ids)) for q in queries],
                       "grpo": settings.as_dict(), "reward": reward.as_dict(), **(extra or {})}, sort_keys=True,
                      ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]


def total_steps(n_queries: int, settings: GRPOSettings) -> int:
    return settings.epochs * math.ceil(n_queries / settings.groups_per_step)
