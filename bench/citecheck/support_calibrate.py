"""Measure the support model: run its recipe (``legalrag.training.recipes.support``, the same as ``legalrag train
support-model``), score the same test pairs with the models shipped before (``bench/data/support_model_before.json``:
whole-article ``full`` and ``lexical``), and write precision, recall and the precision-recall curve of each, by part
and pair kind, with the hand-labelled claims, as a results file and a plot:

    LEGALRAG_DATA=... python bench/citecheck/support_calibrate.py --corpus $LEGALRAG_DATA/stard/corpus.jsonl \
        --split bench/data/stard-split.json --cache runs/support-cache.json \
        --out-model src/legalrag/data/citations/support_model.json --results bench/results/support-stard.json \
        --plot bench/results/support-stard-curve.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

from legalrag.training.recipes.support import DEFAULTS

ROOT = Path(__file__).resolve().parents[2]
PAGE = {"section": "citations", "rows": [
    {"configuration": "support mark (clause-level model: stard-e5 cosine + clause lexical), STARD test part, all "
                      "labelled pairs", "default": True,
     "result": "precision {metrics[full][test][precision]:.2f}, recall {metrics[full][test][recall]:.2f} (target P >= "
               "0.9 at R >= 0.7: missed); before: full {baseline[full][test][precision]:.2f} / "
               "{baseline[full][test][recall]:.2f}, lexical {baseline[lexical][test][precision]:.2f} / "
               "{baseline[lexical][test][recall]:.2f}",
     "cost": "CPU", "needs": "CPU", "anchor": "lab/citations.md"},
    {"configuration": "support mark, claims that cite their article in the sentence (test)",
     "result": "precision {metrics[full][test_sentence][precision]:.2f}, recall {metrics[full][test_sentence][recall]:.2f}",
     "cost": "CPU", "needs": "CPU", "anchor": "lab/citations.md"},
    {"configuration": "support mark, 32 hand-labelled claims (data we wrote)",
     "result": "precision {metrics[full][hand][precision]:.2f}, recall {metrics[full][hand][recall]:.2f}",
     "cost": "CPU", "needs": "CPU", "anchor": "lab/citations.md"}]}


class BeforeScorer:
    """The support model shipped before (whole-article features: ``cosine``, ``claim_cover``, ``article_cover``,
    ``bm25``), to score the same pairs: its logistic model read from its file."""

    def __init__(self, path: Path, name: str):
        import json

        self.m = json.loads(path.read_text(encoding="utf-8"))["models"][name]
        self.threshold = self.m["threshold"]

    def probability(self, x) -> float:
        from legalrag.training.recipes.support import prob

        return prob(self.m, x)


def before_scores(scored, docs, path: Path):
    """Each part's pairs scored by the models shipped before."""
    from legalrag.citecheck.support import BigramIdf, lexical_features

    idf = BigramIdf.load()
    out = {}
    for name in ("full", "lexical"):
        model = BeforeScorer(path, name)
        out[name] = {"threshold": model.threshold}
        for part, s in scored.items():
            if part == "train":
                continue
            rows = []
            for (claim, doc_id), x in zip(s["pairs"], s["features"]):
                f = lexical_features(claim, docs[doc_id].text, idf)
                f["cosine"] = x.get("cosine", 0.0)
                rows.append(model.probability(f))
            out[name][part] = rows
    return out


def precision_at_recall(scores, labels, levels):
    """The best precision at recall >= each level (the interpolated precision-recall curve)."""
    pairs = sorted(zip(scores, labels), key=lambda p: -p[0])
    pos = sum(labels) or 1
    tp, best = 0, []
    for i, (_, y) in enumerate(pairs, 1):
        tp += y
        best.append((tp / pos, tp / i))
    return [round(max((p for r, p in best if r >= lv - 1e-9), default=0.0), 4) for lv in levels]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--split", default=str(ROOT / "bench" / "data" / "stard-split.json"))
    ap.add_argument("--questions", default=None, help="the STARD questions (default: train.jsonl beside --corpus)")
    ap.add_argument("--encoder", default=DEFAULTS["encoder"])
    ap.add_argument("--min-precision", type=float, default=DEFAULTS["min_precision"])
    ap.add_argument("--hand", default=str(ROOT / "bench" / "data" / "support_hand.jsonl"))
    ap.add_argument("--before", default=str(ROOT / "bench" / "data" / "support_model_before.json"))
    ap.add_argument("--cache", default="runs/support-cache.json")
    ap.add_argument("--out-model", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--plot", default=None)
    args = ap.parse_args()
    from legalrag.corpora.statutes import load_statutes
    from legalrag.evaluation.metrics import precision_recall_at
    from legalrag.evaluation.record import command as record_command
    from legalrag.evaluation.record import write_result
    from legalrag.training.recipes import support_model
    from legalrag.training.recipes.support import curve
    from legalrag.wiring import Root, make_encoder

    fit = support_model(args.corpus, args.split, lambda: Root().index(snapshot=True), args.out_model,
                        encoder=make_encoder(args.encoder, progress=False), encoder_name=args.encoder,
                        min_precision=args.min_precision, questions=args.questions, hand=args.hand,
                        cache=args.cache, command=record_command(), log=lambda line: print(line, flush=True))
    docs = {d.id: d for d in load_statutes(args.corpus)}
    before = before_scores(fit.scored, docs, Path(args.before))
    baseline = {}
    levels = [round(0.05 * i, 2) for i in range(1, 21)]
    pr = {}
    for name, b in before.items():
        res = {}
        for part in ("dev", "test", "hand"):
            s, y, kinds = b[part], fit.scored[part]["labels"], fit.scored[part]["kinds"]
            res[part] = precision_recall_at(s, y, b["threshold"])
            for kind in ("sentence", "conclusion"):
                ix = [i for i, k in enumerate(kinds) if k == kind]
                if ix:
                    res[f"{part}_{kind}"] = precision_recall_at([s[i] for i in ix], [y[i] for i in ix], b["threshold"])
        res["test_curve"] = curve(b["test"], fit.scored["test"]["labels"])
        baseline[name] = res
        pr[f"before: {name}"] = precision_at_recall(b["test"], fit.scored["test"]["labels"], levels)
    for name in fit.models:
        pr[f"now: {name}"] = precision_at_recall(fit.scored["test"][name], fit.scored["test"]["labels"], levels)
    if args.plot:
        from legalrag.evaluation.plots import plot_series

        plot_series(pr, args.plot, x=levels, title="Support model, STARD test pairs: best precision at each recall",
                    xlabel="recall", ylabel="precision")
    write_result(args.results, fit.metrics,
                 name="Support marks: precision and recall of 'this clause of the article supports this sentence'",
                 machine_note="shared with other jobs",
                 data="STARD lawyers' answers + gold articles, frozen split (bench/data/stard-split.json): lexical "
                      "fitted on train, full on dev (out-of-fold threshold), reported on test; negatives: the top 3 "
                      "retrieved non-gold articles of the default index and the gold article of the neighbouring "
                      f"question; 'hand': {fit.hand} claims written by the legalrag authors (data we wrote); "
                      "'baseline': the models shipped before, on the same pairs",
                 pairs=fit.pairs, models=fit.models, seconds=fit.seconds, baseline=baseline,
                 precision_at_recall={"recall": levels, **pr}, page=PAGE)
    print(f"wrote {args.out_model} and {args.results}", flush=True)


if __name__ == "__main__":
    main()
