"""`legalrag ask` as a user runs it: one `legalrag ask "QUESTION" --index INDEX` process per question, timed from
the moment the command starts to the first byte of the answer on its standard output (time to first token, as
felt in the terminal: interpreter start, imports, index open, retrieval, prompt, prefill) and to its exit (wall).

    legalrag llm start                          # the model server up: `ask` answers through it
    python bench/latency/bench_ask_cli.py --index indexes/stard-ft --label server --out runs/ask-cli-server.jsonl
    legalrag llm stop
    python bench/latency/bench_ask_cli.py --index indexes/stard-ft --label local --out runs/ask-cli-local.jsonl --local
    python bench/latency/bench_ask_cli.py summary runs/ask-cli-server.jsonl runs/ask-cli-local.jsonl --json OUT.json

The questions are the ``--n`` smallest query ids of STARD's training split. Answer tokens and the route the
answer took (server or in-process) are read from the command's last line; decode tokens/s is answer tokens over
the time from the first answer byte to the end of generation. Results are appended per question (a rerun skips
finished ones). The call cache is off (``--no-cache``), so every answer is generated.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import selectors
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAST = re.compile(r"retrieval ([\d.]+) s, first token after ([\d.]+) s, generation ([\d.]+) s \((\d+) tokens.*?\),"
                  r"\s*citation check ([\d.]+) s(?:; model: (.*))?")


def questions(data_dir: Path, n: int) -> list[dict]:
    qs = [json.loads(x) for x in (data_dir / "train.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    return sorted(qs, key=lambda q: int(q["query_id"]))[:n]


def one(cmd: list[str], env: dict) -> dict:
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    out, first = b"", None
    while True:
        if not sel.select(timeout=1.0):
            if p.poll() is not None:
                break
            continue
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            break
        if first is None and chunk.strip():
            first = time.monotonic() - t0
        out += chunk
    err = p.stderr.read().decode("utf-8", "replace")
    rc = p.wait()
    wall = time.monotonic() - t0
    text = out.decode("utf-8", "replace")
    if rc != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed ({rc}):\n{err[-2000:]}")
    m = LAST.search(text.replace("\n", " "))
    if not m:
        raise SystemExit(f"no timing line in the output:\n{text[-1500:]}")
    retrieval, ttft_in, gen, tokens, check, route = m.groups()
    gen_s, check_s = float(gen), float(check)
    decode_s = max(1e-6, wall - (first or wall) - check_s - 0.05)  # first byte to the end of generation
    return {"ttft_s": first or wall, "wall_s": wall, "answer_tokens": int(tokens), "generation_s": gen_s,
            "citation_check_s": check_s, "retrieval_s": float(retrieval), "decode_tok_s": int(tokens) / decode_s,
            "route": (route or "").strip(), "answer_chars": len(text.split("\n\n")[0])}


def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {json.loads(x)["query_id"] for x in out.read_text(encoding="utf-8").splitlines() if x.strip()} \
        if out.exists() else set()
    exe = str(Path(sys.executable).with_name("legalrag"))
    env = dict(os.environ)
    for q in questions(Path(args.data_dir), args.n):
        if q["query_id"] in done:
            continue
        cmd = [exe, "ask", q["query"], "--index", args.index, "--no-cache"] + (["--local"] if args.local else [])
        load0 = os.getloadavg()[0]
        row = {"query_id": q["query_id"], "label": args.label, **one(cmd, env), "loadavg_1m_start": load0}
        with out.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{args.label} q{q['query_id']}: first token {row['ttft_s']:.2f} s, wall {row['wall_s']:.1f} s, "
              f"{row['answer_tokens']} tokens, {row['decode_tok_s']:.1f} tok/s, {row['route']}", flush=True)


def _pct(xs: list[float], p: float) -> float:
    from legalrag.evaluation.record import percentile

    return percentile(xs, p)


def summary(args: argparse.Namespace) -> None:
    table = {}
    for f in args.files:
        rows = [json.loads(x) for x in Path(f).read_text(encoding="utf-8").splitlines() if x.strip()]
        label = rows[0]["label"]
        table[label] = {"questions": len(rows), "routes": sorted({r["route"] for r in rows}),
                        "ttft_p50_s": round(statistics.median(r["ttft_s"] for r in rows), 2),
                        "ttft_p95_s": round(_pct([r["ttft_s"] for r in rows], 95), 2),
                        "wall_p50_s": round(statistics.median(r["wall_s"] for r in rows), 2),
                        "wall_p95_s": round(_pct([r["wall_s"] for r in rows], 95), 2),
                        "answer_tokens_mean": round(statistics.mean(r["answer_tokens"] for r in rows), 1),
                        "decode_tok_s_median": round(statistics.median(r["decode_tok_s"] for r in rows), 2),
                        "citation_check_s_median": round(statistics.median(r["citation_check_s"] for r in rows), 3),
                        "loadavg_1m_mean": round(statistics.mean(r["loadavg_1m_start"] for r in rows), 2)}
    for label, s in table.items():
        print(label, json.dumps(s, ensure_ascii=False))
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["summary"]:
        ap = argparse.ArgumentParser()
        ap.add_argument("files", nargs="+")
        ap.add_argument("--json")
        return summary(ap.parse_args(argv[1:]))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument("--label", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--local", action="store_true", help="load the model in each process (no server)")
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data" / "stard"))
    run(ap.parse_args(argv))


if __name__ == "__main__":
    main()
