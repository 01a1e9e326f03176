"""Counts of the law over time read from a dated-Markdown checkout: files, problems, effective-date sources,
versions, supersession, repeals; with the 2023-06-05 shipped corpus as the older text of the Criminal Law.

    LEGALRAG_DATA=../shared/data python bench/laws/bench_versions.py --out bench/results/laws-versions.json
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from legalrag.evaluation.record import write_result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--laws", type=Path, default=Path(os.environ.get("LEGALRAG_DATA", "../shared/data")) / "laws-2025")
    ap.add_argument("--today", default="2025-04-19", help="the snapshot date: which versions are in force")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    from legalrag.laws.reader import read_folder
    from legalrag.laws.versions import add_snapshot, build_library
    from legalrag.national import CRIMINAL_LAW, national_law

    t0 = time.perf_counter()
    folder = read_folder(args.laws)
    read_s = time.perf_counter() - t0
    lib = build_library(folder)
    base = national_law()
    lib = add_snapshot(lib, (r for _, r in base.records()), "2023-06-05", titles=[CRIMINAL_LAW])
    c = lib.counts()
    in_force = lib.in_force(args.today)
    metrics = {**c, "files_read": len(folder.files), "read_seconds": round(read_s, 2),
               "in_force_laws": len(in_force), "in_force_articles": sum(len(v.articles) for v in in_force),
               "laws_single_version": sum(len(x.versions) == 1 for x in lib.laws.values()),
               "snapshot_versions_added": [f"{v.title} ({v.label})" for v in lib.versions()
                                           if v.files and v.files[0].startswith("snapshot:")],
               "skipped_cases": sum(p.startswith("案例/") for p, _ in folder.skipped)}
    write_result(args.out, metrics, name="laws: versions, intervals, supersession and repeals of the 2025-04-19 checkout",
                 data="LawRefBook/Laws at 2f4c5c2 (2025-04-19), $LEGALRAG_DATA/laws-2025; the 2023-06-05 shipped corpus "
                      "for the Criminal Law before 刑法修正案（十二）",
                 source="docs/lab/laws.md#versions",
                 page={"section": "laws", "order": 100, "rows": [{
                     "configuration": "reader of the dated-Markdown law format (legalrag.laws)", "default": False,
                     "result": "{metrics[laws]} laws, {metrics[versions]} versions ({metrics[laws_with_several_versions]} "
                               "laws with several), {metrics[superseded_versions]} superseded, {metrics[repealed_laws]} "
                               "repealed; in force {metrics[in_force_articles]} articles",
                     "cost": "{metrics[read_seconds]} s to read", "needs": "CPU", "anchor": ""}]})
    print({k: v for k, v in metrics.items() if k != "snapshot_versions_added"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
