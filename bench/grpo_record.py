"""Print a `legalrag train policy` run's per-step record (training.json in the policy directory, or the
checkpoint of a run still going) as a markdown table, with the means over steps.

    python bench/grpo_record.py runs/policy-0.5b
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def main(policy: str) -> None:
    p = Path(policy)
    f = p / "training.json"
    rows = json.loads(f.read_text(encoding="utf-8"))["steps"] if f.exists() else \
        json.loads((p.parent / f".{p.name}.work" / "checkpoint" / "state.json").read_text(encoding="utf-8"))["steps"]
    cols = ["step", "mean_reward", "reward_std", "pool_recall", "zero_std_groups", "unusable_replies", "llm_calls",
            "reply_tokens", "sample_seconds", "seconds", "peak_memory_gib"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f"{r[c]:.3f}" if isinstance(r[c], float) else str(r[c]) for c in cols) + " |")
    print(f"\nsteps: {len(rows)}; mean seconds/step {statistics.fmean(r['seconds'] for r in rows):.1f} "
          f"(sampling {statistics.fmean(r['sample_seconds'] for r in rows):.1f}, update "
          f"{statistics.fmean(r['seconds'] - r['sample_seconds'] for r in rows):.1f}); peak memory "
          f"{max(r['peak_memory_gib'] for r in rows):.2f} GiB; mean reward {statistics.fmean(r['mean_reward'] for r in rows):.3f}, "
          f"pool recall {statistics.fmean(r['pool_recall'] for r in rows):.3f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/policy-0.5b")
