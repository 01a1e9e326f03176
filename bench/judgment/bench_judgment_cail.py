"""The CAIL2018 hold-out protocol of the judgment structure models.

    legalrag train cail-split --data $LEGALRAG_DATA/judge --cail $LEGALRAG_DATA/cail2018 \
        --out bench/data/cail-split.json --encode -o sample=1000
    legalrag train judge-structure ... --out models/judge/structure-cail     # the recipe (see its model card)
    python bench/judgment/bench_judgment_cail.py holdout --model-dir models/judge/structure-cail judge-structure \
        --json-out bench/results/judge-cail-holdout.json

``holdout``: charge macro/micro F1, specific-article F1 (articles above the general part) and LawBench's prison
score on the CAIL hold-out of ``bench/data/cail-split.json`` (split before anything is trained or tuned), death
and life apart as accuracy, each model after the first tested against it by paired randomization.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MACHINE = "2-core x86-64 CPU, 24 GiB, no GPU, shared with other jobs"
DATA = Path(os.environ.get("LEGALRAG_DATA", REPO.parent / "shared" / "data"))
SPLIT = REPO / "bench" / "data" / "cail-split.json"
# Encoding a case's facts with judge-e5 costs about a second on 2 cores: the hold-out is scored on a stratified
# sample (``capped``: at most --sample cases per main charge), stated with every figure.


def prison_score(pred: float, gold: float) -> float:
    """LawBench's per-case prison score: 1 - |log(pred+1) - log(gold+1)| / log(216), floored at 0."""
    return max(0.0, 1 - abs(math.log(pred + 1) - math.log(gold + 1)) / math.log(216))


def per_case(g, s) -> dict:
    """One case's charge F1, specific-article F1 and prison score (None for death and life), for paired tests."""
    from legalrag.judgment.candidates import GENERAL_PART
    from legalrag.judgment.extract import DEATH_MONTHS, LIFE_MONTHS

    def f1(pred, gold):
        hit = len(pred & gold)
        return 2 * hit / (len(pred) + len(gold)) if hit else 0.0

    m = s.prison.value
    return {"charge_f1": f1({c.name for c in s.charges if c.listed}, set(g.charges)),
            "specific_article_f1": f1({int(a.name) for a in s.articles if int(a.name) > GENERAL_PART},
                                      {a for a in g.articles if a > GENERAL_PART}),
            "prison_score": None if g.prison_months in (DEATH_MONTHS, LIFE_MONTHS) else
            prison_score(0 if m is None else min(m, LIFE_MONTHS), g.prison_months)}


def holdout_scores(pairs):
    """pairs: (gold LabelledCase, predicted Structure). The item 2(b) figures."""
    from legalrag.judgment.candidates import GENERAL_PART
    from legalrag.judgment.extract import DEATH_MONTHS, LIFE_MONTHS

    tp, fp, fn = Counter(), Counter(), Counter()
    a_tp = a_fp = a_fn = 0
    scores, special, special_ok = [], 0, 0
    for g, s in pairs:
        pred = {c.name for c in s.charges if c.listed}
        gold = set(g.charges)
        for ch in pred | gold:
            tp[ch] += ch in pred and ch in gold
            fp[ch] += ch in pred and ch not in gold
            fn[ch] += ch in gold and ch not in pred
        pa = {int(a.name) for a in s.articles if int(a.name) > GENERAL_PART}
        ga = {a for a in g.articles if a > GENERAL_PART}
        a_tp, a_fp, a_fn = a_tp + len(pa & ga), a_fp + len(pa - ga), a_fn + len(ga - pa)
        m = s.prison.value
        if g.prison_months in (DEATH_MONTHS, LIFE_MONTHS):
            special += 1
            special_ok += (m == g.prison_months) or (g.prison_months == LIFE_MONTHS and m == LIFE_MONTHS)
            continue
        scores.append(prison_score(0 if m is None else min(m, LIFE_MONTHS), g.prison_months))

    def f1(t, p, n):
        return 2 * t / (2 * t + p + n) if t else 0.0

    labels = sorted(set(tp) | set(fn))
    gold_labels = [c for c in labels if tp[c] + fn[c] > 0]
    return {"n": len(pairs), "charges_in_holdout": len(gold_labels),
            "charge_micro_f1": round(f1(sum(tp.values()), sum(fp.values()), sum(fn.values())), 4),
            "charge_macro_f1": round(sum(f1(tp[c], fp[c], fn[c]) for c in gold_labels) / len(gold_labels), 4),
            "specific_article_f1": round(f1(a_tp, a_fp, a_fn), 4),
            "prison_score": round(sum(scores) / len(scores), 4), "prison_n": len(scores),
            "death_life_n": special, "death_life_accuracy": round(special_ok / special, 4) if special else None}


