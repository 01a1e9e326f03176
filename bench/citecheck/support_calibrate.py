"""Measure the support model: run its recipe (``legalrag.training.recipes.support``, the same as ``legalrag train
support-model``) and write the figures by part (precision and recall on the frozen split's train, dev and test, by
pair kind, on the hand-labelled claims, and how many wrong citations the mark still shows) as a results file:

    LEGALRAG_DATA=... python bench/citecheck/support_calibrate.py --corpus $LEGALRAG_DATA/stard/corpus.jsonl \
        --split runs/stard-split --index indexes/stard-bm25 --train-limit 300 --cache runs/support-pairs.json \
        --out-model runs/support_model.json --results bench/results/support-stard.json

The model file is written to ``--out-model`` (the shipped one, ``src/legalrag/data/citations/support_model.json``,
is what ``legalrag train support-model`` writes there).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from legalrag.training.recipes.support import DEFAULTS

PAGE = {"section": "citations", "rows": [{"configuration": "support mark (stard-e5 cosine + lexical), STARD test part, all labelled pairs", "default": True, "result": "precision {metrics[full][test][precision]:.2f}, recall {metrics[full][test][recall]:.2f} (target P >= 0.9 at R >= 0.7: missed)", "cost": "CPU", "needs": "CPU", "anchor": "lab/citations.md"}, {"configuration": "support mark, claims that cite their article in the sentence (test)", "result": "precision {metrics[full][test_sentence][precision]:.2f}, recall {metrics[full][test_sentence][recall]:.2f}", "cost": "CPU", "needs": "CPU", "anchor": "lab/citations.md"}, {"configuration": "support mark, 32 hand-labelled claims (data we wrote)", "result": "precision {metrics[full][hand][precision]:.2f}, recall {metrics[full][hand][recall]:.2f}", "cost": "CPU", "needs": "CPU", "anchor": "lab/citations.md"}, {"configuration": "wrong citation (retrieved, not gold) shown ✓", "result": "existence only {metrics[full][test_wrong_citation_shown_ok][existence_only]:.2f} -> support mark {metrics[full][test_wrong_citation_shown_ok][support_mark]:.3f}", "cost": "CPU", "needs": "CPU", "anchor": "lab/citations.md"}]}  # the results page rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--split", required=True, help="folder with train.jsonl, dev.jsonl, test.jsonl")
    ap.add_argument("--index", required=True)
    ap.add_argument("--encoder", default=DEFAULTS["encoder"])
    ap.add_argument("--negatives", type=int, default=DEFAULTS["negatives"])
    ap.add_argument("--train-limit", type=int, default=DEFAULTS["train_limit"])
    ap.add_argument("--min-precision", type=float, default=DEFAULTS["min_precision"])
    ap.add_argument("--hand", default=str(Path(__file__).resolve().parents[1] / "data" / "support_hand.jsonl"))
    ap.add_argument("--cache", default="runs/support-pairs.json")
    ap.add_argument("--out-model", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--df", default=None, help="bigram table (default: the shipped one)")
    ap.add_argument("--no-cosine", action="store_true", help="fit the lexical model only (no encoder)")
    args = ap.parse_args()
    from legalrag.evaluation.record import command as record_command
    from legalrag.evaluation.record import write_result
    from legalrag.training.recipes import support_model
    from legalrag.wiring import Root, make_encoder

    fit = support_model(args.corpus, args.split, lambda: Root().index(args.index), args.out_model,
                        encoder=None if args.no_cosine else make_encoder(args.encoder, progress=True),
                        encoder_name=args.encoder, negatives=args.negatives, train_limit=args.train_limit,
                        min_precision=args.min_precision, hand=args.hand, cache=args.cache, df=args.df,
                        command=record_command(), log=lambda line: print(line, flush=True))
    write_result(args.results, fit.metrics,
                 name="Support marks: precision and recall of 'this article supports this sentence'",
                 machine_note="shared with other jobs",
                 data="STARD lawyers' answers + gold articles, frozen split (train fit / dev threshold / test "
                      f"report); negatives: top retrieved non-gold articles of {args.index}; 'hand': "
                      f"{fit.hand} claims written by the legalrag authors (data we wrote)",
                 pairs=fit.pairs, models=fit.models, seconds=fit.seconds, page=PAGE)
    print(f"wrote {args.out_model} and {args.results}", flush=True)


if __name__ == "__main__":
    main()
