"""The evidence-budget curve: the answer benchmark (cites a gold article, keyword accuracy, supported share) and
the time to the first token at evidence budgets of 100, 200, 400 and 600 tokens and k of 3 and 6, for the
shipped 1.5B and 0.5B, each cell one ``legalrag eval answers`` run over the same questions; then the rule that
chooses the default: quality first, the smallest budget whose benchmark does not drop significantly (paired
randomization test, p < 0.05, on cites-gold and keyword accuracy) against the largest budget at the same k.

    python bench/answers/bench_evidence_curve.py run --queries runs/stard-split/dev.jsonl --index INDEX --limit 20 \
        --models qwen2.5-0.5b,qwen2.5-1.5b --out-dir runs/evidence-curve
    python bench/answers/bench_evidence_curve.py summary --out-dir runs/evidence-curve --out bench/results/evidence-curve.json
    python bench/answers/bench_evidence_curve.py floor --out-dir runs/evidence-curve --out bench/results/latency-floor.json

Each cell's file is ``<model>-k<k>-e<budget>.jsonl``; a rerun resumes it (``eval answers`` skips answered
questions). The LLM call cache is off so every answer is generated and timed. ``--cells`` restricts the grid
(``k6-e400,k3-e200``). The first-token time is the answer engine's own (retrieval, evidence selection and the
runtime's prefill), and the floor beside it is the runtime's prefill time for the same prompt (llama.cpp's
``prompt_ms``), so the overhead above the floor is their difference; ``floor`` gives the runtime's own prefill
and decode rates per model over every answer of the grid.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUDGETS = (100, 200, 400, 600)
KS = (3, 6)
CHOOSE_ON = ("cites_gold", "keyword_accuracy")


def cell_name(model: str, k: int, budget: int) -> str:
    return f"{model}-k{k}-e{budget}"


def run(args: argparse.Namespace) -> None:
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    wanted = set(args.cells.split(",")) if args.cells else None
    for model in args.models.split(","):
        for k in KS:
            for budget in BUDGETS:
                if wanted and f"k{k}-e{budget}" not in wanted:
                    continue
                name = cell_name(model, k, budget)
                print(f"[{datetime.datetime.now():%H:%M:%S}] {name}", flush=True)
                cmd = [sys.executable, "-m", "legalrag", "eval", "answers", "--queries", args.queries,
                       "--index", args.index, "--model", model, "-o", f"k={k}", "-o", f"evidence_tokens={budget}",
                       "--limit", str(args.limit), "-o", "llm_cache=false", "--no-progress", "--json",
                       "--out", str(out_dir / f"{name}.jsonl"), "-o", f"summary={out_dir / f'{name}.summary.json'}"]
                if args.threads:
                    cmd += ["--threads", str(args.threads)]
                subprocess.run(cmd, check=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO / "src")})


def _median(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 3) if xs else None


def summary(args: argparse.Namespace) -> None:
    from legalrag.evaluation.answers.run import (
        PAIRED_METRICS,
        read_run,
        row_value,
        summarise_answers,
    )
    from legalrag.evaluation.record import paired_tests

    out_dir = Path(args.out_dir)
    cells: dict[str, dict] = {}
    runs: dict[str, dict] = {}
    for path in sorted(out_dir.glob("*-k*-e*.jsonl")):
        config, rows = read_run(str(path))
        name = path.stem
        runs[name] = rows
        served = [r for r in rows.values() if r.get("ttft_s") is not None]
        over = [r["ttft_s"] - r["prefill_s"] for r in served if r.get("prefill_s") is not None]
        prefill_rate = [r["prompt_tokens_evaluated"] / r["prefill_s"] for r in served
                        if r.get("prefill_s") and r.get("prompt_tokens_evaluated")]
        decode_rate = [r["answer_tokens"] / r["decode_s"] for r in served if r.get("decode_s")]
        cells[name] = {
            "model": config["model"], **{k: config["answer_settings"][k] for k in ("k", "evidence_tokens")},
            **summarise_answers(list(rows.values())),
            "ttft_s_p50": _median([r["ttft_s"] for r in served]),
            "ttft_overhead_above_prefill_s_p50": _median(over),
            "wall_s_p50": _median([r["wall_s"] for r in rows.values() if r.get("wall_s") is not None]),
            "runtime_prefill_tok_s_p50": _median(prefill_rate),
            "runtime_decode_tok_s_p50": _median(decode_rate),
        }
    chosen: dict[str, dict] = {}
    tests: dict[str, dict] = {}
    for model in sorted({c["model"] for c in cells.values()}):
        for k in KS:
            mine = {c["evidence_tokens"]: name for name, c in cells.items() if c["model"] == model and c["k"] == k}
            if not mine:
                continue
            top = max(mine)
            ok = []
            for budget in sorted(mine):
                t = (paired_tests(runs[mine[top]], runs[mine[budget]], PAIRED_METRICS, value=row_value)
                     if budget != top else {})
                tests[f"{mine[top]} vs {mine[budget]}"] = t
                drops = [m for m in CHOOSE_ON if t.get(m) and t[m]["after"] < t[m]["before"] and t[m]["p"] < 0.05]
                if not drops:
                    ok.append(budget)
            chosen[f"{model}-k{k}"] = {"smallest_budget_without_significant_drop": min(ok) if ok else top,
                                       "against": top}
    if args.out:
        _save(args, {"cells": cells, "paired_tests": tests, "rule": chosen})
    for name, c in cells.items():
        print(f"{name:28s} n={c['n']:3d} cites_gold={c['cites_gold']} kw={c['keyword_accuracy']} "
              f"supported={c['supported_share']} ttft={c['ttft_s_p50']} over={c['ttft_overhead_above_prefill_s_p50']} "
              f"wall={c['wall_s_p50']} prompt={c['prompt_tokens_mean']}")
    print(json.dumps(chosen, indent=1))


def floor(args: argparse.Namespace) -> None:
    """The runtime's own prefill and decode rates per model (llama.cpp's timings of every answer of the grid,
    at the prompts' real lengths and the run's threads), with the prompt lengths they cover."""
    from legalrag.evaluation.answers.run import read_run

    per_model: dict[str, list[dict]] = {}
    for path in sorted(Path(args.out_dir).glob("*-k*-e*.jsonl")):
        config, rows = read_run(str(path))
        per_model.setdefault(config["model"], []).extend(r for r in rows.values() if r.get("prefill_s"))
    metrics = {}
    for model, rows in sorted(per_model.items()):
        evaluated = [r["prompt_tokens_evaluated"] for r in rows if r.get("prompt_tokens_evaluated")]
        metrics[model] = {
            "answers": len(rows),
            "prompt_tokens_evaluated_min": min(evaluated), "prompt_tokens_evaluated_max": max(evaluated),
            "prefill_tok_s_median": _median([r["prompt_tokens_evaluated"] / r["prefill_s"] for r in rows
                                             if r.get("prompt_tokens_evaluated")]),
            "decode_tok_s_median": _median([r["answer_tokens"] / r["decode_s"] for r in rows if r.get("decode_s")]),
        }
    if args.out:
        _save(args, metrics)
    print(json.dumps(metrics, indent=1))


def _save(args: argparse.Namespace, metrics: dict) -> None:
    from legalrag.evaluation.record import write_result

    write_result(args.out, metrics, name=args.name, command=args.command or None, data=args.data,
                 machine_note=args.machine_note or None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--queries", required=True)
    r.add_argument("--index", required=True)
    r.add_argument("--limit", type=int, default=20)
    r.add_argument("--models", default="qwen2.5-0.5b,qwen2.5-1.5b")
    r.add_argument("--cells", default=None)
    r.add_argument("--threads", type=int, default=None)
    r.add_argument("--out-dir", required=True)
    s = sub.add_parser("summary")
    s.add_argument("--out-dir", required=True)
    s.add_argument("--out", default=None)
    s.add_argument("--name", default="The evidence-budget curve")
    s.add_argument("--command", default="")
    s.add_argument("--machine-note", default="", help="added to the detected machine (the load, priorities)")
    s.add_argument("--data", default="")
    f = sub.add_parser("floor")
    for name, default in (("--out-dir", None), ("--out", None), ("--name", "The floor"), ("--command", ""),
                          ("--machine-note", ""), ("--data", "")):
        f.add_argument(name, default=default, required=name == "--out-dir")
    args = ap.parse_args()
    {"run": run, "summary": summary, "floor": floor}[args.cmd](args)


if __name__ == "__main__":
    main()
