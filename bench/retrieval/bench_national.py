"""The national-law default index: first-use build time, the cost of opening it for an `ask`, and its size.

    python bench/retrieval/bench_national.py --runs 5 --out bench/results/national-open.json

Each timing is one fresh Python process (as a CLI call is): import legalrag, open the default index through the
composition root and retrieve the top 10 for a question with the index's default component (the dense encoder
loads on that first query). The same is measured for the 397-article sample (BM25), the previous default. The
first-use build is timed once in a fresh index directory.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from legalrag.evaluation.record import write_result

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "喝了酒开车被抓了会怎么样"

OPEN = r"""
import json, sys, time
t0 = time.perf_counter()
from legalrag.wiring import Root
from legalrag.retrieval.pipeline import build_pipeline
t1 = time.perf_counter()
root = Root()
idx = root.index(snapshot=True) if sys.argv[1] == "national" else root.index(demo=True)
t2 = time.perf_counter()
hits = build_pipeline(idx).search(sys.argv[2], k=10)
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "open_s": t2 - t1, "first_query_s": t3 - t2, "total_s": t3 - t0,
                  "n_documents": idx.manifest["corpus"]["n_documents"], "component": idx.default,
                  "top": [h.document.title for h in hits[:3]]}, ensure_ascii=False))
"""


def run(which: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", OPEN, which, QUESTION], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def load() -> float:
    return os.getloadavg()[0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    from legalrag.national import national_law

    law = national_law()
    if law is None:
        raise SystemExit("no national-law data in this install (src/legalrag/data/cn-law)")
    data_bytes = sum((law.path / n).stat().st_size for n in law.manifest["files_sha256"])
    data_bytes += (law.path / "manifest.json").stat().st_size
    with tempfile.TemporaryDirectory(prefix="national-bench-") as tmp:
        env = dict(os.environ, LEGALRAG_HOME=str(Path(tmp) / "home"), PYTHONPATH=str(ROOT / "src"),
                   LEGALRAG_NATIONAL_INDEX=str(Path(tmp) / "cn-law"))
        env.pop("LEGALRAG_CONFIG", None)
        load_before = load()
        t = time.perf_counter()
        first = run("national", env)  # builds the index, then answers
        build_s = time.perf_counter() - t
        index_bytes = sum(p.stat().st_size for p in (Path(tmp) / "cn-law").rglob("*") if p.is_file())
        national = [run("national", env) for _ in range(args.runs)]
        sample = [run("sample", env) for _ in range(args.runs + 1)][1:]  # the first builds the sample index
        load_after = load()

    def med(rows, key):
        return round(statistics.median(r[key] for r in rows), 3)

    metrics = {
        "first_use_build_s": round(build_s, 1), "first_use_top3": first["top"],
        "national": {k: med(national, k) for k in ("import_s", "open_s", "first_query_s", "total_s")},
        "sample": {k: med(sample, k) for k in ("import_s", "open_s", "first_query_s", "total_s")},
        "national_component": national[0]["component"], "national_top3": national[0]["top"],
        "sample_top3": sample[0]["top"],
        "data_mb": round(data_bytes / 1e6, 1), "built_index_mb": round(index_bytes / 1e6, 1),
        "load_average": [round(load_before, 1), round(load_after, 1)], "runs": args.runs,
    }
    metrics["open_and_first_query_extra_s"] = round(
        (metrics["national"]["open_s"] + metrics["national"]["first_query_s"])
        - (metrics["sample"]["open_s"] + metrics["sample"]["first_query_s"]), 3)
    result = {
        "name": "The national-law default index: build on first use, opening cost, size",
        "machine_note": "shared with other jobs (load average recorded)",
        "data": f"the shipped national-law data ({law.manifest['n_articles']} articles); question {QUESTION!r}",
        "metrics": metrics,
    }
    write_result(args.out, **result)
    print(json.dumps(metrics, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
