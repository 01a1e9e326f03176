"""Does packing change a fine-tuned encoder? Both forms rank the same sub-corpus for the same queries.

Encoding a 55k-article corpus twice costs an hour on 2 cores, so the check runs on a sub-corpus: every gold
article of the queries plus ``--extra`` random others (fixed seed). Both the fp32 sentence-transformers model and
its packed form (``legalrag train pack-encoder``, or a shipped model by name) encode the same passages (the
index's text, cut at ``--max-chars``) and queries; reported: per-query Recall@10 / MRR@10 of each and the paired
randomization test between them, the mean and minimum cosine between the two forms' vectors, and how many of
each query's top-10 they share.

    python bench/retrieval/bench_packed.py --model models/stard-e5 --packed stard-e5 --index indexes/stard \\
        --queries runs/stard-split/dev.jsonl --extra 5000 --out bench/results/packing-stard-e5.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="the fp32 sentence-transformers directory")
    ap.add_argument("--packed", required=True, help="its packed form: a directory or a shipped model name")
    ap.add_argument("--index", required=True, help="an index of the corpus (its documents)")
    ap.add_argument("--queries", required=True)
    ap.add_argument("--baseline", help="another encoder ranked the same way (e.g. models/e5-small, the start)")
    ap.add_argument("--extra", type=int, default=5000)
    ap.add_argument("--max-chars", type=int, default=512)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    from legalrag.evaluation.compare import paired_randomization_test
    from legalrag.evaluation.datasets import load_queries
    from legalrag.evaluation.metrics import mrr_at_k, recall_at_k
    from legalrag.retrieval.dense import passage_text
    from legalrag.wiring import Root, make_encoder

    index = Root().index(args.index, snapshot=True)
    queries = [q for q in load_queries(args.queries) if q.gold_ids]
    docs = list(index.documents)
    gold = sorted({g for q in queries for g in q.gold_ids})
    pos = {d.id: i for i, d in enumerate(docs)}
    rng = np.random.default_rng(args.seed)
    extra = rng.choice(len(docs), size=min(args.extra, len(docs)), replace=False)
    keep = sorted({pos[g] for g in gold if g in pos} | set(int(i) for i in extra))
    sub = [docs[i] for i in keep]
    texts = [passage_text(d, args.max_chars) for d in sub]
    forms = {"fp32": make_encoder(args.model, cache=False, progress=True, threads=args.threads),
             "packed": make_encoder(args.packed, cache=False, progress=True, threads=args.threads)}
    if args.baseline:
        forms["baseline"] = make_encoder(args.baseline, cache=False, progress=True, threads=args.threads)
    vecs, seconds = {}, {}
    for name, enc in forms.items():
        t0 = time.perf_counter()
        vecs[name] = (enc.encode_documents(texts), enc.encode_queries([q.text for q in queries]))
        seconds[name] = time.perf_counter() - t0
    ids = [d.id for d in sub]
    per: dict[str, dict[str, list[float]]] = {}
    tops = {}
    for name, (p, q) in vecs.items():
        order = np.argsort(-(q @ p.T), axis=1)[:, :10]
        tops[name] = [[ids[j] for j in row] for row in order]
        per[name] = {"recall@10": [recall_at_k(t, q_.gold_ids, 10) for t, q_ in zip(tops[name], queries)],
                     "mrr@10": [mrr_at_k(t, q_.gold_ids, 10) for t, q_ in zip(tops[name], queries)]}
    cos_p = (vecs["fp32"][0] * vecs["packed"][0]).sum(1)
    cos_q = (vecs["fp32"][1] * vecs["packed"][1]).sum(1)
    result = {
        "queries": len(queries), "sub_corpus": len(sub), "gold_articles": len(gold),
        "fp32": {m: round(float(np.mean(v)), 4) for m, v in per["fp32"].items()},
        "packed": {m: round(float(np.mean(v)), 4) for m, v in per["packed"].items()},
        **({"baseline": {m: round(float(np.mean(v)), 4) for m, v in per["baseline"].items()},
            "p_value_packed_vs_baseline": {m: round(float(paired_randomization_test(per["packed"][m],
                                                                                    per["baseline"][m])), 4)
                                           for m in per["packed"]}} if "baseline" in per else {}),
        "p_value": {m: round(float(paired_randomization_test(per["fp32"][m], per["packed"][m])), 4)
                    for m in per["fp32"]},
        "cosine_passages": {"mean": round(float(cos_p.mean()), 6), "min": round(float(cos_p.min()), 6)},
        "cosine_queries": {"mean": round(float(cos_q.mean()), 6), "min": round(float(cos_q.min()), 6)},
        "top10_overlap_mean": round(float(np.mean([len(set(a) & set(b)) / 10 for a, b in
                                                   zip(tops["fp32"], tops["packed"])])), 4),
        "encode_seconds": {k: round(v, 1) for k, v in seconds.items()},
    }
    from legalrag.evaluation.record import command, write_result

    write_result(args.out, result, command=command(["bench/retrieval/bench_packed.py", *(sys.argv[1:] if argv is None else argv)]),
                 name="Packing a fine-tuned encoder: the fp32 and the packed form on one sub-corpus",
                 machine_note="shared with other jobs")
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
