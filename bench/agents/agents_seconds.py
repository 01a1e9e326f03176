"""Wall seconds per query of a statute-agent benchmark that was run in several resumed parts.

``bench_agents.py`` replays cached LLM calls in milliseconds, so a resumed run's seconds are only real for the
queries it computed first. Give the runs' ``--out`` files oldest first: each query's seconds are taken from
the first file that holds it, and the mean per configuration is printed with how many queries each file
contributed.

    python bench/agents/agents_seconds.py runs/agents-50.json runs/agents-50-cont.json runs/agents-50-final.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def first_seconds(runs: list[dict]) -> dict[str, dict[int, tuple[float, int]]]:
    """config -> query_id -> (seconds, index of the run it came from)."""
    out: dict[str, dict[int, tuple[float, int]]] = {}
    for i, run in enumerate(runs):
        for config, rows in run["rows"].items():
            seen = out.setdefault(config, {})
            for row in rows:
                seen.setdefault(int(row["query_id"]), (float(row["seconds"]), i))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="bench_agents.py --out files, oldest first")
    args = ap.parse_args()
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in args.runs]
    print(f"{'config':18} {'n':>3} {'s/q':>6}  queries per run")
    for config, per_query in first_seconds(runs).items():
        secs = [s for s, _ in per_query.values()]
        counts = [sum(1 for _, i in per_query.values() if i == k) for k in range(len(runs))]
        print(f"{config:18} {len(secs):3d} {sum(secs) / len(secs):6.1f}  {counts}")


if __name__ == "__main__":
    main()
