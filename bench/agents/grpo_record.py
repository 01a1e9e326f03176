"""Print a `legalrag train policy` run's per-step record (training.json in the policy directory, or the
checkpoint of a run still going) as a markdown table, with the means over steps, and what the trajectories
of each step did (read from the run's working directory, ``.NAME.work/trajectories``): how many tried to
exit before any reformulation was retrieved, planner decisions and rounds per trajectory.

    python bench/agents/grpo_record.py runs/policy-0.5b [--plot docs/grpo_steps_0.5b.png] [--window 8]

Each step of a one-group-per-step run sees a new query, so the per-step reward follows that query's
difficulty; the running means over ``--window`` steps are what show a trend.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from legalrag.training.policy.rollouts import TRAJECTORY_MEASURES as MEASURES

BEHAVIOUR = {"early_exit_share": "tried to exit before any reformulation", "planner_decisions": "planner decisions",
             "rounds": "rounds (agent rewrites)"}


def load_rows(policy: Path) -> list[dict]:
    f = policy / "training.json"
    if f.exists():
        return json.loads(f.read_text(encoding="utf-8"))["steps"]
    state = policy.parent / f".{policy.name}.work" / "checkpoint" / "state.json"
    if not state.exists():
        sys.exit(f"{policy}: neither training.json nor a checkpoint ({state}) exists; run `legalrag train policy`")
    return json.loads(state.read_text(encoding="utf-8"))["steps"]


def behaviour(policy: Path, step: int) -> dict[str, float] | None:
    """Per-step means over the step's trajectories, or None when the run's trajectories are not on disk."""
    f = policy.parent / f".{policy.name}.work" / "trajectories" / f"step-{step:05d}.jsonl"
    if not f.exists():
        return None
    trajs = [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not trajs:
        return None
    return {name: statistics.fmean(MEASURES[measure](t) for t in trajs) for name, measure in BEHAVIOUR.items()}


def running_mean(values: list[float], window: int) -> list[float]:
    return [statistics.fmean(values[max(0, i + 1 - window):i + 1]) for i in range(len(values))]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("policy", nargs="?", default="runs/policy-0.5b")
    ap.add_argument("--plot", type=Path, help="PNG: per-step mean reward, pool recall and early-exit share with "
                                              "their running means")
    ap.add_argument("--window", type=int, default=8, help="steps in the running means (default 8)")
    args = ap.parse_args(argv)
    policy = Path(args.policy)
    rows = load_rows(policy)
    if not rows:
        sys.exit(f"{policy}: the run has no completed step yet")
    extra = {r["step"]: behaviour(policy, r["step"]) for r in rows}
    cols = ["step", "mean_reward", "reward_std", "pool_recall", "zero_std_groups", "unusable_replies", "llm_calls",
            "reply_tokens", "sample_seconds", "seconds", "peak_memory_gib"]
    have = all(v is not None for v in extra.values())
    bcols = ["early_exit_share", "planner_decisions", "rounds"] if have else []
    print("| " + " | ".join(cols + bcols) + " |")
    print("|" + "---|" * len(cols + bcols))
    for r in rows:
        vals = [r[c] for c in cols] + [extra[r["step"]][c] for c in bcols]
        print("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in vals) + " |")
    print(f"\nsteps: {len(rows)}; mean seconds/step {statistics.fmean(r['seconds'] for r in rows):.1f} "
          f"(sampling {statistics.fmean(r['sample_seconds'] for r in rows):.1f}, update "
          f"{statistics.fmean(r['seconds'] - r['sample_seconds'] for r in rows):.1f}); peak memory "
          f"{max(r['peak_memory_gib'] for r in rows):.2f} GiB; mean reward "
          f"{statistics.fmean(r['mean_reward'] for r in rows):.3f}, pool recall "
          f"{statistics.fmean(r['pool_recall'] for r in rows):.3f}")
    if have:
        half = len(rows) // 2
        for name, part in (("first half", rows[:half]), ("second half", rows[half:])):
            if part:
                print(f"{name} (steps {part[0]['step']}-{part[-1]['step']}): mean reward "
                      f"{statistics.fmean(r['mean_reward'] for r in part):.3f}, pool recall "
                      f"{statistics.fmean(r['pool_recall'] for r in part):.3f}, early-exit share "
                      f"{statistics.fmean(extra[r['step']]['early_exit_share'] for r in part):.3f}, rounds "
                      f"{statistics.fmean(extra[r['step']]['rounds'] for r in part):.2f}")
    if args.plot is not None:
        from legalrag.evaluation.plots import plot_series

        steps = [r["step"] for r in rows]
        reward = [r["mean_reward"] for r in rows]
        recall = [r["pool_recall"] for r in rows]
        series = {"mean reward": reward, f"mean reward, running mean of {args.window}": running_mean(reward, args.window),
                  "pool recall": recall, f"pool recall, running mean of {args.window}": running_mean(recall, args.window)}
        if have:
            exits = [extra[s]["early_exit_share"] for s in steps]
            series[f"share trying to exit early, running mean of {args.window}"] = running_mean(exits, args.window)
        plot_series(series, args.plot, x=steps, xlabel="GRPO step (one query of 4 trajectories each)", ylabel="",
                    ylim=(-0.5, 1.05), title=f"GRPO: {policy.name}")
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
