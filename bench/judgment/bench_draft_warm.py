"""A judgment draft through a warm `legalrag serve`: the wall time of ``POST /draft`` for held-out JuDGE facts, split
into the structure model's prediction (which gives the articles: the draft runs no separate law search), the
model's reasoning and the rest. Start the server first (the call cache off, so every draft is generated):

    python -m legalrag serve -o llm_cache=false --background
    python bench/judgment/bench_draft_warm.py --n 5 --out bench/results/judge-draft-warm.json

The facts are the first ``--n`` of JuDGE's 301 evaluation cases by text_id (cases 201 on; the structure model was
trained on the first 200). The first request after the server started is reported on its own (``first_s``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("LEGALRAG_DATA", ROOT.parent / "shared" / "data"))
PAGE = {"section": "judgment", "rows": [{
    "configuration": "first draft through the warm server (structure model + the 1.5B's reasoning), JuDGE facts",
    "result": "median {metrics[median_s]} s a draft (first {metrics[first_s]} s; target 30 s); the structure model "
              "{metrics[median_predict_s]} s of it, no separate law search",
    "cost": "2 cores, load {metrics[load_average_1min]}", "needs": "CPU", "anchor": ""}]}


def held_out(n: int) -> list[dict]:
    path = DATA / "judge" / "data" / "test.json"
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    rows.sort(key=lambda r: r["text_id"])
    return rows[200:200 + n]


def main(argv=None) -> int:
    import httpx

    from legalrag.evaluation.record import write_result

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    rows = []
    for case in held_out(args.n):
        t0 = time.perf_counter()
        r = httpx.post(f"{args.url}/draft", json={"facts": case["text"][:4000]}, timeout=600)
        wall = time.perf_counter() - t0
        r.raise_for_status()
        out = r.json()
        t = out.get("timings") or {}
        rows.append({"text_id": case["text_id"], "wall_s": round(wall, 2), "predict_s": t.get("predict"),
                     "timings": t, "drafter": out.get("drafter"), "load_average_1min": round(os.getloadavg()[0], 2)})
        print(json.dumps(rows[-1], ensure_ascii=False), file=sys.stderr)
    walls = [r["wall_s"] for r in rows]
    metrics = {"n": len(rows), "first_s": walls[0], "median_s": round(statistics.median(walls), 1),
               "max_s": max(walls), "median_predict_s": round(statistics.median(r["predict_s"] or 0 for r in rows), 2),
               "load_average_1min": round(statistics.median(r["load_average_1min"] for r in rows), 2),
               "drafter": rows[0]["drafter"], "rows": rows}
    write_result(args.out, name="a judgment draft through the warm server", metrics=metrics,
                 command=f"python bench/judgment/bench_draft_warm.py --n {args.n} --out {args.out}",
                 data="JuDGE data/test.json, the first evaluation cases after the 200 the structure model was trained on",
                 page=PAGE)
    print(json.dumps({k: v for k, v in metrics.items() if k != "rows"}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
