"""Citation-prediction ablation on JuDGE (issue 8): P/R/F1 after each stage, LLM calls and seconds per case.

    python bench/citepredict/bench_cite.py --index indexes/judge-bm25          # non-LLM stages, all 301 eval cases
    python bench/citepredict/bench_cite.py --index ... --llm-cases 12 --llm qwen2.5-1.5b    # + LLM stages on the first 12
    python bench/citepredict/bench_cite.py --index ... --llm-cases 301                      # the full LLM run (hours on 2 cores)

Data: ../shared/data/judge/data (test.json split by sorted text_id: first 200 = development, other 301 =
evaluation; qrels_file_train = training citation sets). Each row's selection rule (top-k or score threshold)
is calibrated on the development cases with the non-LLM pipeline and applied unchanged to the evaluation
cases; the LLM subset reuses those rules (calibrating on dev with the LLM would cost as much as the run).
LLM calls go through the on-disk call cache when ``legalrag.llm.cache`` is available, so reruns are cheap.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "2")

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("LEGALRAG_SHARED_DATA", REPO.parent / "shared" / "data")) / "judge" / "data"


def table(title: str, rep) -> str:
    lines = [f"### {title}", "", f"{rep.n_cases} cases; LLM calls/case {rep.llm_calls_per_case}; "
             f"wall s/case {rep.seconds_per_case}", "",
             "| stage | selection (dev-calibrated) | P | R | F1 | macro P | macro R | macro F1 | mean size |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rep.rows:
        lines.append(f"| {r.stage} | {r.rule} | {r.precision:.3f} | {r.recall:.3f} | {r.f1:.3f} | "
                     f"{r.macro_precision:.3f} | {r.macro_recall:.3f} | {r.macro_f1:.3f} | {r.mean_size:.2f} |")
    return "\n".join(lines)


def make_llm(name: str, threads: int = 2):
    """The embedded model behind the call cache, and the model itself (to load it before timing)."""
    from legalrag.wiring import make_llm as wired

    llm = wired(name, threads=threads, n_ctx=4096)
    return llm, llm.inner


def anchor(ev) -> dict:
    """Articles cited in JuDGE's reference generations (Example_Output.jsonl), scored like our sets."""
    from legalrag.evaluation.metrics import macro_prf, micro_prf
    from legalrag.io import read_jsonl
    from legalrag.judgment.extract import extract_fields

    docs = {rec["id"]: rec["document"] for _, rec in read_jsonl(DATA.parent / "Example_Output.jsonl")}
    pred = [{str(a.number) for a in extract_fields(docs.get(c.id, "")).articles} for c in ev]
    gold = [c.gold for c in ev]
    mi, ma = micro_prf(pred, gold), macro_prf(pred, gold)
    res = {"cases": len(ev), "missing": sum(c.id not in docs for c in ev), "micro": mi, "macro": ma}
    print(f"Example_Output.jsonl on the {len(ev)} evaluation cases: micro P/R/F1 {mi['precision']:.3f}/"
          f"{mi['recall']:.3f}/{mi['f1']:.3f}, macro F1 {ma['f1']:.3f}", flush=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True, help="JuDGE statute index (legalrag index build --retriever bm25)")
    ap.add_argument("--retriever", default=None)
    ap.add_argument("--dev", type=int, default=200)
    ap.add_argument("--core-k", type=int, default=2)
    ap.add_argument("--prior-weight", type=float, default=2.0)
    ap.add_argument("--core-max-share", type=float, default=1.0)
    ap.add_argument("--llm-cases", type=int, default=0, help="run the LLM stages on the first N evaluation cases")
    ap.add_argument("--shard", default="0/1", help="I/N: run the LLM stages only on the cases at positions I, I+N, "
                    "... (several 1-thread processes share a machine better than one 2-thread process; the call cache "
                    "lets a final unsharded run report them together)")
    ap.add_argument("--llm", default="qwen2.5-1.5b")
    ap.add_argument("--threads", type=int, default=2, help="llama.cpp threads")
    ap.add_argument("--rerank-top", type=int, default=5)
    ap.add_argument("--budget-s", type=float, default=900, help="stop the LLM cases after this many seconds")
    ap.add_argument("--analyse", action="store_true", help="also run LLM query analysis (charges + keywords)")
    ap.add_argument("--per-stage-prompts", action="store_true",
                    help="each LLM stage's own prompt layout (the layout before case-first prompts, CiteConfig.case_first)")
    ap.add_argument("--anchor", action="store_true",
                    help="score JuDGE's Example_Output.jsonl articles on the same evaluation cases")
    ap.add_argument("--no-case-memory", action="store_true",
                    help="leave out the similar-cases stage (by default the development cases vote, each left out "
                         "of its own vote while calibrating)")
    ap.add_argument("--case-weight", type=float, default=0.9)
    ap.add_argument("--case-neighbours", type=int, default=10)
    ap.add_argument("--tune-cases", action="store_true",
                    help="choose --case-weight and --case-neighbours on the development cases only (leave-one-out "
                         "votes, threshold calibrated per setting, best dev F1 of the similar-cases row) and use them")
    ap.add_argument("--json", type=Path, default=None, help="write all figures here")
    args = ap.parse_args()

    from legalrag.citepredict.codefilter import filter_report
    from legalrag.citepredict.data import load_cases, split_dev_eval
    from legalrag.citepredict.evaluate import (
        ROWS,
        calibrate,
        compare_stages,
        evaluate,
        report,
        run_cases,
        stage_sets,
    )
    from legalrag.citepredict.service import build_predictor
    from legalrag.wiring import Root

    index = Root().index(args.index, snapshot=True)
    print("uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    cases = load_cases(DATA / "test.json")
    dev, ev = split_dev_eval(cases, args.dev)
    train = DATA / "qrels_file_train"
    overrides = {"core_k": args.core_k, "prior_weight": args.prior_weight, "rerank_top": args.rerank_top,
                 "core_max_share": args.core_max_share, "case_weight": args.case_weight,
                 "case_neighbours": args.case_neighbours}
    out: dict = {"dev": len(dev), "eval": len(ev), "config": overrides}

    from legalrag.citepredict.cases import CaseMemory

    memory = None if args.no_case_memory else CaseMemory.build(dev)
    out["case_memory"] = 0 if memory is None else len(memory)
    if args.tune_cases and memory is not None:
        from legalrag.citepredict.select import calibrate_threshold

        grid = []
        for k in (3, 5, 10, 20):
            for w in [i / 10 for i in range(11)]:
                p = build_predictor(index, train_citations=train, retriever=args.retriever, cases=memory,
                                    overrides={**overrides, "case_weight": w, "case_neighbours": k})
                res = run_cases(p, dev)
                t, f1 = calibrate_threshold([r.pools["similar-cases"] for r in res], [c.gold for c in dev])
                grid.append({"case_neighbours": k, "case_weight": w, "threshold": t, "dev_f1": round(f1, 4)})
        best = max(grid, key=lambda g: g["dev_f1"])
        print("similar-cases settings by dev F1 (leave-one-out):", *(f"  k={g['case_neighbours']} w={g['case_weight']}"
              f" -> {g['dev_f1']}" for g in sorted(grid, key=lambda g: -g["dev_f1"])[:8]), sep="\n", flush=True)
        overrides.update(case_weight=best["case_weight"], case_neighbours=best["case_neighbours"])
        out["case_tuning"] = {"grid": grid, "chosen": best}
    base = build_predictor(index, train_citations=train, retriever=args.retriever, overrides=overrides,
                           cases=memory)
    t0 = time.perf_counter()
    dev_res = run_cases(base, dev, progress=True, desc="dev (no LLM)")
    rules = calibrate(dev_res, [c.gold for c in dev])
    rep, _ = evaluate(base, ev, rules=rules, progress=True)
    print(table(f"Non-LLM stages, all {len(ev)} evaluation cases", rep), flush=True)
    out["non_llm"] = rep.to_dict()
    out["non_llm"]["seconds_total"] = round(time.perf_counter() - t0, 1)

    if args.llm_cases:
        shard, shards = (int(x) for x in args.shard.split("/"))
        if not 0 <= shard < shards:
            raise SystemExit(f"--shard {args.shard}: expected I/N with 0 <= I < N")
        subset = ev[: args.llm_cases][shard::shards]
        llm, raw = make_llm(args.llm, args.threads)
        t = time.perf_counter()
        raw.load()
        print(f"loaded {args.llm} in {time.perf_counter() - t:.1f}s", flush=True)
        over = {**overrides, "verify": True, "threshold": rules["+ similar cases"][1], "analysis": args.analyse,
                "case_first": not args.per_stage_prompts}
        from legalrag.wiring import make_reranker

        reranker = make_reranker("llm-pointwise", index, llm=llm) if args.rerank_top > 0 else None
        pred = build_predictor(index, train_citations=train, retriever=args.retriever, overrides=over, llm=llm,
                               reranker=reranker, cases=memory)
        t = time.perf_counter()
        results = []
        for i, case in enumerate(subset):
            if time.perf_counter() - t > args.budget_s:
                print(f"time budget of {args.budget_s}s spent after {i} cases; stopping there", flush=True)
                break
            r = pred.predict(case.facts)
            results.append(r)
            print(f"[{i + 1}/{len(subset)}] {case.id} gold={sorted(case.gold)} final={r.provisions} "
                  f"core={sorted(r.pools['rerank'])} llm_calls={r.llm_calls} {r.seconds:.1f}s "
                  f"analysis={r.analysis.issues if r.analysis else None}", flush=True)
        subset = subset[: len(results)]
        gold = [c.gold for c in subset]
        rep_llm = report(results, gold, rules, seconds=time.perf_counter() - t)
        base_results = run_cases(base, subset)
        rep_sub = report(base_results, gold, rules)
        print(table(f"Non-LLM stages on the same {len(subset)} cases", rep_sub), flush=True)
        out["non_llm_subset"] = rep_sub.to_dict()
        name = (f"LLM stages ({args.llm}{', + query analysis' if args.analyse else ''}), {len(subset)} evaluation cases"
                f"{'' if shards == 1 else f' (shard {args.shard})'}")
        print(table(name, rep_llm), flush=True)
        out["llm"] = {"model": args.llm, **rep_llm.to_dict()}
        out["llm_vs_non_llm"] = compare_stages(results, base_results, gold, rules)
        print(f"\nWith minus without the LLM, {len(subset)} cases: mean per-case F1 difference, paired randomization p",
              "\n\n| stage | macro F1 diff | p |\n|---|---|---|", flush=True)
        for row, v in out["llm_vs_non_llm"].items():
            print(f"| {row} | {v['macro_f1_diff']:+.3f} | {v['p']:.3f} |", flush=True)
        last = ROWS[-1][0]
        sets_llm, sets_base = stage_sets(results, rules)[last], stage_sets(base_results, rules)[last]
        out["cases"] = [{"id": c.id, "gold": sorted(c.gold), "llm": sorted(a), "non_llm": sorted(b),
                         "llm_calls": r.llm_calls, "seconds": round(r.seconds, 2)}
                        for c, a, b, r in zip(subset, sets_llm, sets_base, results)]
        if args.analyse:
            fr = filter_report(list(pred.documents.values()), [r.analysis.codes if r.analysis else () for r in results],
                               gold)
            print(f"code filter: {fr}", flush=True)
            out["code_filter"] = fr.__dict__
    if args.anchor:
        out["example_output"] = anchor(ev)
    print("uptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
