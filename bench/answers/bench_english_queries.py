"""An English question over the Chinese corpus: search with the English text (the multilingual stard-e5 encoder
as it is) or with the model's Chinese translation (what the answer engine does), against the Chinese original.
Hit@6 (6 articles reach the answer prompt) and Recall@10 on bench/data/english-dev-questions.json (12 STARD
dev questions translated for this).

    python bench/answers/bench_english_queries.py --index indexes/stard-ft --queries runs/stard-split/dev.jsonl \
        --model qwen2.5-coder-0.5b --out bench/results/answers-english-queries.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from legalrag.evaluation.record import write_result

REPO = Path(__file__).resolve().parents[2]
def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    from legalrag.answer.engine import engine_for
    from legalrag.evaluation.answers.data import load_questions
    from legalrag.retrieval.pipeline import build_pipeline, resolve_component
    from legalrag.wiring import Root, make_llm

    english = json.loads((REPO / "bench/data/english-dev-questions.json").read_text(encoding="utf-8"))["questions"]
    qs = [q for q in load_questions(a.queries) if q.id in english]
    idx = Root().index(a.index, snapshot=True, threads=a.threads)
    component = resolve_component(idx, None)
    pipe = build_pipeline(idx, retriever=component)
    llm = make_llm(a.model, threads=a.threads)
    engine = engine_for(llm, search=lambda q, k: list(pipe.search(q, k=k)), lang="zh",
                        support=Root().make_support_scorer())
    rows, seconds = [], []
    for q in qs:
        t0 = time.perf_counter()
        steps: list = []
        translated, _ = engine._translate(english[q.id], steps)
        seconds.append(time.perf_counter() - t0)
        row = {"id": q.id, "english": english[q.id], "translation": translated}
        for name, text in (("chinese", q.query), ("english", english[q.id]), ("translated", translated)):
            ids = [h.id for h in pipe.search(text, k=10)]
            gold = set(q.gold_ids)
            row[name] = {"hit@6": float(bool(gold & set(ids[:6]))), "recall@10": len(gold & set(ids)) / len(gold)}
        rows.append(row)
    metrics = {name: {m: round(sum(r[name][m] for r in rows) / len(rows), 4) for m in ("hit@6", "recall@10")}
               for name in ("chinese", "english", "translated")}
    metrics.update(n=len(rows), component=component, model=llm.model_id,
                   translation_seconds=round(sum(seconds) / len(seconds), 2))
    result = {"name": "answers: an English question over the Chinese corpus, searched as asked or translated",
              "machine_note": "shared with other jobs",
              "data": "12 STARD dev questions (the first 12 of the frozen dev part) with English translations written "
                      "for legalrag (bench/data/english-dev-questions.json); the 55,515-article corpus",
              "metrics": metrics, "rows": rows}
    write_result(a.out, **result)
    print(json.dumps(metrics, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
