"""Two configurations of a statute-agent benchmark side by side, per query, as a Markdown table.

For each query both configurations ran on (``bench_agents.py --out`` rows): wall seconds, LLM calls, prompt +
completion tokens, pool recall (gold articles in the merged pool / gold articles), Recall@10 and MRR@10; then
the means and what the second configuration saves against the first.

    python bench/agents/agents_paired.py runs/fused-planner/agents-fused-20.json planner planner-fused
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

COLUMNS = (("seconds", "s", "{:.1f}"), ("llm_calls", "calls", "{:d}"), ("prompt_tokens", "prompt tok", "{:d}"),
           ("completion_tokens", "compl. tok", "{:d}"), ("pool_recall", "pool R", "{:.2f}"),
           ("recall", "R@10", "{:.2f}"), ("mrr", "MRR@10", "{:.2f}"))


def paired_rows(result: dict, a: str, b: str) -> list[tuple[dict, dict]]:
    by_b = {r["query_id"]: r for r in result["rows"][b]}
    return [(r, by_b[r["query_id"]]) for r in result["rows"][a] if r["query_id"] in by_b]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result", type=Path, help="a bench_agents.py --out file")
    ap.add_argument("a", help="the reference configuration (e.g. planner)")
    ap.add_argument("b", help="the configuration compared with it (e.g. planner-fused)")
    args = ap.parse_args()
    pairs = paired_rows(json.loads(args.result.read_text(encoding="utf-8")), args.a, args.b)
    if not pairs:
        raise SystemExit(f"no query has rows for both {args.a!r} and {args.b!r}")
    head = ["query_id"] + [f"{label} ({name})" for _, label, _ in COLUMNS for name in ("a", "b")]
    print(f"a = {args.a}, b = {args.b}, {len(pairs)} queries\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for ra, rb in pairs:
        cells = [str(ra["query_id"])]
        for key, _, fmt in COLUMNS:
            cells += [fmt.format(type(ra[key])(ra[key])), fmt.format(type(rb[key])(rb[key]))]
        print("| " + " | ".join(cells) + " |")
    means = ["**mean**"]
    for key, _, _ in COLUMNS:
        means += [f"{statistics.fmean(ra[key] for ra, _ in pairs):.2f}",
                  f"{statistics.fmean(rb[key] for _, rb in pairs):.2f}"]
    print("| " + " | ".join(means) + " |\n")
    for key in ("seconds", "llm_calls", "prompt_tokens", "completion_tokens"):
        ta, tb = sum(r[key] for r, _ in pairs), sum(r[key] for _, r in pairs)
        print(f"{key}: {ta:.1f} -> {tb:.1f} in total ({(tb - ta) / ta:+.1%})")
    tokens_a = sum(r["prompt_tokens"] + r["completion_tokens"] for r, _ in pairs)
    tokens_b = sum(r["prompt_tokens"] + r["completion_tokens"] for _, r in pairs)
    print(f"tokens: {tokens_a} -> {tokens_b} in total ({(tokens_b - tokens_a) / tokens_a:+.1%})")
    for key in ("rounds", "refused_exits", "failures", "repairs"):
        print(f"{key}: {sum(r.get(key, 0) for r, _ in pairs)} -> {sum(r.get(key, 0) for _, r in pairs)}")


if __name__ == "__main__":
    main()
