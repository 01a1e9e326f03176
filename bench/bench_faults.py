"""Crash-consistency fault injection at scale: for each fault kind, fork a writer, SIGKILL it at a random
moment, check the state on disk; repeat. Prints per kind: injected, valid afterwards, data lost (target 0).

    python bench/bench_faults.py --kills 100            # about 2 minutes on 2 cores
    python bench/bench_faults.py --kinds "index build,LLM call cache" --kills 300 --json out.json

The fault kinds and their checks are in tests/crash_workers.py (shared with tests/test_crash_consistency.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from crash_workers import FAULTS, run_fault  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=100, help="kills per fault kind")
    ap.add_argument("--kinds", default=",".join(FAULTS), help="comma-separated fault kinds")
    ap.add_argument("--max-delay", type=float, default=0.5, help="kill within this many seconds of the start")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="write the table here as JSON")
    args = ap.parse_args()
    from rich.console import Console
    from rich.table import Table

    rows = []
    with tempfile.TemporaryDirectory(prefix="legalrag-faults-") as tmp:
        os.environ["LEGALRAG_HOME"] = str(Path(tmp) / "home")
        for i, kind in enumerate(k.strip() for k in args.kinds.split(",") if k.strip()):
            t0 = time.perf_counter()
            outcomes = run_fault(kind, Path(tmp) / f"k{i}", args.kills, seed=args.seed + i, max_delay=args.max_delay)
            bad = [o.detail for o in outcomes if not o.valid or o.lost]
            rows.append({"fault": kind, "injected": len(outcomes), "valid": sum(o.valid for o in outcomes),
                         "data_lost": sum(o.lost for o in outcomes), "seconds": round(time.perf_counter() - t0, 1),
                         "examples_of_failures": bad[:3]})
            print(f"{kind}: {rows[-1]}", file=sys.stderr)
    table = Table(title=f"SIGKILL fault injection ({args.kills} kills per kind, kill within {args.max_delay} s)")
    for col in ("fault kind", "injected", "valid afterwards", "data lost", "seconds"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["fault"], str(r["injected"]), str(r["valid"]), str(r["data_lost"]), str(r["seconds"]))
    Console().print(table)
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
