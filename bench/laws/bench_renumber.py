"""Precision of the old -> new article map (text alignment) on a hand-checked sample of the Company Law,
2018-10-26 -> 2023-12-29 (bench/laws/company_law_sample.json: 30 old articles read beside the new law).

    LEGALRAG_DATA=../shared/data python bench/laws/bench_renumber.py --out bench/results/laws-renumber.json

A predicted pair is *right* when it names the article holding the old one's first paragraph or main rule
(``primary``), *partly right* when it names another article that took part of a split article's text
(``also``); an old article the map leaves without counterpart is right when the new law deleted it.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from legalrag.evaluation.record import write_result

HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--laws", type=Path, default=Path(os.environ.get("LEGALRAG_DATA", "../shared/data")) / "laws-2025")
    ap.add_argument("--sample", type=Path, default=HERE / "company_law_sample.json")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    from legalrag.laws.reader import read_folder
    from legalrag.laws.renumber import renumbering
    from legalrag.laws.versions import build_library

    sample = json.loads(args.sample.read_text(encoding="utf-8"))
    lib = build_library(read_folder(args.laws, only=["民法商法/公司法(2018-10-26).md", "民法商法/公司法(2023-12-29).md"]))
    old, new = lib.law("公司法").versions
    mapping = renumbering(old, new)
    rows, right, partly, predicted, none_right, none_total, has_counterpart, found = [], 0, 0, 0, 0, 0, 0, 0
    for number, label in sample["labels"].items():
        m = mapping[number]
        verdict = ""
        if label["primary"] is not None:
            has_counterpart += 1
        if m.new is None:
            none_total += 1
            verdict = "right (deleted)" if label["primary"] is None else "missed"
            none_right += label["primary"] is None
        else:
            predicted += 1
            if m.new == label["primary"]:
                right += 1
                verdict = "right"
            elif m.new in label.get("also", []):
                partly += 1
                verdict = "part of a split"
            else:
                verdict = "wrong"
            found += label["primary"] is not None and (m.new == label["primary"] or m.new in label.get("also", []))
        rows.append({"old": number, "predicted": m.new, "similarity": m.similarity, "moved": m.moved,
                     "primary": label["primary"], "also": label.get("also", []), "verdict": verdict})
    counts = {"old": len(mapping), "mapped": sum(x.new is not None for x in mapping.values()),
              "renumbered": sum(x.renumbered for x in mapping.values()),
              "unchanged_text": sum(x.unchanged for x in mapping.values()),
              "moved": sum(x.moved for x in mapping.values())}
    metrics = {"sample": len(rows), "predicted_pairs": predicted, "precision_strict": round(right / predicted, 3),
               "precision_lenient": round((right + partly) / predicted, 3), "right": right, "part_of_split": partly,
               "no_counterpart_predicted": none_total, "no_counterpart_right": none_right,
               "recall": round(found / has_counterpart, 3), "with_counterpart": has_counterpart,
               "article_26": mapping["26"].new, "whole_law": counts}
    write_result(args.out, metrics, name="laws: old -> new article map by text alignment, Company Law 2018 -> 2023, "
                 "hand-checked sample of 30", data="LawRefBook/Laws 2025-04-19 (公司法 2018-10-26 and 2023-12-29); "
                 "labels written by us (bench/laws/company_law_sample.json)", rows=rows,
                 source="docs/lab/laws.md#renumbering",
                 page={"section": "laws", "order": 110, "rows": [{
                     "configuration": "renumbering map (monotone alignment + moved articles), 公司法 2018 -> 2023",
                     "default": True,
                     "result": "precision {metrics[precision_strict]} strict, {metrics[precision_lenient]} counting "
                               "split articles; recall {metrics[recall]} (30 hand-checked; 第二十六条 -> "
                               "{metrics[article_26]})", "cost": "0.5 s a law", "needs": "CPU", "anchor": ""}]})
    print(json.dumps({k: v for k, v in metrics.items()}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
