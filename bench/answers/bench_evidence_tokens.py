"""Prompt tokens of `ask` with whole articles (600 characters each, the old prompt) vs evidence selection,
counted by the bundled Qwen tokenizer (exact, after the chat template), on the STARD questions with the
smallest query ids; plus how many retrieved gold articles still reach the prompt. Load-independent: no
generation, only tokenisation.

    python bench/answers/bench_evidence_tokens.py --index INDEX [--n 20] [--budgets 400,250]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--budgets", default="400,250")
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data" / "stard"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from legalrag.answer.engine import DEFAULTS
    from legalrag.answer.prompt import build_messages
    from legalrag.retrieval.pipeline import build_pipeline
    from legalrag.wiring import Root, make_llm

    qs = [json.loads(x) for x in (Path(args.data_dir) / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    qs = sorted(qs, key=lambda q: int(q["query_id"]))[:args.n]
    index = Root().index(args.index, snapshot=True)
    pipe = build_pipeline(index)
    llm = make_llm("qwen2.5-0.5b", cache=False, threads=1)  # same tokenizer as the 1.5B
    budgets = [None] + [int(b) for b in args.budgets.split(",")]
    rows = []
    for q in qs:
        hits = pipe.search(q["query"], k=args.k)
        gold = {str(g) for g in q["gold_ids"]} & {h.id for h in hits}
        for b in budgets:
            msgs, steps = build_messages(q["query"], hits, lang="zh", settings=DEFAULTS.but(evidence_tokens=b))
            kept = {h.id for h in hits} if b is None else set(steps[-1].output["kept"])
            rows.append({"query_id": q["query_id"], "budget": b or "whole (600 chars)",
                         "prompt_tokens": llm.count_tokens(msgs), "gold_retrieved": len(gold),
                         "gold_in_prompt": len(gold & kept)})
    summary = {}
    for b in budgets:
        sel = [r for r in rows if r["budget"] == (b or "whole (600 chars)")]
        summary[str(b or "whole")] = {
            "prompt_tokens_median": statistics.median(r["prompt_tokens"] for r in sel),
            "prompt_tokens_mean": statistics.mean(r["prompt_tokens"] for r in sel),
            "prompt_tokens_max": max(r["prompt_tokens"] for r in sel),
            "gold_in_prompt": sum(r["gold_in_prompt"] for r in sel),
            "gold_retrieved": sum(r["gold_retrieved"] for r in sel)}
    print(json.dumps(summary, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, "summary": summary}, indent=2, ensure_ascii=False))
    llm.inner.close() if hasattr(llm, "inner") else llm.close()


if __name__ == "__main__":
    main()
