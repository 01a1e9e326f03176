"""Judgment benchmarks (issue 6): the JuDGE evaluator reproduction, text metrics, and drafting.

    python bench/judgment/bench_judgment.py eval  [--data ../shared/data/judge] [--no-text-metrics]
    python bench/judgment/bench_judgment.py draft [--data ../shared/data/judge] [--n 20] [--model 1.5b] [--out FILE]

``eval`` scores JuDGE's Example_Output.jsonl against expected.jsonl (and expected against itself) with our
evaluator and prints the reference figures beside ours; with text metrics it adds METEOR and the
BERTScore-style F1 (see legalrag/judgment/textmetrics.py for the model and the deviation).

``draft`` drafts judgments with the embedded LLM for the N test cases with the smallest ids (a fixed,
stated subset), each grounded on the JuDGE law corpus (BM25) and on the *other* cases of the set
(expected.jsonl without the case itself), then scores them with the same evaluator.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

REFERENCE = {"prison": 0.6812, "fine": 0.5328, "charge_f1": 0.9283, "article_precision": 0.7777,
             "article_recall": 0.6542, "article_f1": 0.7106}
PAPER_QWEN7B_RAG = {"prison": 0.680, "fine": 0.551, "charge_f1": 0.961, "article_f1": 0.773}


def _table(title, rows, columns):
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title)
    for c in columns:
        t.add_column(c, justify="right" if c != columns[0] else "left")
    for r in rows:
        t.add_row(*[f"{v:.4f}" if isinstance(v, float) else ("-" if v is None else str(v)) for v in r])
    Console().print(t)


def run_eval(data: Path, text_metrics: bool) -> dict:
    from legalrag.judgment.io import load_judgments
    from legalrag.judgment.metrics import evaluate_judgments

    gold = load_judgments(data / "expected.jsonl")
    pred = load_judgments(data / "Example_Output.jsonl", strict=False)
    t0 = time.perf_counter()
    rep = evaluate_judgments(pred, gold, progress=True)
    t_eval = time.perf_counter() - t0
    self_rep = evaluate_judgments(gold, gold)
    rows = [(k, REFERENCE[k], getattr(rep, k), getattr(self_rep, k)) for k in REFERENCE]
    _table(f"JuDGE evaluator: Example_Output vs expected ({rep.n} cases, {t_eval:.1f} s)", rows,
           ["metric", "reference", "ours", "expected vs itself"])
    out = {"example_output": rep.summary(), "expected_self": self_rep.summary(), "seconds": t_eval}
    if text_metrics:
        from legalrag.judgment.textmetrics import text_scores

        t0 = time.perf_counter()
        ts = text_scores(pred, gold, progress=True)
        out["text"] = ts.to_dict()
        out["text_seconds"] = time.perf_counter() - t0
        _table(f"Text metrics on Example_Output ({ts.pairs} comparable pairs, {out['text_seconds']:.0f} s)",
               [("METEOR", ts.reasoning_meteor, ts.result_meteor),
                ("BERTScore-style F1", ts.reasoning_bertscore, ts.result_bertscore)],
               ["metric", "reasoning", "result"])
        print("BERTScore model:", ts.bertscore_model)
    return out


def run_draft(data: Path, n: int, model: str, out_path: Path | None, max_tokens: int,
              budget_s: float = 0.0, threads: int = 1) -> dict:
    from legalrag.judgment.draft import JudgmentDrafter, cases_from_judgments, load_law_corpus
    from legalrag.judgment.io import load_judgments
    from legalrag.judgment.metrics import evaluate_judgments
    from legalrag.judgment.textmetrics import text_scores
    from legalrag.wiring import make_llm

    raw = (data / "data" / "test.json").read_text(encoding="utf-8")  # JSON lines despite the name
    tests = [json.loads(line) for line in raw.splitlines() if line.strip()]
    gold_all = load_judgments(data / "expected.jsonl")
    chosen = sorted(t["text_id"] for t in tests if t["text_id"] in gold_all)[:n]
    facts = {t["text_id"]: t["text"] for t in tests}
    llm = make_llm(model or "qwen2.5-1.5b", threads=threads)
    drafter = JudgmentDrafter(llm, load_law_corpus(data / "data" / "law_corpus.jsonl"),
                              cases_from_judgments(gold_all), max_tokens=max_tokens)
    preds, rows = {}, []
    t_start = time.perf_counter()
    for i, case_id in enumerate(chosen, 1):
        if budget_s and time.perf_counter() - t_start > budget_s:
            print(f"time budget of {budget_s:.0f} s used: stopping after {i - 1} of {len(chosen)} cases", flush=True)
            break
        t0 = time.perf_counter()
        res = drafter.draft(facts[case_id], exclude_case_ids={case_id})
        secs = time.perf_counter() - t0
        preds[case_id] = res.document
        rows.append({"id": case_id, "seconds": secs, "parsed": res.sections.parsed,
                     "unresolved": [c.text for c in res.citations if not c.resolved]})
        print(f"[{i}/{len(chosen)}] {case_id} {secs:.1f}s parsed={res.sections.parsed}", flush=True)
        if out_path:
            with out_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"id": case_id, "document": res.document}, ensure_ascii=False) + "\n")
    done = [r["id"] for r in rows]
    gold = {k: gold_all[k] for k in done}
    rep = evaluate_judgments(preds, gold)
    ts = text_scores(preds, gold)
    secs = [r["seconds"] for r in rows]
    summary = {"n": len(done), "ids": done, "planned": len(chosen), **rep.summary(), **ts.to_dict(),
               "parsed_share": sum(r["parsed"] for r in rows) / len(rows),
               "seconds_mean": sum(secs) / len(secs), "seconds_max": max(secs), "documents": rows}
    _table(f"Drafting with {llm.model_id} on {len(done)} JuDGE test cases",
           [(k, PAPER_QWEN7B_RAG.get(k), summary[k]) for k in
            ("prison", "fine", "charge_f1", "article_precision", "article_recall", "article_f1")]
           + [("reasoning METEOR", None, ts.reasoning_meteor), ("result METEOR", None, ts.result_meteor),
              ("share parsed", None, summary["parsed_share"]), ("seconds / doc", None, summary["seconds_mean"])],
           ["metric", "paper Qwen2.5-7B + retrieval", "ours"])
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["eval", "draft"])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("LEGALRAG_SHARED_DATA", REPO.parent / "shared"
                                                                     / "data")) / "judge")
    ap.add_argument("--no-text-metrics", action="store_true")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--model", default="")
    ap.add_argument("--max-tokens", type=int, default=500)
    ap.add_argument("--threads", type=int, default=1, help="llama.cpp threads (1 is faster on a loaded machine)")
    ap.add_argument("--budget", type=float, default=0.0, help="stop starting new drafts after this many seconds")
    ap.add_argument("--out", type=Path, default=None, help="append drafted judgments here as JSONL")
    ap.add_argument("--json-out", type=Path, default=None, help="write the summary JSON here")
    args = ap.parse_args()
    if args.what == "eval":
        res = run_eval(args.data, not args.no_text_metrics)
    else:
        res = run_draft(args.data, args.n, args.model, args.out, args.max_tokens, args.budget, args.threads)
    if args.json_out:
        args.json_out.write_text(json.dumps(res, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
