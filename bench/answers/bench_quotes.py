"""The decisive quote of a gold article: how many of the lawyer's keywords it carries, with the quote rules on and
off (a how-long/how-much question prefers the clause stating a period or an amount; an exception that opens a list
is quoted with the item the question names). No retrieval and no model: each question's gold articles of the
2023-06-05 snapshot are quoted for it, so the figure is the quote's alone.

    python bench/answers/bench_quotes.py --out bench/results/answers-quotes.json

Keyword recall of a quote: the share of the question's keywords (STARD's ``keywords``) found in the quotes of its
gold articles. Reported on the dev and test parts of the frozen split; the rules were written before either was
run and were not tuned on them. Paired randomisation tests (rules on against off) per part.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from legalrag.evaluation.record import write_result

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = {"off": dict(quantity=False, list_item=False), "quantity": dict(quantity=True, list_item=False),
            "list_item": dict(quantity=False, list_item=True), "on": dict(quantity=True, list_item=True)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stard", type=Path, default=Path(os.environ.get("LEGALRAG_DATA", "../shared/data")) / "stard")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    from legalrag.answer.basis import asks_quantity, decisive_quote
    from legalrag.evaluation.answers.data import split_keywords
    from legalrag.evaluation.compare import paired_randomization_test
    from legalrag.national import national_law

    docs = {d.id: d for d in national_law().documents()}
    split = json.loads((ROOT / "bench" / "data" / "stard-split.json").read_text(encoding="utf-8"))
    questions = {}
    with open(args.stard / "train.jsonl", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            questions[str(q["query_id"])] = q
    metrics = {}
    for part in ("dev", "test"):
        per = {name: [] for name in SETTINGS}
        changed = {name: 0 for name in SETTINGS}
        asked = 0
        for qid in split[part]:
            q = questions[str(qid)]
            keys = split_keywords(q.get("keywords"))
            gold = [docs[str(g)] for g in q.get("gold_ids", []) if str(g) in docs]
            if not keys or not gold:
                continue
            asked += asks_quantity(q["query"])
            base = None
            for name, rules in SETTINGS.items():
                text = " ".join(decisive_quote(q["query"], d, **rules).text for d in gold)
                per[name].append(sum(k in text for k in keys) / len(keys))
                base = text if name == "off" else base
                changed[name] += text != base
        mean = lambda xs: round(sum(xs) / len(xs), 4)  # noqa: E731
        metrics[part] = {"questions": len(per["off"]), "asks_quantity": asked,
                         **{f"keyword_recall_{n}": mean(v) for n, v in per.items()},
                         **{f"quotes_changed_{n}": changed[n] for n in SETTINGS if n != "off"},
                         "paired_on_vs_off_p": round(paired_randomization_test(per["off"], per["on"]), 4)}
    write_result(args.out, metrics, name="answers: keyword recall of the decisive quote of the gold articles, quote "
                 "rules on and off", command=f"python bench/answers/bench_quotes.py --out {args.out}",
                 data="STARD dev and test parts of the frozen split (bench/data/stard-split.json); gold articles of "
                      "the 2023-06-05 snapshot; the lawyers' keywords", source="docs/lab/answers.md#quotes")
    print(json.dumps(metrics, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
