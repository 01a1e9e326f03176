"""The support floor under which an answer's conclusion is taken as not following from its quoted basis.

The citation marks' threshold of the support model is an operating point for "this article supports this
sentence"; a conclusion written from the quotes is judged against them more loosely (it paraphrases, and it
says yes or no). This script picks the floor on the dev part of the frozen STARD split: for each question, the
lawyer's conclusion (``yesno.conclusion_spans``, its first span) against the decisive quote of a gold article
(a conclusion that follows) and against the decisive quote of the best-ranked retrieved article that is not
gold (one that mostly does not). The floor is the 10th percentile of the gold pairs' support (it keeps nine in
ten conclusions that do follow), reported with the share of non-gold pairs it refuses.

    LEGALRAG_DATA=/work/shared/data python bench/answers/bench_conclusion_floor.py \
        --queries runs/stard-split/dev.jsonl --out bench/results/conclusion-floor.json
"""

from __future__ import annotations

import argparse
import json
import statistics


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--keep", type=float, default=0.9, help="share of gold pairs the floor keeps")
    a = ap.parse_args()
    from legalrag.answer.basis import decisive_quote
    from legalrag.evaluation.answers.data import load_questions
    from legalrag.evaluation.answers.yesno import conclusion_spans
    from legalrag.evaluation.record import write_result
    from legalrag.retrieval.pipeline import build_pipeline
    from legalrag.wiring import Root

    root = Root()
    index = root.index(None)
    pipe = build_pipeline(index)
    scorer = root.make_support_scorer()  # the full model answers check their conclusions with
    pos, neg = [], []
    for q in load_questions(a.queries):
        spans = conclusion_spans(q.answer)
        if not spans or not q.gold_ids:
            continue
        claim = spans[0][:200]
        try:
            gold = index.get(q.gold_ids[0])
        except KeyError:
            continue
        other = next((h.document for h in pipe.search(q.query, k=10) if h.id not in q.gold_ids), None)
        pairs = [(claim, decisive_quote(q.query, gold).text)]
        if other is not None:
            pairs.append((claim, decisive_quote(q.query, other).text))
        probs = scorer.scores(pairs)
        pos.append(probs[0])
        if other is not None:
            neg.append(probs[1])
    pos.sort()
    floor = pos[int((1 - a.keep) * len(pos))]
    metrics = {"gold_pairs": len(pos), "other_pairs": len(neg), "floor": round(floor, 4), "keep": a.keep,
               "gold_median": round(statistics.median(pos), 4), "other_median": round(statistics.median(neg), 4),
               "other_refused": round(sum(p < floor for p in neg) / len(neg), 4),
               "marks_threshold": round(float(scorer.threshold), 4),
               "gold_under_marks_threshold": round(sum(p < scorer.threshold for p in pos) / len(pos), 4)}
    write_result(a.out, metrics, name="conclusion support floor",
                 command="LEGALRAG_DATA=/work/shared/data python bench/answers/bench_conclusion_floor.py "
                         f"--queries {a.queries} --out {a.out}",
                 data=f"{a.queries} (the lawyers' conclusions against decisive quotes of gold and non-gold articles)",
                 machine_note="shared with other jobs")
    print(json.dumps(metrics, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
