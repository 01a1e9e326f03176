"""Citation prediction on JuDGE with any first stage (BM25, a dense component, the trained JuDGE encoder), similar
cases by BM25 or by the same encoder, and the learned set decision (``citepred/setmodel.py``).

    python bench/judgment/bench_judgment_cite.py split --index indexes/judge-dense --retriever dense-e5-small \
        --memory dense --json bench/results/judge-cite-e5.json
    python bench/judgment/bench_judgment_cite.py split --index indexes/judge-ft --retriever DENSE --memory dense \
        --exclude-seen models/judge-e5
    python bench/judgment/bench_judgment_cite.py folds --index indexes/judge-dense --retriever dense-e5-small
    python bench/judgment/bench_judgment_cite.py saved --index indexes/judge-shipped --model-dir judge-cite

``split`` is the headline protocol: the first 200 JuDGE test cases by ``text_id`` train (case memory, set model,
every choice: ``legalrag.training.recipes.judge_cite``, the recipe of the shipped model, with the options of the
variant), the other 301 are evaluated; the baseline (BM25 first stage, BM25 similar cases, dev-calibrated
threshold: the configuration of ``docs/benchmarks.md``) runs on the same cases, and each row is compared by a
paired randomization test on per-case F1. ``--exclude-seen DIR`` leaves the cases a trained encoder learned from
(its ``training_record.json``) out of the set model's rows, so the model never learns from retrieval scores it
could not get on a new case. The candidate depth is chosen by the set model's out-of-fold micro F1 on the
training cases.

``folds`` is a different protocol from the paper's: 5-fold cross-validation over all 501 cases (each case
predicted by a memory and set model that never saw it, ~400 training cases per fold). It needs a first stage that
did not learn from any of the 501 (BM25 or the untrained encoder).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "2")

REPO = Path(__file__).resolve().parents[2]
JUDGE = Path(os.environ.get("LEGALRAG_SHARED_DATA", REPO.parent / "shared" / "data")) / "judge"
DATA = JUDGE / "data"
CAIL = JUDGE.parent / "cail2018"
SPLIT = REPO / "bench" / "data" / "cail-split.json"
MACHINE = "2-core x86-64 CPU, 24 GiB, no GPU, shared with other jobs"
BASELINE = {"core_k": 2, "prior_weight": 2.0, "rerank_top": 0, "case_weight": 0.9, "case_neighbours": 10}


def seen_by_encoder(model_dir: Path, train_queries: Path) -> set[str]:
    """The training cases the encoder optimised on: its training queries minus the inner dev ids of its record."""
    from legalrag.io import read_jsonl

    record = json.loads((model_dir / "training_record.json").read_text(encoding="utf-8"))

    def find(obj):
        if isinstance(obj, dict):
            if "dev_ids" in obj:
                return obj["dev_ids"]
            return next((r for r in map(find, obj.values()) if r is not None), None)
        return None

    dev = set(map(str, find(record) or ()))
    ids = {str(rec.get("query_id", rec.get("id"))) for _, rec in read_jsonl(train_queries)}
    return ids - dev


def per_case_f1(sets, gold):
    from legalrag.evaluation.metrics import set_prf

    return [set_prf(p, g)[2] for p, g in zip(sets, gold)]


def paired(a, b, trials=10_000):
    from legalrag.evaluation.compare import paired_randomization_test, sign_flips

    return paired_randomization_test(a, b, signs=sign_flips(len(a), trials))


def rows_table(title, rep):
    print(f"\n### {title}\n\n| stage | selection | P | R | F1 | macro F1 | mean size |\n|---|---|---|---|---|---|---|")
    for r in rep.rows:
        print(f"| {r.stage} | {r.rule} | {r.precision:.3f} | {r.recall:.3f} | {r.f1:.3f} | {r.macro_f1:.3f} | "
              f"{r.mean_size:.2f} |")


def cmd_split(args):
    from legalrag.citepredict.evaluate import calibrate, report, run_cases, stage_sets
    from legalrag.training.recipes import judge_cite, load_cail_split, load_judge
    from legalrag.training.recipes.judge_cite import cite_predictor, judge_cases, prior_of
    from legalrag.wiring import Root

    index = Root().index(args.index, snapshot=True)
    judge = load_judge(JUDGE)
    train, ev = judge_cases(judge)
    if args.limit:
        ev = ev[: args.limit]
    gold = [c.gold for c in ev]
    out = {"protocol": "train on the first 200 cases by text_id, evaluate on the other 301", "machine": MACHINE,
           "command": "python " + " ".join(sys.argv), "index": str(args.index), "retriever": args.retriever,
           "memory": args.memory}
    # before: the documented configuration
    base = cite_predictor(judge, index, "bm25", train, "bm25", BASELINE)
    base_train = run_cases(base, train, True, desc="baseline, training cases")
    base_rules = calibrate(base_train, [c.gold for c in train])
    t0 = time.perf_counter()
    base_res = run_cases(base, ev, True, desc="baseline, evaluation cases")
    base_rep = report(base_res, gold, base_rules, n_dev=len(train), seconds=time.perf_counter() - t0)
    rows_table("Before: BM25 first stage, BM25 similar cases, dev-calibrated threshold", base_rep)
    out["before"] = base_rep.to_dict()
    # after: the recipe with this variant's options
    exclude = seen_by_encoder(args.exclude_seen, args.train_queries) if args.exclude_seen else set()
    out["excluded_from_set_model"] = len(exclude)
    cail = load_cail_split(CAIL, args.split, judge) if args.cail else None
    out["cail_cases_in_memory"] = len(cail.train) if cail else 0
    trained = judge_cite(judge, index, args.retriever, None, cail=cail, memory=args.memory,
                         case_neighbours=args.case_neighbours, case_weight=args.case_weight, exclude=exclude,
                         int8=args.int8)
    pred, model, train_res, cv = trained.predictor, trained.set_model, list(trained.train_results), trained.depth_cv
    out["set_model"] = {"depth_cv": {str(d): v for d, v in cv.items()}, "chosen_depth": model.depth,
                        "rule": model.rule, "threshold": model.threshold}
    print("set model CV on the training cases:", json.dumps(out["set_model"], indent=1), flush=True)
    rules = calibrate(train_res, [c.gold for c in train], set_model=True)
    t0 = time.perf_counter()
    res = run_cases(pred, ev, True, desc="after, evaluation cases")
    secs = time.perf_counter() - t0
    rep = report(res, gold, rules, n_dev=len(train), seconds=secs)
    rows_table(f"After: {args.retriever} first stage, {args.memory} similar cases, learned set", rep)
    out["after"] = rep.to_dict()
    sa, sb = stage_sets(res, rules), stage_sets(base_res, base_rules)
    tests = {}
    for row in sa:
        fa, fb = per_case_f1(sa[row], gold), per_case_f1(sb[row], gold)
        tests[row] = {"macro_f1_after_minus_before": round((sum(fa) - sum(fb)) / len(gold), 4), "p": paired(fa, fb)}
    fa = per_case_f1(sa["+ learned set"], gold)
    fb = per_case_f1(sb["+ similar cases"], gold)
    tests["final after vs final before"] = {"macro_f1_after_minus_before": round((sum(fa) - sum(fb)) / len(gold), 4),
                                            "p": paired(fa, fb)}
    out["paired"] = tests
    print("\n| row | per-case F1 after - before | p |\n|---|---|---|")
    for row, v in tests.items():
        print(f"| {row} | {v['macro_f1_after_minus_before']:+.4f} | {v['p']:.4f} |")
    out["seconds_per_case_after"] = round(secs / len(ev), 4)
    if exclude:  # ablation: the same set model trained on every training case, encoder scores of its own included
        from legalrag.citepredict.setmodel import SetModel
        from legalrag.evaluation.metrics import micro_prf

        leaky = SetModel.train(train_res, [c.gold for c in train], [c.id for c in train], prior_of(pred),
                               depth=model.depth)
        sets = [{p for p, v in leaky.decision(r).items() if v >= 0.5} for r in res]
        fl = per_case_f1(sets, gold)
        out["ablation_not_excluding_seen"] = {
            "cv": leaky.cv, "micro": {k: round(v, 4) for k, v in micro_prf(sets, gold).items()},
            "p_vs_excluding": paired(fl, per_case_f1(sa["+ learned set"], gold))}
        print("set model trained on all 200 (seen cases included):", out["ablation_not_excluding_seen"], flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")


def cmd_folds(args):
    """5-fold cross-validation over all 501 cases (a different protocol from the paper's)."""
    from legalrag.citepredict.data import load_cases
    from legalrag.citepredict.evaluate import calibrate, run_cases, stage_sets
    from dataclasses import replace

    from legalrag.citepredict.setmodel import SetModel, fold_of
    from legalrag.training.recipes import load_judge
    from legalrag.training.recipes.judge_cite import DEPTHS, SHIPPED, cite_predictor, fit_set_model, prior_of
    from legalrag.wiring import Root

    index = Root().index(args.index, snapshot=True)
    judge = load_judge(JUDGE)
    cases = sorted(load_cases(DATA / "test.json"), key=lambda c: c.id)
    assign = fold_of([c.id for c in cases], 5)
    all_sets: dict[str, dict[str, set]] = {"before": {}, "after": {}}
    over = {**SHIPPED, "candidates": max(DEPTHS), "case_neighbours": args.case_neighbours,
            "case_weight": args.case_weight, "retriever": args.retriever,
            "max_query_chars": 20_000 if args.memory == "dense" else 600}
    t_start = time.perf_counter()
    for f in range(5):
        train = [c for c in cases if assign[c.id] != f]
        test = [c for c in cases if assign[c.id] == f]
        base = cite_predictor(judge, index, "bm25", train, "bm25", BASELINE)
        base_train = run_cases(base, train)
        base_rules = calibrate(base_train, [c.gold for c in train])
        base_test = run_cases(base, test)
        for c, s in zip(test, stage_sets(base_test, base_rules)["+ similar cases"]):
            all_sets["before"][c.id] = s
        if args.retriever == "bm25" and args.memory == "bm25":  # the same pipeline up to the set decision
            model = max((SetModel.train(base_train, [c.gold for c in train], [c.id for c in train], prior_of(base),
                                        depth=d) for d in DEPTHS), key=lambda m: (m.cv["oof_micro_f1"], -m.depth))
            res = [replace(r, pools={**r.pools, "learned-set": model.decision(r)}) for r in base_test]
        else:
            pred = cite_predictor(judge, index, args.retriever, train, args.memory, over)
            model, _, _ = fit_set_model(pred, train, progress=False)
            pred.set_model = model
            res = run_cases(pred, test)
        for c, r in zip(test, res):
            all_sets["after"][c.id] = {p for p, s in r.pools["learned-set"].items() if s >= 0.5}
        print(f"fold {f}: {len(train)} training, {len(test)} test cases; depth {model.depth}, rule {model.rule} "
              f"{model.threshold}; {time.perf_counter() - t_start:.0f} s", flush=True)
    from legalrag.evaluation.metrics import micro_prf

    gold = [c.gold for c in cases]
    out = {"protocol": "5-fold cross-validation over all 501 JuDGE test cases (not the paper's protocol)",
           "machine": MACHINE, "command": "python " + " ".join(sys.argv), "retriever": args.retriever,
           "memory": args.memory}
    for name in ("before", "after"):
        sets = [all_sets[name][c.id] for c in cases]
        out[name] = {k: round(v, 4) for k, v in micro_prf(sets, gold).items()}
        print(f"{name}: micro P/R/F1 {out[name]['precision']:.3f}/{out[name]['recall']:.3f}/{out[name]['f1']:.3f}")
    fa = per_case_f1([all_sets["after"][c.id] for c in cases], gold)
    fb = per_case_f1([all_sets["before"][c.id] for c in cases], gold)
    out["paired_p"] = paired(fa, fb)
    print(f"paired randomization p (per-case F1, 501 cases): {out['paired_p']:.4f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")


def cmd_saved(args):
    """A saved (or shipped) citation model as `legalrag cite` runs it: the 301 evaluation cases, micro P/R/F1 of
    the provisions it predicts, against the per-case F1 of a reference run's row (``--compare``)."""
    from legalrag.citepredict.service import build_predictor
    from legalrag.evaluation.metrics import micro_prf
    from legalrag.training.recipes import load_cail_split, load_judge
    from legalrag.training.recipes.judge_cite import GENERAL_PART, cail_citation_cases, judge_cases
    from legalrag.wiring import Root
    from tqdm import tqdm

    index = Root().index(args.index, snapshot=True)
    judge = load_judge(JUDGE)
    _, ev = judge_cases(judge)
    where = "301 JuDGE evaluation cases"
    if args.cail_holdout:  # CAIL's lists hold only the charges' own articles: score those
        ev = cail_citation_cases(load_cail_split(CAIL, args.split, judge), "holdout")
        where = f"CAIL2018 hold-out ({len(ev)} cases), specific-part articles (above {GENERAL_PART}) only"
    def run(model_dir):
        pred = build_predictor(index, model_dir=model_dir)
        t0 = time.perf_counter()
        sets = [set(pred.predict(c.facts).provisions) for c in tqdm(ev, desc=f"cite ({model_dir})")]
        secs = time.perf_counter() - t0
        if args.cail_holdout:
            sets = [{p for p in s if p.isdigit() and int(p) > GENERAL_PART} for s in sets]
        return sets, secs

    sets, secs = run(args.model_dir)
    gold = [c.gold for c in ev]
    micro = {k: round(v, 4) for k, v in micro_prf(sets, gold).items()}
    compared = {}
    if args.compare:  # the same cases through another model: its micro figures and a paired test of per-case F1
        other, _ = run(args.compare)
        compared = {"model_dir": str(args.compare),
                    "micro": {k: round(v, 4) for k, v in micro_prf(other, gold).items()},
                    "p_per_case_f1": round(paired(per_case_f1(sets, gold), per_case_f1(other, gold)), 4)}
        print("compared:", json.dumps(compared), flush=True)
    out = {"name": f"citation model {args.model_dir} as `legalrag cite` runs it, {where}",
           "machine": MACHINE, "command": "python " + " ".join(sys.argv), "model_dir": str(args.model_dir),
           "index": str(args.index), "micro": micro, "seconds_per_case": round(secs / len(ev), 4),
           **({"compared": compared} if compared else {})}
    print(f"saved model: micro P/R/F1 {micro['precision']:.4f}/{micro['recall']:.4f}/{micro['f1']:.4f}; "
          f"{out['seconds_per_case']} s per case", flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("saved", help="a saved or shipped citation model, as `legalrag cite` runs it")
    p.add_argument("--index", type=Path, required=True)
    p.add_argument("--model-dir", required=True, help="model directory or shipped name (judge-cite)")
    p.add_argument("--compare", default=None, help="another model directory or shipped name: run on the same "
                   "cases, with a paired randomization test of per-case F1")
    p.add_argument("--cail-holdout", action="store_true", help="score the CAIL2018 hold-out's specific-part "
                   "articles instead of JuDGE's evaluation cases")
    p.add_argument("--split", type=Path, default=SPLIT, help="the CAIL split (`legalrag train cail-split`)")
    p.add_argument("--json", type=Path, default=None)
    for name in ("split", "folds"):
        p = sub.add_parser(name)
        p.add_argument("--index", type=Path, required=True)
        p.add_argument("--retriever", required=True, help="index component of the first stage")
        p.add_argument("--memory", choices=("bm25", "dense", "none"), default="dense",
                       help="similar cases by BM25, by the first stage's encoder, or none")
        p.add_argument("--case-neighbours", type=int, default=10)
        p.add_argument("--case-weight", type=float, default=0.9)
        p.add_argument("--json", type=Path, default=None)
        if name == "split":
            p.add_argument("--exclude-seen", type=Path, default=None,
                           help="trained encoder directory: its training cases give the set model no rows")
            p.add_argument("--train-queries", type=Path, default=REPO / "runs" / "judge-split" / "train.jsonl")
            p.add_argument("--cail", action="store_true", help="split: the CAIL2018 training cases join the "
                           "dense case memory, voting only for the specific-part articles their lists hold")
            p.add_argument("--int8", action="store_true", help="split: the case memory's vectors as int8 codes")
            p.add_argument("--split", type=Path, default=SPLIT, help="with --cail: the CAIL split")
            p.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    print("machine:", platform.machine(), os.cpu_count(), "cores;", MACHINE, flush=True)
    {"split": cmd_split, "folds": cmd_folds, "saved": cmd_saved}[args.cmd](args)


if __name__ == "__main__":
    main()
