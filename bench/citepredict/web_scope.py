"""How well the law-area scope check (``legalrag.citepredict.scope``) tells a citation model's questions from others.

A citation model trained on criminal judgments (JuDGE) has the Criminal Law as its scope. Over the full STARD
statute index, this scores: JuDGE test facts (criminal; should be in scope), STARD questions whose gold
articles include the Criminal Law (should be in scope) and STARD questions without (civil, administrative...;
should be out of scope). Prints the score distribution per group and the share classified as expected at each
threshold; the server uses ``DEFAULT_THRESHOLD``.

    python bench/citepredict/web_scope.py --index indexes/stard --data $LEGALRAG_DATA --n 200 --out bench/results/web-scope.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

CRIMINAL_LAW = "中华人民共和国刑法"
THRESHOLDS = (0.2, 0.3, 0.4, 0.5, 0.6)
EXAMPLES = ("房东不退押金", "房东不退押金怎么办？", "被告人张某盗窃他人手机一部，价值三千元。")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument("--data", type=Path, required=True, help="folder holding stard/ and judge/")
    ap.add_argument("--n", type=int, default=200, help="questions per group at most")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from legalrag.citepredict.scope import DEFAULT_THRESHOLD, check_scope
    from legalrag.evaluation.record import command, write_result
    from legalrag.wiring import Root

    index = Root().index(args.index, snapshot=True)
    retriever = index.retriever()
    groups: dict[str, list[str]] = {"judge_facts": [], "stard_criminal": [], "stard_other": []}
    with open(args.data / "judge" / "data" / "test.json", encoding="utf-8") as f:
        for line in f:
            if line.strip() and len(groups["judge_facts"]) < args.n:
                groups["judge_facts"].append(json.loads(line)["text"])
    with open(args.data / "stard" / "train.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            group = "stard_criminal" if any(g.startswith(CRIMINAL_LAW) for g in row["gold_names"]) else "stard_other"
            if len(groups[group]) < args.n:
                groups[group].append(row["query"])
    expect_in = {"judge_facts": True, "stard_criminal": True, "stard_other": False}
    scores: dict[str, list[float]] = {}
    t0 = time.perf_counter()
    checks = 0
    for group, texts in groups.items():
        scores[group] = [check_scope(text, retriever, (CRIMINAL_LAW,)).score for text in texts]
        checks += len(texts)
    seconds = time.perf_counter() - t0
    print(f"{checks} checks in {seconds:.1f} s ({1000 * seconds / checks:.1f} ms each)\n")
    print("| group | n | expected | median score | " + " | ".join(f"as expected @{t}" for t in THRESHOLDS) + " |")
    print("|---|---|---|---|" + "---|" * len(THRESHOLDS))
    table = {}
    for group, values in scores.items():
        right = {t: sum((s >= t) == expect_in[group] for s in values) / len(values) for t in THRESHOLDS}
        table[group] = {"n": len(values), "expected_in_scope": expect_in[group],
                        "median": round(statistics.median(values), 3),
                        "as_expected": {str(t): round(v, 3) for t, v in right.items()}}
        print(f"| {group} | {len(values)} | {'in' if expect_in[group] else 'out'} | {statistics.median(values):.3f} | "
              + " | ".join(f"{right[t]:.3f}" for t in THRESHOLDS) + " |")
    examples = {q: check_scope(q, retriever, (CRIMINAL_LAW,)).to_dict() for q in EXAMPLES}
    for q, c in examples.items():
        print(f"{q}: score {c['score']}, in scope {c['in_scope']}, top laws {[x['law'] for x in c['top_laws']]}")
    print(f"\nthe server's threshold: {DEFAULT_THRESHOLD}")
    if args.out:
        result = {"name": "Citation prediction: the law-area scope check (Criminal Law model, STARD statute index)",
                  "command": command().replace(str(args.data), "$LEGALRAG_DATA"),
                  "machine_note": "shared with other jobs", "index": args.index,
                  "trained_laws": [CRIMINAL_LAW], "threshold": DEFAULT_THRESHOLD, "groups": table,
                  "ms_per_check": round(1000 * seconds / checks, 2), "examples": examples,
                  "page": {"section": "cite", "order": 900, "rows": [{
                      "configuration": "scope check before prediction (law area of the top 10 statutes, threshold "
                                       f"{DEFAULT_THRESHOLD}; the server's `/cite` and the web page)",
                      "default": True,
                      "result": "flagged out of scope: civil/other STARD questions {groups[stard_other][as_expected]"
                                f"[{DEFAULT_THRESHOLD}]}}; kept in scope: JuDGE facts "
                                "{groups[judge_facts][as_expected][" + str(DEFAULT_THRESHOLD) + "]}, criminal STARD "
                                "questions {groups[stard_criminal][as_expected][" + str(DEFAULT_THRESHOLD) + "]}",
                      "cost": "{ms_per_check} ms/check", "needs": "CPU", "anchor": ""}]}}
        write_result(args.out, **result)


if __name__ == "__main__":
    main()
