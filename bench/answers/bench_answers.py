"""Figures of the answer benchmark from saved runs of ``legalrag eval answers``: each run's summary, and paired
randomization tests between runs on the same questions (before/after a change, retriever/reference).

    python bench/answers/bench_answers.py --run before=runs/answers/before-0.5b-retriever.jsonl \
        --run after=runs/answers/after-0.5b-retriever.jsonl --pair before:after \
        --name "..." --command "..." --out bench/results/answers-0.5b.json

A run file's first line is its settings; every other line one scored answer (see legalrag.evaluation.answers.run).
"""

from __future__ import annotations

import argparse
import json


def paired(a: dict[str, dict], b: dict[str, dict]) -> dict:
    """Paired randomization tests of run ``b`` against run ``a`` on the questions both answered."""
    from legalrag.evaluation.answers.run import PAIRED_METRICS, row_value
    from legalrag.evaluation.record import paired_tests

    return paired_tests(a, b, PAIRED_METRICS, value=row_value)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", action="append", default=[], help="NAME=PATH of a run JSONL")
    ap.add_argument("--pair", action="append", default=[], help="BEFORE:AFTER run names to test paired")
    ap.add_argument("--name", default="the answer benchmark: runs compared")
    ap.add_argument("--command", default=None, help="the command to record (default: this one)")
    ap.add_argument("--data", default="STARD frozen split, test part: the first N questions of "
                    "runs/stard-split/test.jsonl; index of the 55,515-article corpus with the shipped stard-e5")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    from legalrag.evaluation.answers.run import read_run, summarise_answers
    from legalrag.evaluation.record import write_result

    runs = {}
    for spec in a.run:
        name, _, path = spec.partition("=")
        runs[name] = read_run(path)
    metrics = {name: {"config": cfg, **summarise_answers(list(rows.values()))} for name, (cfg, rows) in runs.items()}
    for spec in a.pair:
        before, _, after = spec.partition(":")
        metrics[f"paired {before} -> {after}"] = paired(runs[before][1], runs[after][1])
    write_result(a.out, metrics, name=a.name, command=a.command, data=a.data, machine_note="shared with other jobs")
    print(json.dumps(metrics, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
