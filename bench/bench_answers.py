"""Figures of the answer benchmark from saved runs of ``legalrag eval answers``: each run's summary, and paired
randomization tests between runs on the same questions (before/after a change, retriever/reference).

    python bench/bench_answers.py --run before=runs/answers/before-0.5b-retriever.jsonl \
        --run after=runs/answers/after-0.5b-retriever.jsonl --pair before:after \
        --name "..." --command "..." --out bench/results/answers-0.5b.json

A run file's first line is its settings; every other line one scored answer (see legalrag.evaluation.answers.run).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

PAIRED = ("cites_gold", "gold_retrieved", "keyword_accuracy", "supported_share", "yes_no_agrees")


def read_run(path: str) -> tuple[dict, dict[str, dict]]:
    lines = [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]
    return lines[0]["config"], {str(r["id"]): r for r in lines[1:]}


def value(row: dict, metric: str) -> float | None:
    if metric == "yes_no_agrees":
        y = row.get("yes_no") or {}
        return None if y.get("agrees") is None else float(y["agrees"])
    v = row.get(metric)
    return None if v is None else float(v)


def paired(a: dict[str, dict], b: dict[str, dict]) -> dict:
    from legalrag.evaluation.compare import paired_randomization_test

    ids = sorted(set(a) & set(b))
    out = {"n": len(ids)}
    for m in PAIRED:
        pairs = [(value(a[i], m), value(b[i], m)) for i in ids]
        pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
        if not pairs:
            out[m] = None
            continue
        xs, ys = zip(*pairs)
        out[m] = {"n": len(pairs), "before": round(sum(xs) / len(xs), 4), "after": round(sum(ys) / len(ys), 4),
                  "p": round(paired_randomization_test(ys, xs), 4)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", action="append", default=[], help="NAME=PATH of a run JSONL")
    ap.add_argument("--pair", action="append", default=[], help="BEFORE:AFTER run names to test paired")
    ap.add_argument("--name", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--data", default="STARD frozen split, test part: the first N questions of "
                    "runs/stard-split/test.jsonl; index of the 55,515-article corpus with the shipped stard-e5")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    from legalrag.evaluation.answers.run import summarise

    runs = {}
    for spec in a.run:
        name, _, path = spec.partition("=")
        runs[name] = read_run(path)
    metrics = {name: {"config": cfg, **summarise(list(rows.values()))} for name, (cfg, rows) in runs.items()}
    for spec in a.pair:
        before, _, after = spec.partition(":")
        metrics[f"paired {before} -> {after}"] = paired(runs[before][1], runs[after][1])
    result = {"name": a.name, "command": a.command,
              "machine": "2-core x86-64 CPU, 24 GiB, no GPU, shared with other jobs",
              "date": datetime.date.today().isoformat(), "data": a.data, "metrics": metrics}
    Path(a.out).write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(metrics, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
