"""Does the answer step see the article a multiple-choice question tests? For each question, whether its source
article (the ``article`` field) is among the articles shown to the model: the stem alone searched for the same
number of articles, against the stem and the stem with each choice searched and pooled (what ``eval mcq`` does).
No model is called.

    python bench/qa/bench_mcq_retrieval.py --index indexes/cn-law \\
        --questions bench/data/mcq_statutes.jsonl bench/data/mcq_cloze.jsonl --out runs/mcq-retrieval.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", required=True)
    ap.add_argument("--questions", nargs="+", required=True)
    ap.add_argument("--shown", type=int, default=8, help="articles shown to the model")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from legalrag.agents.qa.mcq_eval import load_mcq
    from legalrag.agents.qa.pipeline import _gather_mcq, _Run
    from legalrag.evaluation.compare import paired_randomization_test
    from legalrag.search.local import StatuteIndexSource
    from legalrag.wiring import Root

    source = StatuteIndexSource(Root().index(args.index, snapshot=True))
    report = {}
    for path in args.questions:
        gold = {}
        parts = {}
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                obj = json.loads(line)
                gold[obj["id"]] = obj["article"]
                parts[obj["id"]] = obj.get("part", "all")
        stem_hits, pooled_hits, ids = [], [], []
        t0 = time.perf_counter()
        for q in load_mcq(path):
            stem = [r.title for r in source.search(q.question, k=args.shown)]
            pooled, _ = _gather_mcq(_Run(None), q.question, q.choices, {"statutes": source}, 3, 2, args.shown)
            stem_hits.append(float(gold[q.id] in stem))
            pooled_hits.append(float(gold[q.id] in [r.title for r in pooled]))
            ids.append(q.id)
        n = len(ids)
        out = {"n": n, "stem_only": round(sum(stem_hits) / n, 3), "stem_and_choices": round(sum(pooled_hits) / n, 3),
               "paired_p": round(paired_randomization_test(pooled_hits, stem_hits), 4),
               "seconds_per_question": round((time.perf_counter() - t0) / n, 2)}
        for part in sorted(set(parts.values()) - {"all"}):
            keep = [i for i, x in enumerate(ids) if parts[x] == part]
            out[part] = {"n": len(keep), "stem_only": round(sum(stem_hits[i] for i in keep) / len(keep), 3),
                         "stem_and_choices": round(sum(pooled_hits[i] for i in keep) / len(keep), 3)}
        report[Path(path).name] = out
        print(Path(path).name, out, flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
