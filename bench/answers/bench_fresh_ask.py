"""A fresh install asks three questions: criminal, labour, procedural. Which laws does it cite, and how is each
citation marked?

    python bench/answers/bench_fresh_ask.py --out bench/results/national-fresh-ask.json [--model qwen2.5-coder-1.5b]

Each question is one `legalrag ask --json --local` process in a fresh LEGALRAG_HOME with no saved settings and
no --index, so the first builds the default index from the shipped national-law data, as a new user's first
`ask` does. The embedded model answers in the process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from legalrag.evaluation.record import write_result

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = [
    ("criminal", "喝了酒开车被交警查到了，会被判刑吗？", "中华人民共和国刑法"),
    ("labour", "公司一直不跟我签书面劳动合同，我可以要求公司支付双倍工资吗？", "劳动合同法"),
    ("procedural", "我想去法院起诉欠钱不还的朋友，起诉需要符合哪些条件？", "民事诉讼法"),
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--model", default=None, help="default: the embedded 1.5B")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="fresh-ask-") as tmp:
        env = dict(os.environ, LEGALRAG_HOME=str(Path(tmp) / "home"), PYTHONPATH=str(ROOT / "src"),
                   LEGALRAG_CONFIG=str(Path(tmp) / "none.toml"))
        for name in ("LEGALRAG_INDEX", "LEGALRAG_NATIONAL_INDEX", "LEGALRAG_ENDPOINT", "LEGALRAG_MODEL"):
            env.pop(name, None)
        for area, question, law in QUESTIONS:
            cmd = [sys.executable, "-m", "legalrag", "ask", question, "--json", "--local"]
            if args.model:
                cmd += ["--model", args.model]
            t = time.perf_counter()
            out = subprocess.run(cmd, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t
            if out.returncode != 0:
                raise SystemExit(f"{area}: exit {out.returncode}\n{out.stderr[-2000:]}")
            payload = json.loads(out.stdout)
            cites = [{"citation": c.get("canonical") or c.get("text"), "mark": c.get("mark"),
                      "mark_reason": c.get("mark_reason")} for c in payload.get("citations", [])]
            rows.append({"area": area, "question": question, "law_wanted": law, "wall_s": round(wall, 1),
                         "answer": payload.get("answer") or payload.get("text"),
                         "retrieved": [h.get("title") for h in payload.get("retrieved", [])],
                         "citations": cites,
                         "cites_law": any(law in (c["citation"] or "") for c in cites),
                         "cites_law_supported": any(law in (c["citation"] or "") and c["mark"] == "supported"
                                                    for c in cites)})
            print(json.dumps(rows[-1], ensure_ascii=False, indent=1), flush=True)
    result = {"name": "A fresh install asks a criminal, a labour and a procedural question (default index, no set-up)",
              "machine_note": "shared with other jobs",
              "data": "three questions written for this check",
              "metrics": {"questions": rows, "load_average": round(os.getloadavg()[0], 1),
                          "laws_cited_supported": sum(r["cites_law_supported"] for r in rows),
                          "laws_cited": sum(r["cites_law"] for r in rows)}}
    write_result(args.out, **result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
