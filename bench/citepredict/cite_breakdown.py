"""Where citation prediction errs: precision and recall of the non-LLM pipeline (similar-cases row, dev-
calibrated threshold) split into two groups of provisions by number, e.g. the general part (arts. 1-101) and
the specific offences (102 and up) of the PRC Criminal Law, and the F1 an oracle for the second group would give.

    python bench/citepredict/cite_breakdown.py --index indexes/judge-bm25 --split-at 101
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("LEGALRAG_SHARED_DATA", REPO.parent / "shared" / "data")) / "judge" / "data"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument("--split-at", type=int, default=101, help="provisions numbered up to this form the first group")
    ap.add_argument("--dev", type=int, default=200)
    args = ap.parse_args()
    from legalrag.citepredict.cases import CaseMemory
    from legalrag.citepredict.data import load_cases, split_dev_eval
    from legalrag.citepredict.evaluate import run_cases
    from legalrag.citepredict.select import calibrate_threshold, select
    from legalrag.citepredict.service import build_predictor
    from legalrag.evaluation.metrics import micro_prf

    dev, ev = split_dev_eval(load_cases(DATA / "test.json"), args.dev)
    from legalrag.wiring import Root

    pred = build_predictor(Root().index(args.index, snapshot=True), train_citations=DATA / "qrels_file_train", cases=CaseMemory.build(dev),
                           overrides={"core_k": 2, "prior_weight": 2.0})
    t, _ = calibrate_threshold([r.pools["similar-cases"] for r in run_cases(pred, dev)], [c.gold for c in dev])
    sets = [select(r.pools["similar-cases"], t) for r in run_cases(pred, ev)]
    gold = [c.gold for c in ev]

    def first(p: str) -> bool:
        return p.isdigit() and int(p) <= args.split_at

    for name, keep in ((f"provisions <= {args.split_at}", first), (f"provisions > {args.split_at}",
                                                                    lambda p: not first(p))):
        ps = [{p for p in s if keep(p)} for s in sets]
        gs = [{p for p in g if keep(p)} for g in gold]
        tp = sum(len(a & b) for a, b in zip(ps, gs))
        n_pred, n_gold = sum(map(len, ps)), sum(map(len, gs))
        print(f"{name}: gold {n_gold}, predicted {n_pred}, correct {tp}, P {tp / max(n_pred, 1):.3f}, "
              f"R {tp / max(n_gold, 1):.3f}")
    oracle = [{p for p in s if first(p)} | {p for p in g if not first(p)} for s, g in zip(sets, gold)]
    print(f"all: F1 {micro_prf(sets, gold)['f1']:.3f} (threshold {t}); with the second group given exactly "
          f"(oracle), F1 {micro_prf(oracle, gold)['f1']:.3f}")


if __name__ == "__main__":
    main()
