"""Compare what two `legalrag agents rollouts` files did, on the queries both cover: per-rollout means of
pool recall, reward, LLM calls, reply tokens, seconds, planner decisions and rounds, the share of rollouts
that tried to exit before any reformulation was retrieved, and a paired randomization test over queries
(each query's mean over its rollouts) for pool recall and reward.

    python bench/agents/rollout_behaviour.py runs/rollouts-untrained-heldout25.jsonl runs/rollouts-trained-heldout25.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from legalrag.evaluation.compare import paired_randomization_test
from legalrag.training.policy.rollouts import TRAJECTORY_MEASURES as MEASURES


def load(path: Path) -> dict[str, list[dict]]:
    if not path.exists():
        sys.exit(f"{path}: no such rollout file; write it with `legalrag agents rollouts --out {path}`")
    by_query: dict[str, list[dict]] = defaultdict(list)
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                t = json.loads(line)
            except json.JSONDecodeError as exc:
                sys.exit(f"{path}:{n}: not JSON ({exc.msg}); the file may have been cut: rerun the rollouts to "
                         "complete it")
            by_query[str(t["query_id"])].append(t)
    return by_query


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    args = ap.parse_args(argv)
    a, b = load(args.a), load(args.b)
    common = [q for q in a if q in b]
    if not common:
        sys.exit("the two files share no query")
    print(f"{len(common)} queries in both; rollouts: {sum(len(a[q]) for q in common)} / "
          f"{sum(len(b[q]) for q in common)}\n")
    print(f"| per rollout, mean | {args.a.stem} | {args.b.stem} | p (paired over queries) |")
    print("|---|---|---|---|")
    for name, f in MEASURES.items():
        qa = [statistics.fmean(f(t) for t in a[q]) for q in common]
        qb = [statistics.fmean(f(t) for t in b[q]) for q in common]
        p = paired_randomization_test(qa, qb)
        print(f"| {name} | {statistics.fmean(qa):.3f} | {statistics.fmean(qb):.3f} | {p:.4f} |")


if __name__ == "__main__":
    main()
