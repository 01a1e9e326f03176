"""The scope decision on its test part: the share of out-of-scope messages declined, the share of in-scope
messages and of the STARD test questions declined, and the rate on the off-corpus messages of
``bench/data/off-corpus-questions.json``; beside it, the rule it replaced (``guard.outside_corpus``: the
foreign-jurisdiction pattern and the best-hit threshold). Every message is searched with the shipped national
index's default component and decided by ``answer.scope.scope_verdict`` with the shipped model, as the answer
engine does (an English message is searched as written: its decision does not read the scores).

    LEGALRAG_DATA=/work/shared/data python bench/answers/bench_scope.py --out bench/results/scope-test.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from pathlib import Path

from legalrag.evaluation.record import shown_path, write_result

REPO = Path(__file__).resolve().parents[2]



def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", default=str(REPO / "bench/data/scope-messages.jsonl"))
    ap.add_argument("--stard", default=os.path.join(os.environ.get("LEGALRAG_DATA", "../shared/data"),
                                                    "stard", "train.jsonl"))
    ap.add_argument("--split", default=str(REPO / "bench/data/stard-split.json"))
    ap.add_argument("--part", default="test", choices=["dev", "test"])
    ap.add_argument("--model", default=None, help="a scope model file (default: the shipped model)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    from legalrag.answer.engine import answer_language
    from legalrag.answer.guard import RELEVANCE_THRESHOLDS, outside_corpus
    from legalrag.answer.scope import load_scope_models, scope_verdict
    from legalrag.retrieval.pipeline import build_pipeline, resolve_component
    from legalrag.training.recipes.scope import read_messages, stard_questions
    from legalrag.wiring import Root

    idx = Root().index(snapshot=True, threads=2)
    component = resolve_component(idx, None)
    pipe = build_pipeline(idx, retriever=component)
    models = load_scope_models(a.model)
    floor = RELEVANCE_THRESHOLDS.get(component)

    spent: list[float] = []

    def decide(text: str) -> tuple[bool, bool, str]:
        hits = list(pipe.search(text, k=5))
        lang = answer_language(text)
        t0 = time.perf_counter()
        v = scope_verdict(text, hits, lang, models)
        spent.append(time.perf_counter() - t0)
        old = outside_corpus(text, hits, lang, floor)
        return v is not None, old is not None, v.text if v else ""

    msgs = [r for r in read_messages(a.messages) if r["split"] == a.part]
    by_kind: dict[str, list[bool]] = defaultdict(list)
    by_lang: dict[str, list[bool]] = defaultdict(list)
    old_out, missed, wrong, sample = [], [], [], {}
    for r in msgs:
        new, old, text = decide(r["text"])
        by_kind[f"{r['label']}:{r['kind']}"].append(new)
        by_lang[f"{r['label']}:{r['lang']}"].append(new)
        if r["label"] == "out":
            old_out.append(old)
            if not new:
                missed.append(r["text"])
            sample.setdefault(r["kind"], {"message": r["text"], "reply": text})
        elif new:
            wrong.append(r["text"])
    out_new = [d for k, v in by_kind.items() if k.startswith("out:") for d in v]
    in_new = [d for k, v in by_kind.items() if k.startswith("in:") for d in v]
    stard = stard_questions(a.stard, a.split, a.part)
    stard_dec = [decide(q) for q in stard]
    off = json.loads((REPO / "bench/data/off-corpus-questions.json").read_text(encoding="utf-8"))
    off_msgs = off["choose"] + off["report"]
    off_dec = [decide(q) for q in off_msgs]

    def share(xs) -> float:
        return round(sum(xs) / len(xs), 4) if xs else 0.0

    metrics = {
        "part": a.part,
        "out_of_scope_declined": share(out_new), "out_of_scope_n": len(out_new),
        "in_scope_messages_declined": share(in_new), "in_scope_messages_n": len(in_new),
        f"stard_{a.part}_declined": share([d[0] for d in stard_dec]), f"stard_{a.part}_n": len(stard),
        "off_corpus_declined": share([d[0] for d in off_dec]), "off_corpus_n": len(off_msgs),
        "by_kind": {k: [sum(v), len(v)] for k, v in sorted(by_kind.items())},
        "by_lang": {k: [sum(v), len(v)] for k, v in sorted(by_lang.items())},
        "before (guard.outside_corpus)": {
            "out_of_scope_declined": share(old_out),
            f"stard_{a.part}_declined": share([d[1] for d in stard_dec]),
            "off_corpus_declined": share([d[1] for d in off_dec])},
        "targets": {"out_of_scope_declined": ">= 0.9", f"stard_{a.part}_declined": "<= 0.03"},
        "ms_per_decision": round(1000 * sorted(spent)[len(spent) // 2], 2),
        "ms_per_decision_note": "median, the scope model alone (features and both logistic models), hits given",
    }
    page = {"section": "answers", "order": 40, "rows": [
        {"configuration": "**default: the scope decision** before the model (answer/scope.py: logistic regression over "
                          "n-grams, legal words, the foreign-jurisdiction pattern and the retrieval scores)",
         "default": True, "best": True,
         "result": f"{a.part} part (messages written for legalrag): {{metrics[out_of_scope_declined]:.3f}} of "
                   f"{{metrics[out_of_scope_n]}} out-of-scope messages declined (target 0.9), "
                   f"{{metrics[in_scope_messages_declined]:.3f}} of {{metrics[in_scope_messages_n]}} in-scope ones; "
                   f"STARD {a.part} questions declined {{metrics[stard_{a.part}_declined]:.4f}} (target 0.03); "
                   "off-corpus messages declined {metrics[off_corpus_declined]:.2f}",
         "cost": "{metrics[ms_per_decision]} ms per message after retrieval, no LLM call", "needs": "CPU",
         "anchor": ""},
        {"configuration": "the former rule (`guard.outside_corpus`: foreign place named, or best hit under 0.4597)",
         "result": "{metrics[before (guard.outside_corpus)][out_of_scope_declined]:.3f} of out-of-scope declined; "
                   f"STARD {a.part} {{metrics[before (guard.outside_corpus)][stard_{a.part}_declined]:.3f}}; "
                   "off-corpus {metrics[before (guard.outside_corpus)][off_corpus_declined]:.3f}",
         "cost": "", "needs": "CPU", "anchor": ""}]}
    write_result(a.out, metrics, name=f"answers: the scope decision on the {a.part} part (messages written for "
                 "legalrag) and the STARD questions", machine_note="shared with other jobs",
                 data=f"{shown_path(a.messages)} ({a.part} part: {len(msgs)} messages written for legalrag, not from a data set); "
                      f"STARD {a.part} questions of the frozen split ({len(stard)}); "
                      "bench/data/off-corpus-questions.json (30 messages written for legalrag)",
                 missed_out_of_scope=missed, declined_in_scope=wrong,
                 declined_stard=[q for q, d in zip(stard, stard_dec) if d[0]],
                 answered_off_corpus=[q for q, d in zip(off_msgs, off_dec) if not d[0]], replies=sample,
                 model=models.about.get("command", ""),
                 **({"page": page} if a.part == "test" else {}))
    print(json.dumps(metrics, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
