"""N seeded rollouts per query, written as JSONL, and how stable the policy is across them.

The file holds one trajectory per line and grows one query at a time, so a killed run resumes: on restart
the complete queries are kept, a query with fewer than N rollouts (or a line torn by the kill) is dropped
and redone. The four stability categories are LegalMALR's, over each query's N pool recalls.
"""

from __future__ import annotations

import enum
import json
import os
import statistics
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from legalrag.errors import InputError
from legalrag.io import write_jsonl
from legalrag.training.policy.reward import RewardSettings, reward_of
from legalrag.training.policy.trajectory import Trajectory, run_rollout
from legalrag.types import Query


class Stability(str, enum.Enum):
    ALWAYS_FULL = "always fully correct"
    OCCASIONALLY_FULL = "occasionally fully correct"
    NEVER_FULL_UNSTABLE = "never fully, unstable"
    CONSISTENTLY_PARTIAL = "consistently the same, not full"


def stability(recalls: Sequence[float], tol: float = 1e-9) -> Stability:
    if not recalls:
        raise InputError("a stability category needs at least one rollout")
    full = [r >= 1.0 - tol for r in recalls]
    if all(full):
        return Stability.ALWAYS_FULL
    if any(full):
        return Stability.OCCASIONALLY_FULL
    if max(recalls) - min(recalls) > tol:
        return Stability.NEVER_FULL_UNSTABLE
    return Stability.CONSISTENTLY_PARTIAL


@dataclass(frozen=True)
class QueryVariability:
    query_id: str
    n: int
    max: float
    mean: float
    min: float
    category: Stability


def variability(trajectories: Iterable[Trajectory]) -> list[QueryVariability]:
    by_query: dict[str, list[float]] = {}
    for t in trajectories:
        by_query.setdefault(t.query_id, []).append(t.pool_recall)
    return [QueryVariability(qid, len(rs), max(rs), statistics.fmean(rs), min(rs), stability(rs))
            for qid, rs in by_query.items()]


def summarise(rows: Sequence[QueryVariability]) -> dict[str, Any]:
    """Means over queries of the per-query max / mean / min pool recall, and the category counts."""
    if not rows:
        raise InputError("no rollouts to summarise")
    return {"queries": len(rows), "rollouts_per_query": min(r.n for r in rows),
            "max": statistics.fmean(r.max for r in rows), "mean": statistics.fmean(r.mean for r in rows),
            "min": statistics.fmean(r.min for r in rows),
            "categories": {c.value: sum(r.category is c for r in rows) for c in Stability}}


def read_rollouts(path: Path) -> list[Trajectory]:
    """The trajectories in ``path``; a torn last line (a killed writer) is skipped."""
    out: list[Trajectory] = []
    if not path.exists():
        return out
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(Trajectory.from_dict(json.loads(line)))
        except (json.JSONDecodeError, TypeError) as exc:
            if i == len(lines):
                break
            raise InputError(f"not a trajectory: {exc}", path=str(path), line=i) from None
    return out


def _complete(path: Path, n: int) -> dict[str, list[Trajectory]]:
    """Complete queries already in ``path``; the file is rewritten (atomically) to hold only those."""
    by_query: dict[str, list[Trajectory]] = {}
    for t in read_rollouts(path):
        by_query.setdefault(t.query_id, []).append(t)
    done = {q: ts for q, ts in by_query.items() if len({t.rollout for t in ts}) >= n}
    kept = [t for ts in done.values() for t in ts]
    if path.exists() and len(kept) != sum(len(ts) for ts in by_query.values()):
        write_jsonl(path, [t.to_dict() for t in kept])
    return done


def collect_rollouts(loop: Any, queries: Sequence[Query], out: Path, *, n: int = 8, base_seed: int = 0,
                     settings: RewardSettings = RewardSettings(),
                     progress: Callable[[Query, list[Trajectory]], None] | None = None) -> list[Trajectory]:
    """Run ``n`` rollouts of ``loop`` (a PlannerLoop on a RecordingLLM) per query and append them to ``out``.

    Rollout r of a query uses seed ``base_seed + 1000 * r``: the same seeds across queries, so two policies
    compared on the same file see the same sampling noise."""
    if n < 1:
        raise InputError(f"--n must be >= 1, got {n}", field="n")
    missing = [q.id for q in queries if not q.gold_ids]
    if missing:
        raise InputError(f"rollouts are scored against gold articles; queries without gold: {missing[:5]}",
                         field="gold_ids")
    out.parent.mkdir(parents=True, exist_ok=True)
    done = _complete(out, n)
    result = [t for ts in done.values() for t in ts]
    for q in queries:
        if q.id in done:
            continue
        group = []
        for r in range(n):
            t = run_rollout(loop, q, rollout=r, seed=base_seed + 1000 * r)
            group.append(replace(t, reward=reward_of(t, settings).as_dict()))
        with open(out, "a", encoding="utf-8") as f:  # one query at a time, then fsync: a kill loses one query
            for t in group:
                f.write(json.dumps(t.to_dict(), ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
        result += group
        if progress is not None:
            progress(q, group)
    return result


# What one trajectory of a rollouts file (its JSON line) did, by name: the per-rollout figures the rollout
# comparisons and the training record report.
TRAJECTORY_MEASURES: dict[str, Callable[[dict[str, Any]], float]] = {
    "pool recall": lambda t: t["pool_recall"],
    "reward": lambda t: t["reward"]["total"],
    "LLM calls": lambda t: len(t["calls"]),
    "reply tokens": lambda t: sum(c.get("tokens", 0) for c in t["calls"]),
    "seconds": lambda t: t["seconds"],
    "planner decisions": lambda t: t["planner_iterations"],
    "rounds (agent rewrites)": lambda t: sum(a != "exit" for a in t["actions"]),
    "tried to exit before any reformulation": lambda t: float(t["refused_exits"] > 0),
    "unusable replies": lambda t: t["failures"],
}