def cmd_holdout(args):
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.shipped import model_dir
    from legalrag.training.recipes import load_cail_split, load_judge
    from legalrag.training.recipes.judge_data import capped
    from legalrag.wiring import make_encoder

    judge = load_judge(DATA / "judge")
    statutes = judge.statutes
    by_id = {c.id: c for c in load_cail_split(args.cail, args.split, judge).holdout}
    hold = [by_id[i] for i in capped(list(by_id), by_id, args.sample)]
    out = {"protocol": "CAIL2018 hold-out (bench/data/cail-split.json: 20% per main charge, split before any "
                       "training; charges with < 5 cases only in training), scored on a sample of at most "
                       f"{args.sample} cases per main charge ({len(hold)} cases, the first by id hash)",
           "machine": MACHINE,
           "command": "python " + " ".join(sys.argv), "data": "CAIL2018 (Xiao et al., 2018), see "
           "$LEGALRAG_DATA/cail2018/LICENSE-NOTE.txt; JuDGE (MIT)", "models": {}}
    cases: dict[str, list[dict]] = {}
    for name, d in zip(args.names, args.model_dir):
        d = model_dir(d, "judgment-model")
        man = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
        enc = make_encoder(man.get("encoder_spec"), progress=False) if man.get("encoder") else None
        model = StructurePredictor.load(d, statutes, enc)
        t0 = time.perf_counter()
        pairs = [(g, model.predict(g.facts)) for g in hold[: args.limit or None]]
        res = holdout_scores(pairs)
        res["seconds_per_case"] = round((time.perf_counter() - t0) / len(pairs), 3)
        res["model"] = str(args.model_dir[args.names.index(name)])
        out["models"][name] = res
        cases[name] = [per_case(g, s) for g, s in pairs]
        if len(cases) > 1:  # paired randomization test of the per-case scores against the first model
            from legalrag.evaluation.compare import paired_randomization_test

            first = cases[args.names[0]]
            res["p_vs_" + args.names[0]] = {
                k: round(paired_randomization_test([a[k] for a, b in zip(first, cases[name]) if a[k] is not None],
                                                   [b[k] for a, b in zip(first, cases[name]) if a[k] is not None]), 4)
                for k in ("charge_f1", "specific_article_f1", "prison_score")}
        print(name, json.dumps(res, ensure_ascii=False), flush=True)
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["holdout"])
    ap.add_argument("--cail", type=Path, default=DATA / "cail2018")
    ap.add_argument("--split", type=Path, default=SPLIT, help="the CAIL split (`legalrag train cail-split`)")
    ap.add_argument("--model-dir", nargs="+", required=True, help="model directories or shipped names")
    ap.add_argument("--names", nargs="+", default=None, help="a name per --model-dir")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--sample", type=int, default=5, help="at most this many cases per main charge")
    ap.add_argument("--json-out", type=Path, default=None)
    args = ap.parse_args()
    args.names = args.names or [Path(p).name for p in args.model_dir]
    cmd_holdout(args)


if __name__ == "__main__":
    main()
