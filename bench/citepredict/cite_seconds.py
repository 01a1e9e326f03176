"""Wall seconds per case of a citation-prediction LLM run that was computed in several resumed or sharded parts.

``bench_cite.py`` replays cached LLM calls in milliseconds, so only the part that computed a case first has
its real seconds. Give the parts' logs (any order): each case's seconds are the largest any log printed for
it, and the table shows, per log, how many cases it computed and their mean seconds, then the mean over all
cases. Logs of parts that ran side by side (``--shard I/N``) report each process's own seconds per case.

    python bench/citepredict/cite_seconds.py runs/cite-llm-shard0.log runs/cite-llm-shard1.log ...
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

LINE = re.compile(r"^\[\d+/\d+\] (\S+) gold=.* llm_calls=(\d+) ([\d.]+)s ")


def computed(logs: list[Path]) -> dict[str, tuple[float, int, Path]]:
    """case id -> (seconds, LLM calls, the log that computed it): the log with the most seconds for the case."""
    best: dict[str, tuple[float, int, Path]] = {}
    for log in logs:
        for line in log.read_text(encoding="utf-8").splitlines():
            m = LINE.match(line)
            if not m:
                continue
            case, calls, secs = m.group(1), int(m.group(2)), float(m.group(3))
            if case not in best or secs > best[case][0]:
                best[case] = (secs, calls, log)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", type=Path, help="bench_cite.py logs (the printed per-case lines)")
    ap.add_argument("--min-s", type=float, default=1.0,
                    help="a case whose largest seconds are below this was never computed in these logs")
    args = ap.parse_args()
    for log in args.logs:
        if not log.is_file():
            raise SystemExit(f"{log}: no such log file")
    best = computed(args.logs)
    real = {c: v for c, v in best.items() if v[0] >= args.min_s}
    print(f"{'log':40} {'cases':>5} {'s/case':>7} {'calls/case':>10}")
    for log in args.logs:
        rows = [v for v in real.values() if v[2] == log]
        if rows:
            print(f"{log.name:40} {len(rows):5d} {sum(r[0] for r in rows) / len(rows):7.1f} "
                  f"{sum(r[1] for r in rows) / len(rows):10.1f}")
    if real:
        print(f"{'all computed cases':40} {len(real):5d} {sum(r[0] for r in real.values()) / len(real):7.1f} "
              f"{sum(r[1] for r in real.values()) / len(real):10.1f}")
    missing = len(best) - len(real)
    if missing:
        print(f"{missing} cases appear only as cache replays (under {args.min_s}s) in these logs")


if __name__ == "__main__":
    main()
