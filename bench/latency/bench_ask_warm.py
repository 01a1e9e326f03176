"""`legalrag ask` through a warm `legalrag serve`: one fresh CLI process per question, timed from the moment it
is spawned to the first printed article, to the first answer token and to its exit, with the overhead above
the runtime's own prefill time for that prompt (the floor: llama.cpp's ``prompt_ms`` for the tokens it read).

Start the server first (it holds the index, the encoder, the resolver and the model; the call cache off, so
every answer is generated):

    python -m legalrag serve --no-cache --background      # the national default index
    python bench/latency/bench_ask_warm.py run --n 20 --out runs/ask-warm.jsonl   # --index DIR for another index
    python bench/latency/bench_ask_warm.py summary runs/ask-warm.jsonl --out runs/ask-warm-summary.json
    python bench/latency/bench_ask_warm.py imports --reps 5 --out runs/ask-imports.json   # the client path's imports

Each question's process is ``python -m legalrag ask QUESTION [--index INDEX]`` reading the serve address from the
settings (``LEGALRAG_SERVE_PORT``); its standard output is read unbuffered and each line timed as it arrives:
the first article is the first ``  [1] `` line, the first token the first byte after the blank line that ends
the article list. The last line says which path answered (a row answered in-process is recorded as such and
left out of the figures). The 1-minute load average is recorded beside each row. The questions are the ``--n``
smallest query ids of the dev part of the frozen STARD split (bench/data/stard-split.json).
Rows are appended as they finish (a rerun skips finished ones).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAST = re.compile(r"first token after ([\d.]+) s(?: \(the model read (\d+) prompt tokens in ([\d.]+) s\))?, "
                  r"generation ([\d.]+) s \((\d+) tokens.*?\).*answered by (.*)$")


def questions(n: int, data: Path) -> list[dict]:
    split = json.loads((ROOT / "bench" / "data" / "stard-split.json").read_text(encoding="utf-8"))
    dev = set(split["dev"])
    path = data / "stard" / "train.jsonl"  # STARD's questions; the frozen split divides them
    if not path.exists():
        raise SystemExit(f"no STARD questions at {path} (set LEGALRAG_DATA)")
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    rows = [r for r in rows if r["query_id"] in dev]
    return sorted(rows, key=lambda r: r["query_id"])[:n]


def one(question: str, index: str | None, env: dict) -> dict:
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    where = ["--index", index] if index else []
    proc = subprocess.Popen([sys.executable, "-u", "-m", "legalrag", "ask", question, *where],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    first_article = first_token = None
    buf = b""
    while True:
        chunk = os.read(proc.stdout.fileno(), 4096)
        now = time.perf_counter() - t0
        if not chunk:
            break
        buf += chunk
        section = buf.decode("utf-8", errors="ignore").partition("Sources:")[2]
        if first_article is None and "\n  [1] " in section:
            first_article = now
        if first_article is not None and first_token is None and section.partition("\n\n")[2].strip():
            first_token = now
    proc.wait()
    wall = time.perf_counter() - t0
    out = buf.decode("utf-8", errors="replace")
    lines = out.rstrip().splitlines()
    m = LAST.search(lines[-1]) if lines else None
    row = {"wall_s": round(wall, 3), "first_article_s": first_article and round(first_article, 3),
           "first_token_s": first_token and round(first_token, 3), "loadavg_1m": round(load, 2),
           "exit": proc.returncode}
    if m:
        row.update(ttft_server_s=float(m.group(1)), prompt_tokens_evaluated=int(m.group(2) or 0),
                   prefill_s=float(m.group(3)) if m.group(3) else None, generation_s=float(m.group(4)),
                   answer_tokens=int(m.group(5)), route=m.group(6))
    else:
        row.update(route="unparsed", tail=out[-800:], stderr=proc.stderr.read().decode()[-800:])
    if row.get("first_token_s") is not None and row.get("prefill_s") is not None:
        row["first_token_overhead_s"] = round(row["first_token_s"] - row["prefill_s"], 3)
    return row


def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    done = {json.loads(line)["query_id"] for line in out.open(encoding="utf-8")} if out.exists() else set()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for q in questions(args.n, Path(args.data)):
        if q["query_id"] in done:
            continue
        row = {"query_id": q["query_id"], **one(q["query"], args.index, env)}
        with out.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(json.dumps(row, ensure_ascii=False), flush=True)


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return round(values[lo] + (values[hi] - values[lo]) * (k - lo), 3)


def summary(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for f in args.files for line in Path(f).open(encoding="utf-8")]
    served = [r for r in rows if str(r.get("route", "")).startswith("the legalrag server")]
    metrics = {"questions": len(rows), "answered_by_server": len(served)}
    for key in ("first_article_s", "first_token_s", "wall_s", "first_token_overhead_s", "prefill_s"):
        vals = [r[key] for r in served if r.get(key) is not None]
        metrics[f"{key[:-2]}_p50_s"], metrics[f"{key[:-2]}_p95_s"] = pct(vals, 0.5), pct(vals, 0.95)
    prefill_rates = [r["prompt_tokens_evaluated"] / r["prefill_s"] for r in served if r.get("prefill_s")]
    metrics["prompt_tokens_evaluated_median"] = statistics.median(r["prompt_tokens_evaluated"] for r in served) \
        if served else None
    metrics["runtime_prefill_tok_s_median"] = round(statistics.median(prefill_rates), 1) if prefill_rates else None
    metrics["answer_tokens_mean"] = round(statistics.mean(r["answer_tokens"] for r in served), 1) if served else None
    loads = [r["loadavg_1m"] for r in rows]
    metrics["loadavg_1m_min"], metrics["loadavg_1m_median"], metrics["loadavg_1m_max"] = \
        min(loads), statistics.median(loads), max(loads)
    print(json.dumps(metrics, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(metrics, indent=1) + "\n", encoding="utf-8")


IMPORTS = {  # what a fresh `legalrag ask` imports before it sends the question, against every command module
    "client_path": "import legalrag; legalrag._cli_commands = frozenset({'ask'}); import legalrag.cli, "
                   "legalrag.cli._warm, legalrag.wiring, legalrag.warm.client, legalrag.warm.route",
    "all_commands": "import legalrag.cli",
}


def imports(args: argparse.Namespace) -> None:
    """Median seconds of ``--reps`` fresh interpreters running each import line (interpreter start included),
    with the load average beside them."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = {"reps": args.reps, "loadavg_1m_start": round(os.getloadavg()[0], 2)}
    for name, code in IMPORTS.items():
        times = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], env=env, check=True)
            times.append(time.perf_counter() - t0)
        out[f"{name}_median_s"] = round(statistics.median(times), 3)
    out["interpreter_only_median_s"] = round(statistics.median(
        [_timed([sys.executable, "-c", "pass"], env) for _ in range(args.reps)]), 3)
    out["loadavg_1m_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


def _timed(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--index", default=None, help="default: ask's own (the national default index)")
    r.add_argument("--n", type=int, default=20)
    r.add_argument("--out", required=True)
    r.add_argument("--data", default=os.environ.get("LEGALRAG_DATA", str(ROOT.parent / "shared" / "data")))
    s = sub.add_parser("summary")
    s.add_argument("files", nargs="+")
    s.add_argument("--out")
    i = sub.add_parser("imports")
    i.add_argument("--reps", type=int, default=5)
    i.add_argument("--out")
    args = ap.parse_args()
    {"run": run, "summary": summary, "imports": imports}[args.cmd](args)


if __name__ == "__main__":
    main()
