"""STARD dev and test retrieval over the 2023-06-05 corpus (the shipped default index, gold ids as they are) and
over the current law (the index `corpus update` builds, versions in force on 2025-04-19, gold mapped by law and
article number where the article's text is unchanged: such an article keeps its 2023 id).

    LEGALRAG_DATA=../shared/data python bench/laws/bench_stard_current.py --out bench/results/laws-stard.json

(``--current INDEX``: another index of versions, e.g. the one ``corpus update`` built, instead of the default.)

Both with each index's default component (the stard-e5 dense one). The current-law figures are on the questions
that keep at least one gold article (its text unchanged); the 2023 figures are given on all questions and on
that same subset with the same gold, so the difference is the corpus's, not the questions'.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from legalrag.evaluation.record import write_result

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--current", type=Path, help="an index of versions (default: the default index of the law in force)")
    ap.add_argument("--stard", type=Path, default=Path(os.environ.get("LEGALRAG_DATA", "../shared/data")) / "stard")
    ap.add_argument("--today", default="2025-04-19")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    from legalrag.evaluation.metrics import mrr_at_k, recall_at_k
    from legalrag.laws.select import in_force_filter
    from legalrag.retrieval.index import open_index
    from legalrag.retrieval.pipeline import build_pipeline
    from legalrag.wiring import Root, encoder_factory

    split = json.loads((ROOT / "bench" / "data" / "stard-split.json").read_text(encoding="utf-8"))
    questions = {}
    with open(args.stard / "train.jsonl", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            questions[str(q["query_id"])] = q
    old = Root().index(snapshot=True)
    cur = open_index(args.current, encoder_factory(None)) if args.current else Root().index(as_of=args.today)
    keep = in_force_filter(args.today)  # the default index is read as of that day already; a given one is filtered
    old_pipe, cur_pipe = build_pipeline(old), build_pipeline(cur)
    metrics = {}
    for part in ("dev", "test"):
        qs = [questions[str(i)] for i in split[part]]
        texts = [q["query"] for q in qs]
        old_hits = [old_pipe.search(t, k=10) for t in texts]
        cur_hits = [cur_pipe.search(t, k=10, filter=keep) for t in texts]
        full, sub_old, sub_cur, mrr_old, mrr_cur, kept = [], [], [], [], [], 0
        for q, oh, ch in zip(qs, old_hits, cur_hits):
            gold = {str(g) for g in q["gold_ids"]}
            ro, rc = [h.document.id for h in oh], [h.document.id for h in ch]
            full.append(recall_at_k(ro, gold, 10))
            mapped = {g for g in gold if g in cur and keep(cur.get(g))}
            if not mapped:
                continue
            kept += 1
            sub_old.append(recall_at_k(ro, mapped, 10))
            sub_cur.append(recall_at_k(rc, mapped, 10))
            mrr_old.append(mrr_at_k(ro, mapped, 10))
            mrr_cur.append(mrr_at_k(rc, mapped, 10))
        mean = lambda xs: round(sum(xs) / len(xs), 4) if xs else None  # noqa: E731
        metrics[part] = {"questions": len(qs), "kept": kept, "recall@10_2023_all": mean(full),
                         "recall@10_2023_kept": mean(sub_old), "recall@10_current_kept": mean(sub_cur),
                         "mrr@10_2023_kept": mean(mrr_old), "mrr@10_current_kept": mean(mrr_cur),
                         "delta_recall@10": round(mean(sub_cur) - mean(sub_old), 4)}
    metrics["corpora"] = {"2023": old.manifest["corpus"].get("source"),
                          "current": str(args.current) if args.current else cur.manifest["corpus"].get("source"),
                          "current_documents": cur.manifest["corpus"]["n_documents"]}
    write_result(args.out, metrics, command=f"python bench/laws/bench_stard_current.py{' --current INDEX' if args.current else ''} --out {args.out}", name="laws: STARD retrieval over the 2023-06-05 corpus and over the current law",
                 data="STARD (bench/data/stard-split.json dev and test); the 2023-06-05 shipped corpus; the default index "
                      "of the law in force (the shipped dated versions, source snapshot 2025-04-19), read as of "
                      f"{args.today}",
                 source="docs/lab/laws.md#benchmarks",
                 page={"section": "laws", "order": 130, "rows": [{
                     "configuration": "STARD over the current law (in force 2025-04-19, gold mapped where unchanged)",
                     "default": False,
                     "result": "test R@10 {metrics[test][recall@10_current_kept]} vs {metrics[test][recall@10_2023_kept]} "
                               "on the 2023 corpus ({metrics[test][kept]} of 131 questions keep a gold article); dev "
                               "{metrics[dev][recall@10_current_kept]} vs {metrics[dev][recall@10_2023_kept]}",
                     "cost": "", "needs": "CPU", "anchor": ""}]})
    print(json.dumps(metrics, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
