"""Which features and which classifier the support model could use: ROC AUC and test precision/recall (threshold
for dev precision >= 0.9) of logistic regression and gradient boosting over feature subsets, on the pairs
``bench/citecheck/support_calibrate.py`` cached.

    python bench/citecheck/support_ablation.py --corpus $LEGALRAG_DATA/stard/corpus.jsonl --pairs runs/support-pairs.json \
        --out bench/results/support-ablation.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from legalrag.evaluation.metrics import precision_recall_at as pr
from legalrag.evaluation.metrics import threshold_for_precision as choose_threshold
from legalrag.evaluation.record import write_result

SUBSETS = (["cosine"], ["cosine", "article_cover"], ["cosine", "claim_cover", "article_cover", "bm25"],
           ["cosine", "claim_cover", "article_cover", "bm25", "kind"])


def main() -> None:
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    from legalrag.citecheck.support import SupportScorer, lexical_features
    from legalrag.corpora.statutes import load_statutes
    from legalrag.wiring import make_encoder

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    docs = {d.id: d for d in load_statutes(args.corpus)}
    pairs = json.loads(Path(args.pairs).read_text(encoding="utf-8"))
    scorer = SupportScorer(make_encoder("stard-e5", progress=False))
    def whole_article(part):  # the features of the model shipped before: whole-article covers, bm25, cosine
        rows = scorer.features([(q[0], docs[q[5]]) for q in pairs[part]], cosine=True)
        return [{**lexical_features(q[0], docs[q[5]].text, scorer.idf), "cosine": x["cosine"]}
                for q, x in zip(pairs[part], rows)]

    feats = {p: whole_article(p) for p in ("train", "dev", "test")}
    y = {p: np.array([q[2] for q in pairs[p]]) for p in feats}

    def matrix(part, names):
        return np.array([[x[f] for f in names if f != "kind"] + ([1.0 if q[3] == "sentence" else 0.0]
                         if "kind" in names else []) for x, q in zip(feats[part], pairs[part])])

    rows = []
    for names in SUBSETS:
        for label, make in (("logistic", lambda: LogisticRegression(class_weight="balanced", max_iter=1000)),
                            ("gradient_boosting", lambda: HistGradientBoostingClassifier(max_depth=3, max_iter=100))):
            a = matrix("train", names)
            mean, scale = a.mean(0), a.std(0) + 1e-9
            clf = make().fit((a - mean) / scale, y["train"])
            ps = {p: clf.predict_proba((matrix(p, names) - mean) / scale)[:, 1] for p in ("dev", "test")}
            t = choose_threshold(list(ps["dev"]), list(y["dev"]), 0.9)
            test = pr(list(ps["test"]), [int(v) for v in y["test"]], t)
            rows.append({"features": names, "classifier": label,
                         "auc_dev": round(float(roc_auc_score(y["dev"], ps["dev"])), 3),
                         "auc_test": round(float(roc_auc_score(y["test"], ps["test"])), 3),
                         "test_precision": test["precision"], "test_recall": test["recall"]})
            print(rows[-1], flush=True)
    write_result(args.out, {"rows": rows}, name="Support model ablation: feature subsets and classifiers",
                 machine_note="shared with other jobs",
                 data="the labelled pairs of bench/results/support-stard.json (fit on train, threshold on dev, test)")

if __name__ == "__main__":
    main()
