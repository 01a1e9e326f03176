"""Agentic QA benchmark: multiple-choice accuracy of zero-shot, chain-of-thought, simple and multi-turn modes
on bench/data/mcq_statutes.jsonl (answers in bench/data/mcq_docs/), with the embedded model.

Reports per mode: accuracy (overall and per domain), mean seconds and LLM calls per question, and the share of
answer citations that resolve to retrieved sources. Run it under the shared lock, e.g.

    python bench/qa/bench_qa.py --model qwen2.5-1.5b \
        --limit 10 --out runs/qa-1.5b.json

Full run (all 42 questions, all four modes): omit --limit.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-1.5b", help="embedded model name or GGUF path")
    ap.add_argument("--questions", default=str(REPO / "bench/data/mcq_statutes.jsonl"))
    ap.add_argument("--docs", default=str(REPO / "bench/data/mcq_docs"))
    ap.add_argument("--modes", default="zero-shot,cot,simple,multi")
    ap.add_argument("--limit", type=int, default=None, help="only the first N questions (a fixed subset)")
    ap.add_argument("--max-rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--budget-s", type=float, default=None,
                    help="stop starting new questions after this many seconds (all modes stay on the same questions)")
    ap.add_argument("--stop-by", default=None,
                    help="UTC time HH:MM after which no new question is started (caps --budget-s)")
    ap.add_argument("--out", default=None, help="write the full report (with per-question rows) as JSON here")
    args = ap.parse_args()

    from legalrag.agents.qa.mcq_eval import evaluate_mcq, load_mcq
    from legalrag.cli._qa_output import print_mcq_table
    from legalrag.evaluation.record import machine
    from legalrag.search.local import LocalDocumentsSource
    from legalrag.wiring import make_llm

    uptime_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print("before:", uptime_before, flush=True)
    questions = load_mcq(args.questions)
    if args.limit:
        questions = questions[:args.limit]
    sources = {"local": LocalDocumentsSource(args.docs)}
    sources["local"].refresh()
    t0 = time.perf_counter()
    llm = make_llm(args.model, cache=False, threads=args.threads, n_ctx=4096).load()
    load_s = time.perf_counter() - t0
    if args.stop_by:
        import datetime as dt

        now = dt.datetime.now(dt.timezone.utc)
        hh, mm = map(int, args.stop_by.split(":"))
        left = (now.replace(hour=hh, minute=mm, second=0, microsecond=0) - now).total_seconds()
        args.budget_s = max(0.0, left if args.budget_s is None else min(args.budget_s, left))
        print(f"time budget: {args.budget_s:.0f} s", flush=True)
    report = evaluate_mcq(questions, llm, sources, [m.strip() for m in args.modes.split(",")],
                          max_rounds=args.max_rounds, progress=True, budget_s=args.budget_s)
    report.update(model=llm.model_id, budget_s=args.budget_s, load_seconds=round(load_s, 1), questions_file=args.questions,
                  limit=args.limit, machine=machine().describe(),
                  uptime_before=uptime_before,
                  uptime_after=subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print_mcq_table(report)
    print("after:", report["uptime_after"], flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    llm.close()


if __name__ == "__main__":
    main()
