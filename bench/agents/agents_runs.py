"""Write each configuration of a statute-agent benchmark as a TREC run file, and its query subset as a query
file, so that ``legalrag eval compare`` can test the configurations against each other.

    python bench/agents/agents_runs.py runs/agents-50.json --out runs/agents-50-runs
    legalrag eval compare runs/agents-50-runs/{baseline,listwise,planner}.trec \
        --queries runs/agents-50-runs/queries.jsonl -o k=10 -o depth=10 --plot recall.png

The benchmark keeps each configuration's top 10, so the runs are 10 deep.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from legalrag.io import atomic_write_text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result", type=Path, help="a bench_agents.py --out file")
    ap.add_argument("--out", type=Path, required=True, help="directory for CONFIG.trec files and queries.jsonl")
    args = ap.parse_args()
    data = json.loads(args.result.read_text(encoding="utf-8"))
    gold: dict[int, list[str]] = {}
    for config, rows in data["rows"].items():
        lines = []
        for row in rows:
            gold.setdefault(int(row["query_id"]), row["gold"])
            lines += [f"{row['query_id']} Q0 {d} {rank} {1.0 / rank:.6f} {config}"
                      for rank, d in enumerate(row["top10"], 1)]
        atomic_write_text(args.out / f"{config}.trec", "".join(line + "\n" for line in lines))
    atomic_write_text(args.out / "queries.jsonl", "".join(
        json.dumps({"query_id": q, "query": f"query {q}", "gold_ids": g}) + "\n" for q, g in sorted(gold.items())))
    print(f"{len(data['rows'])} runs and {len(gold)} queries written to {args.out}")


if __name__ == "__main__":
    main()
