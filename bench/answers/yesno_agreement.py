"""How far the yes/no rule (legalrag.evaluation.answers.yesno) agrees with hand labels: bench/data/answers-yesno-labels.jsonl
holds, per STARD test question id, whose answer was labelled ("lawyer": the data's answer; a run name: that run's
answer) and the label (yes / no / unclear), written by reading each answer for this benchmark.

    python bench/answers/yesno_agreement.py --queries runs/stard-split/test.jsonl --out bench/results/answers-yesno-rule.json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from legalrag.evaluation.record import write_result

REPO = Path(__file__).resolve().parents[2]
def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", required=True)
    ap.add_argument("--run", action="append", default=[], help="NAME=PATH of a run whose answers were labelled")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    from legalrag.evaluation.answers.yesno import conclusion_polarity

    questions = {}
    for line in Path(a.queries).read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            questions[str(r["query_id"])] = r
    answers = {name: {str(r["id"]): r for r in map(json.loads, Path(path).read_text(encoding="utf-8").splitlines()[1:])}
               for name, _, path in (s.partition("=") for s in a.run)}
    labels = [json.loads(x) for x in (REPO / "bench/data/answers-yesno-labels.jsonl").read_text().splitlines() if x]
    pairs = []
    for lab in labels:
        q = questions[str(lab["query_id"])]
        text = str(q["answer"]) if lab["answer"] == "lawyer" else answers[lab["answer"]][str(lab["query_id"])]["response"]
        rule = conclusion_polarity(text, q["query"]) or "unclear"
        pairs.append((lab["label"], rule))
    agree = sum(x == y for x, y in pairs) / len(pairs)
    decided = [(x, y) for x, y in pairs if y != "unclear"]
    metrics = {"n": len(pairs), "agreement": round(agree, 4),
               "rule_decided": len(decided),
               "precision_when_decided": round(sum(x == y for x, y in decided) / len(decided), 4) if decided else None,
               "labelled_unclear": sum(x == "unclear" for x, _ in pairs),
               "confusion (label, rule)": {f"{x}->{y}": n for (x, y), n in sorted(Counter(pairs).items())},
               "by_answer": dict(Counter(lab["answer"] for lab in labels))}
    result = {"name": "answers: the yes/no rule against hand labels",
              "machine_note": "shared with other jobs",
              "data": "50 answers to yes/no questions of the STARD test part, labelled by hand for this benchmark "
                      "(bench/data/answers-yesno-labels.jsonl; labels written by the benchmark's author)",
              "metrics": metrics}
    write_result(a.out, **result)
    print(json.dumps(metrics, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
