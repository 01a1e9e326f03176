"""Exam-style multiple-choice questions answered closed-book and from the national-law statute index.

Runs ``zero-shot`` (closed book) and ``simple`` (the stem and the stem with each choice searched in a statute
index, articles pooled, then the answer) on the same questions, one question at a time in a fixed shuffled
order (seed 0), appending one row per question and mode to ``--rows`` (JSONL). A rerun skips the questions
already there, and the model's call cache makes repeated calls free, so an interrupted run resumes. ``--stop-by
HH:MM`` (UTC) starts no question after that time. ``--summary`` then writes accuracy per mode, the paired
randomization test of with-sources against closed-book, seconds and peak memory per question.

    nice -n 10 python bench/qa/bench_qa_mcq.py --model qwen2.5-1.5b --index indexes/cn-law \\
        --questions bench/data/mcq_cloze.jsonl --part test --threads 1 \\
        --rows runs/qa-mcq-1.5b.jsonl --summary runs/qa-mcq-1.5b.json
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODES = ("zero-shot", "simple")


def summarise(rows: list[dict], model: str) -> dict:
    from legalrag.agents.qa.mcq_eval import summarise_rows
    from legalrag.evaluation.compare import paired_randomization_test

    ids = sorted({r["id"] for r in rows if r["mode"] == "simple"} & {r["id"] for r in rows if r["mode"] == "zero-shot"})
    rows = [r for r in rows if r["id"] in ids]
    by = {(r["id"], r["mode"]): r for r in rows}
    closed = [float(by[i, "zero-shot"]["correct"]) for i in ids]
    with_sources = [float(by[i, "simple"]["correct"]) for i in ids]
    modes = summarise_rows(rows, MODES)
    for m in modes.values():
        m.pop("per_domain", None)
    gain = (sum(with_sources) - sum(closed)) / len(ids) if ids else 0.0
    return {"model": model, "n_questions": len(ids), "modes": modes,
            "gain_with_sources": round(gain, 3),
            "paired_p": round(paired_randomization_test(with_sources, closed), 4) if ids else None,
            "wins": sum(s > c for s, c in zip(with_sources, closed)),
            "losses": sum(s < c for s, c in zip(with_sources, closed)),
            "rationale_in_chinese": (sum(_zh(by[i, m]["rationale"]) for i in ids for m in MODES if by[i, m]["rationale"])
                                     / max(1, sum(1 for i in ids for m in MODES if by[i, m]["rationale"])))}


def _zh(text: str) -> bool:
    from legalrag.lang import detect_language

    return detect_language(text) == "zh"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--questions", default=str(REPO / "bench/data/mcq_statutes.jsonl"))
    ap.add_argument("--index", required=True, help="a statute index (the national-law default index)")
    ap.add_argument("--rows", required=True, help="per-question rows (JSONL), appended to; resumable")
    ap.add_argument("--summary", default=None, help="write the summary JSON here")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--part", default=None, help="only questions whose `part` field is this (e.g. test)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--stop-by", default=None, help="UTC HH:MM: start no question after it")
    args = ap.parse_args()

    from legalrag.agents.qa.mcq_eval import evaluate_mcq, load_mcq
    from legalrag.search.local import StatuteIndexSource
    from legalrag.wiring import Root, make_llm

    questions = load_mcq(args.questions)
    if args.part:
        parts = [json.loads(x).get("part") for x in Path(args.questions).read_text(encoding="utf-8").splitlines()
                 if x.strip()]
        questions = [q for q, p in zip(questions, parts) if p == args.part]
    random.Random(0).shuffle(questions)
    if args.limit:
        questions = questions[:args.limit]
    out = Path(args.rows)
    done_rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []
    done = {r["id"] for r in done_rows}
    todo = [q for q in questions if q.id not in done]
    print(f"{len(done)} done, {len(todo)} to do", flush=True)
    if todo:
        sources = {"statutes": StatuteIndexSource(Root().index(args.index, snapshot=True))}
        llm = make_llm(args.model, threads=args.threads, n_ctx=4096)
        for n, q in enumerate(todo, 1):
            if args.stop_by and time.strftime("%H:%M", time.gmtime()) >= args.stop_by:
                print("stop time reached", flush=True)
                break
            report = evaluate_mcq([q], llm, sources, MODES, progress=False)
            with out.open("a", encoding="utf-8") as fh:
                for r in report["rows"]:
                    fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            print(n, q.id, [(r["mode"], r["choice"], r["correct"], r["seconds"]) for r in report["rows"]], flush=True)
        done_rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    summary = summarise(done_rows, args.model)
    print(json.dumps(summary, ensure_ascii=False, indent=1))
    if args.summary:
        Path(args.summary).write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
