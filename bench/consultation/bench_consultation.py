"""The LexRAG-style consultation benchmark on our 20 invented five-turn consultations, step by step.

Every step is one `legalrag eval ...` command (printed before it runs), so each figure in
the consultation section of docs/benchmarks.md can be reproduced alone. Steps whose output directory exists are skipped, and every
LLM call goes through the call cache, so an interrupted run resumes where it stopped. Run from the
repository root, in the background (LLM steps take hours on two CPU cores):

    nohup python bench/consultation/bench_consultation.py --index indexes/stard-lexrag > consultation.log 2>&1 &

The index must have bm25 and qld (and hybrid for --hybrid), e.g.
``legalrag index build --corpus ../shared/data/stard/corpus.jsonl --out indexes/stard-lexrag --retriever bm25
--retriever qld --retriever dense --retriever hybrid --encoder use-multilingual``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

DATA = "bench/data/consultations"


def run(args: list[str], out: Path | None, force: bool = False) -> float:
    if out is not None and out.exists() and not force:
        print(f"# skip (exists): {out}", flush=True)
        return 0.0
    cmd = [sys.executable, "-m", "legalrag", *args]
    print("$ legalrag " + " ".join(shlex.quote(a) for a in args), flush=True)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    seconds = time.perf_counter() - t0
    print(f"# {seconds:.0f} s", flush=True)
    return seconds


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def report(out: Path) -> None:
    """Print the markdown tables of the consultation section of docs/benchmarks.md from the run directories under ``out``."""

    for conv in sorted(out.glob("conversation*/summary.json")):
        s = json.loads(conv.read_text(encoding="utf-8"))
        print(f"\n### {conv.parent.name}: processor x retriever ({s['table'][0]['turns']} turns with gold)\n")
        keys = [f"{m}@{k}" for m in ("recall", "ndcg", "mrr", "precision") for k in (1, 3, 5, 10)]
        print("| processor | retriever | " + " | ".join(keys) + " |")
        print("|---|---|" + "---|" * len(keys))
        for r in s["table"]:
            print(f"| {r['processor']} | {r['retriever']} | " + " | ".join(_fmt(r[k]) for k in keys) + " |")
        print("\nRecall@10 per turn:\n\n| processor | retriever | turn 1 | turn 2 | turn 3 | turn 4 | turn 5 |")
        print("|---|---|---|---|---|---|---|")
        for r in s["recall@10_by_turn"]:
            print(f"| {r['processor']} | {r['retriever']} | "
                  + " | ".join(_fmt(r.get(f"turn {n}")) for n in range(1, 6)) + " |")
        print("\nseconds per turn, processor: " + ", ".join(f"{k} {v:.4f}" for k, v in
                                                          s["processor_seconds_per_turn"].items()))
        print("seconds per turn, retrieval: " + ", ".join(f"{k} {v:.4f}" for k, v in
                                                          s["retrieval_seconds_per_turn"].items()))
    for gen in sorted(out.glob("gen*/metrics.json")):
        m = json.loads(gen.read_text(encoding="utf-8"))
        cols = list(m["table"][0])
        print(f"\n### {gen.parent.name}: generation\n\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
        for r in m["table"]:
            print("| " + " | ".join(_fmt(r[c]) for c in cols) + " |")
    for judge in sorted(out.glob("judge*/summary.json")):
        s = json.loads(judge.read_text(encoding="utf-8"))
        cols = list(s["table"][0])
        print(f"\n### {judge.parent.name}: judge\n\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
        for r in s["table"]:
            print("| " + " | ".join(_fmt(r[c]) for c in cols) + " |")
        print(f"\nfailures {s['failures']} {s['failed_items']}; seconds per item {s['seconds_per_item']:.1f}")
        print("spread: " + json.dumps(s["spread"], ensure_ascii=False))
        if "agreement" in s:
            print("agreement: " + json.dumps(s["agreement"], ensure_ascii=False))
        validity(judge.parent, out)


def validity(judge_dir: Path, out: Path) -> None:
    """Does the judge track anything measurable? Spearman of its per-answer mean score with ROUGE-L and keyword
    accuracy of the same answers, and paired randomization tests between settings on that mean."""
    from legalrag.evaluation.compare import paired_randomization_test
    from legalrag.evaluation.lexrag.judge import spearman

    gen = json.loads((judge_dir / "manifest.json").read_text(encoding="utf-8"))["parameters"]["generations"]
    metrics = {}
    for line in (Path(gen) / "generations.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        metrics[f"{row['turn_id']}|{row['setting']}"] = row["scores"]
    judged = {}
    for line in (judge_dir / "judgements.jsonl").read_text(encoding="utf-8").splitlines():
        j = json.loads(line)
        if j.get("scores") and j["item_id"] in metrics:
            judged[j["item_id"]] = sum(j["scores"].values()) / len(j["scores"])
    ids = sorted(judged)
    for m in ("rougeL", "keyword_accuracy", "bertscore_f1"):
        pairs = [(judged[i], metrics[i][m]) for i in ids if metrics[i].get(m) is not None]
        if len(pairs) > 2:
            rho = spearman([a for a, _ in pairs], [b for _, b in pairs])
            print(f"judge mean vs {m}: Spearman {_fmt(rho)} over {len(pairs)} answers")
    by_setting: dict[str, dict[str, float]] = {}
    for i in ids:
        turn, setting = i.split("|")
        by_setting.setdefault(setting, {})[turn] = judged[i]
    names = sorted(by_setting)
    for x in range(len(names)):
        for y in range(x + 1, len(names)):
            common = sorted(set(by_setting[names[x]]) & set(by_setting[names[y]]))
            if common:
                a = [by_setting[names[x]][t] for t in common]
                b = [by_setting[names[y]][t] for t in common]
                p = paired_randomization_test(a, b)
                print(f"judge mean {names[x]} {sum(a) / len(a):.3f} vs {names[y]} {sum(b) / len(b):.3f} "
                      f"({len(common)} turns): p = {p:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", default="indexes/stard-lexrag")
    ap.add_argument("--gen-index", default=None, help="Index for the generation steps (default: --index).")
    ap.add_argument("--out", default="runs/lexrag")
    ap.add_argument("--sample", type=int, default=20, help="Turns answered in each generation setting.")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--hybrid", action="store_true", help="Add the hybrid retriever to the retrieval table.")
    ap.add_argument("--steps", default="generate,judge,conversation,judge-small,judge-seed",
                    help="Comma-separated steps to run, in this order.")
    ap.add_argument("--force", action="store_true", help="Re-run steps whose output exists (cheap: cached calls).")
    a = ap.parse_args()
    out = Path(a.out)
    gen_index = a.gen_index or a.index
    os.environ["LEGALRAG_THREADS"] = str(a.threads)  # the commands' threads (the runtime.threads setting)
    llm = ["--no-progress"]
    steps = [s.strip() for s in a.steps.split(",") if s.strip()]
    for step in steps:
        if step == "generate":
            run(["eval", "consultation-generate", "--data", DATA, "--index", gen_index, "--limit", str(a.sample),
                 "--retriever", "bm25", "-o", "k=3", "-o", "max_tokens=120",
                 "-o", "history_chars=600", "-o", "article_chars=200", "--out", str(out / "gen-1.5b"), *llm],
                out / "gen-1.5b", a.force)
        elif step == "judge":
            run(["eval", "consultation-judge", "--generations", str(out / "gen-1.5b"), "-o", "self_check=true",
                 "-o", "max_tokens=300", "--out", str(out / "judge-1.5b"), "--plot", str(out / "judge-1.5b.png"), *llm],
                out / "judge-1.5b", a.force)
        elif step == "conversation":
            retrievers = ["--retriever", "bm25", "--retriever", "qld"] + (["--retriever", "hybrid"] if a.hybrid else [])
            processors = [x for p in ("last", "all_questions", "full_context", "rewrite") for x in ("--processor", p)]
            run(["eval", "conversation", "--data", DATA, "--index", a.index, *retrievers, *processors,
                 "--out", str(out / "conversation"), "--plot", str(out / "conversation-recall-by-turn.png"), *llm],
                out / "conversation", a.force)
        elif step == "judge-small":
            run(["eval", "consultation-judge", "--generations", str(out / "gen-1.5b"), "-o", "self_check=true",
                 "--model", "qwen2.5-0.5b", "-o", "max_tokens=300", "-o", f"against={out / 'judge-1.5b'}",
                 "--out", str(out / "judge-0.5b"), *llm], out / "judge-0.5b", a.force)
        elif step == "judge-seed":
            run(["eval", "consultation-judge", "--generations", str(out / "gen-1.5b"), "-o", "temperature=0.7",
                 "-o", "seed=1", "-o", "max_tokens=300", "-o", f"against={out / 'judge-1.5b'}", "--out", str(out / "judge-1.5b-seed1"), *llm],
                out / "judge-1.5b-seed1", a.force)
        elif step == "report":
            report(out)
        else:
            raise SystemExit(f"unknown step {step!r}")


if __name__ == "__main__":
    main()
