"""`ask` latency as a user feels it: one fresh process per question, from process start to first answer token
(TTFT) and to the checked answer (total), for one or two checkouts of legalrag.

    python bench/latency/bench_ask_latency.py run --index INDEX --label after --out runs/ask-after.jsonl
    python bench/latency/bench_ask_latency.py run --index INDEX --label before --src ../other-checkout/src --out ...
    python bench/latency/bench_ask_latency.py summary runs/ask-before.jsonl runs/ask-after.jsonl
    python bench/latency/bench_ask_latency.py warm --index INDEX --label warm --out runs/ask-warm.jsonl
    python bench/latency/bench_ask_latency.py run --index INDEX --label served --out runs/ask-served.jsonl \
        --endpoint http://127.0.0.1:8765/v1 --endpoint-model qwen2.5-1.5b   # one process per question, model kept
                                                                             # loaded by `legalrag llm serve`

``warm`` is what `legalrag chat` and `legalrag serve` do: one process opens the index and loads the model once,
answers one warm-up question (not recorded), then the ``--n`` questions in turn; time to first token counts from
the question's arrival (retrieval, prompt building, prefill), and ``prompt_tokens_evaluated`` shows how much of
each prompt the runtime's prompt cache spared (the fixed instructions are the shared prefix).

Each question runs in a new interpreter whose ``PYTHONPATH`` is ``--src`` (so an older checkout can be
measured with this same script), with the call cache disabled. Time to first token counts interpreter start,
imports, index open, model load, retrieval, prompt building and prefill; ``prefill_s`` is the time from
sending the request to the first streamed piece, ``decode_s`` the rest of generation, both measured the same
way for every checkout. Results are appended per question (a rerun skips finished ones). The questions are
the ``--n`` smallest query ids of STARD's training split; gold articles come from its ``gold_ids``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, os, sys, time
t_spawn = float(sys.argv[1]); question = sys.argv[2]; index_dir = sys.argv[3]; opts = json.loads(sys.argv[4])
t_start = time.time()
from legalrag.answer.question import answer_question
from legalrag.retrieval.index import open_index
try:
    from legalrag.wiring import make_llm
except ImportError:
    from legalrag.agents.backend import make_llm
t_import = time.time()
index = open_index(index_dir)
if opts.get("endpoint"):  # a model kept loaded by another process (`legalrag llm serve`): nothing to load here
    llm = make_llm(None, opts["endpoint"], opts["endpoint_model"], cache=False)
else:
    llm = make_llm(opts.get("model"), cache=False, **({"threads": opts["threads"]} if opts.get("threads") else {}))
inner = getattr(llm, "inner", llm)
t_load0 = time.time(); getattr(inner, "load", lambda: None)(); t_load1 = time.time()
first = []
kw = dict(opts.get("ask_options") or {})
from legalrag.wiring import Root
a = answer_question(question, index, llm, k=opts["k"], max_tokens=opts["max_tokens"],
                    support=Root().make_support_scorer(),
                    on_text=lambda piece: first.append(time.time()) if not first else None, **kw)
t_end = time.time()
t = a.timings
gen = t.get("generation_s", 0.0)
gen_start = t_end - t.get("citation_check_s", 0.0) - gen
print(json.dumps({
    "python_start_s": t_start - t_spawn, "import_s": t_import - t_start, "load_s": t_load1 - t_load0,
    "ttft_s": (first[0] if first else t_end) - t_spawn, "total_s": t_end - t_spawn,
    "prefill_s": (first[0] - gen_start) if first else gen, "decode_s": (t_end - t.get("citation_check_s", 0.0) - first[0]) if first else 0.0,
    "retrieval_s": t.get("retrieval_s", 0.0), "citation_check_s": t.get("citation_check_s", 0.0),
    "prompt_tokens": a.usage.prompt_tokens, "completion_tokens": a.usage.completion_tokens,
    "prompt_tokens_evaluated": int(t.get("prompt_tokens_evaluated", a.usage.prompt_tokens)),
    "citations": [{"resolved": c.resolved, "document_id": c.document_id, "in_retrieved": c.in_retrieved}
                  for c in a.citations],
    "retrieved": [h.id for h in a.hits], "answer": a.text, "threads": getattr(inner, "n_threads", None),
}, ensure_ascii=False))
"""


def stard_questions(data_dir: Path, n: int) -> list[dict]:
    qs = [json.loads(x) for x in (data_dir / "train.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    qs.sort(key=lambda q: int(q["query_id"]))
    return qs[:n]


def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists():
        done = {json.loads(x)["query_id"] for x in out.read_text(encoding="utf-8").splitlines() if x.strip()}
    opts = {"src": str(Path(args.src).resolve()), "model": args.model, "threads": args.threads, "k": args.k,
            "endpoint": args.endpoint, "endpoint_model": args.endpoint_model,
            "max_tokens": args.max_tokens, "ask_options": json.loads(args.ask_options) if args.ask_options else {}}
    env = {**os.environ, "LEGALRAG_LLM_CACHE": os.devnull, "PYTHONPATH": opts["src"]}
    for q in stard_questions(Path(args.data_dir), args.n):
        if q["query_id"] in done:
            continue
        load0 = os.getloadavg()[0]
        t = time.time()
        p = subprocess.run([sys.executable, "-c", CHILD, repr(t), q["query"], args.index, json.dumps(opts)],
                           capture_output=True, text=True, env=env, cwd=ROOT)
        if p.returncode != 0:
            print(p.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"question {q['query_id']} failed")
        row = json.loads(p.stdout.strip().splitlines()[-1])
        gold = {str(g) for g in q["gold_ids"]}
        row.update(query_id=q["query_id"], label=args.label, loadavg_1m_start=load0,
                   loadavg_1m_end=os.getloadavg()[0], n_gold=len(gold),
                   gold_cited=len(gold & {c["document_id"] for c in row["citations"] if c["resolved"]}),
                   gold_retrieved=len(gold & set(row["retrieved"])))
        with out.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{args.label} q{q['query_id']}: ttft {row['ttft_s']:.1f} s, total {row['total_s']:.1f} s, "
              f"prompt {row['prompt_tokens']} tok, completion {row['completion_tokens']} tok, "
              f"load {load0:.1f}", flush=True)


def warm(args: argparse.Namespace) -> None:
    src = str(Path(args.src).resolve())
    if src != str((ROOT / "src").resolve()) and os.environ.get("PYTHONPATH") != src:
        # another checkout: the same run in an interpreter that imports legalrag from it
        env = {**os.environ, "PYTHONPATH": src}
        raise SystemExit(subprocess.run([sys.executable, __file__, *sys.argv[1:]], env=env).returncode)
    os.environ["LEGALRAG_LLM_CACHE"] = os.devnull
    from legalrag.answer.question import answer_question
    from legalrag.retrieval.index import open_index
    from legalrag.wiring import make_llm

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        raise SystemExit(f"{out} exists: a warm run is one process, so it is not resumed; remove it first")
    kw = json.loads(args.ask_options) if args.ask_options else {}
    t0 = time.time()
    index = open_index(args.index)
    llm = make_llm(args.model, cache=False, **({"threads": args.threads} if args.threads else {}))
    inner = getattr(llm, "inner", llm)
    inner.load()
    setup_s = time.time() - t0
    from legalrag.wiring import Root

    SUPPORT = Root().make_support_scorer()  # the support model `ask` marks with  # noqa: N806
    questions = stard_questions(Path(args.data_dir), args.n + 1)
    warmup, questions = questions[-1], questions[:-1]  # the (n+1)-th question warms the runtime, unrecorded
    rows = []
    for i, q in enumerate([warmup, *questions]):
        first: list[float] = []
        load0 = os.getloadavg()[0]
        t = time.time()
        a = answer_question(q["query"], index, llm, k=args.k, max_tokens=args.max_tokens,
                            support=SUPPORT,
                            on_text=lambda piece: first.append(time.time()) if not first else None, **kw)
        t_end = time.time()
        if i == 0:
            continue
        tm = a.timings
        check = tm.get("citation_check_s", 0.0)
        gen_start = t_end - check - tm.get("generation_s", 0.0)
        gold = {str(g) for g in q["gold_ids"]}
        cits = [{"resolved": c.resolved, "document_id": c.document_id, "in_retrieved": c.in_retrieved}
                for c in a.citations]
        row = {"query_id": q["query_id"], "label": args.label, "mode": "warm", "setup_s": setup_s,
               "ttft_s": (first[0] if first else t_end) - t, "total_s": t_end - t,
               "prefill_s": (first[0] - gen_start) if first else tm.get("generation_s", 0.0),
               "decode_s": (t_end - check - first[0]) if first else 0.0,
               "retrieval_s": tm.get("retrieval_s", 0.0), "citation_check_s": check,
               "prompt_tokens": a.usage.prompt_tokens,
               "prompt_tokens_evaluated": int(tm.get("prompt_tokens_evaluated", a.usage.prompt_tokens)),
               "completion_tokens": a.usage.completion_tokens, "citations": cits,
               "retrieved": [h.id for h in a.hits], "answer": a.text, "n_gold": len(gold),
               "gold_cited": len(gold & {c["document_id"] for c in cits if c["resolved"]}),
               "gold_retrieved": len(gold & {h.id for h in a.hits}), "loadavg_1m_start": load0,
               "loadavg_1m_end": os.getloadavg()[0], "threads": getattr(inner, "n_threads", None)}
        rows.append(row)
        print(f"{args.label} q{q['query_id']}: ttft {row['ttft_s']:.1f} s, total {row['total_s']:.1f} s, "
              f"prompt {row['prompt_tokens']} tok ({row['prompt_tokens_evaluated']} evaluated), "
              f"completion {row['completion_tokens']} tok, load {load0:.1f}", flush=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    tmp.replace(out)


def _pct(xs: list[float], p: float) -> float:
    from legalrag.evaluation.record import percentile

    return percentile(xs, p)


def summarise(rows: list[dict]) -> dict:
    cits = [c for r in rows for c in r["citations"]]
    gen = sum(r["prefill_s"] + r["decode_s"] for r in rows)
    return {
        "questions": len(rows),
        "ttft_p50_s": statistics.median(r["ttft_s"] for r in rows), "ttft_p95_s": _pct([r["ttft_s"] for r in rows], 95),
        "total_p50_s": statistics.median(r["total_s"] for r in rows),
        "total_p95_s": _pct([r["total_s"] for r in rows], 95),
        "prefill_share": sum(r["prefill_s"] for r in rows) / sum(r["total_s"] for r in rows),
        "decode_share": sum(r["decode_s"] for r in rows) / sum(r["total_s"] for r in rows),
        "generation_share": gen / sum(r["total_s"] for r in rows),
        "prompt_tokens_mean": statistics.mean(r["prompt_tokens"] for r in rows),
        "completion_tokens_mean": statistics.mean(r["completion_tokens"] for r in rows),
        "prefill_tok_s_median": statistics.median(r["prompt_tokens"] / r["prefill_s"] for r in rows if r["prefill_s"]),
        "decode_tok_s_median": statistics.median(r["completion_tokens"] / r["decode_s"] for r in rows if r["decode_s"]),
        "citations": len(cits),
        "resolved_share": sum(c["resolved"] for c in cits) / len(cits) if cits else 0.0,
        "gold_share": sum(r["gold_cited"] for r in rows) / sum(r["n_gold"] for r in rows),
        "gold_retrieved_share": sum(r["gold_retrieved"] for r in rows) / sum(r["n_gold"] for r in rows),
        "loadavg_1m_mean": statistics.mean(r["loadavg_1m_start"] for r in rows),
        "prompt_cache_share": (sum(r["prompt_tokens"] - r.get("prompt_tokens_evaluated", r["prompt_tokens"])
                                   for r in rows) / max(1, sum(r["prompt_tokens"] for r in rows))),
    }


def summary(args: argparse.Namespace) -> None:
    from rich.console import Console
    from rich.table import Table

    results = {}
    for f in args.files:
        rows = [json.loads(x) for x in Path(f).read_text(encoding="utf-8").splitlines() if x.strip()]
        results[rows[0]["label"] if rows else f] = summarise(rows)
    t = Table(title="ask latency (run: one process per question; warm: one process, model loaded once)")
    t.add_column("metric")
    for name in results:
        t.add_column(name)
    for key in next(iter(results.values())):
        t.add_row(key, *[f"{r[key]:.3f}" if isinstance(r[key], float) else str(r[key]) for r in results.values()])
    Console().print(t)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, help_ in (("run", "one fresh process per question"),
                        ("warm", "one process, model loaded once (as chat and serve)")):
        r = sub.add_parser(name, help=help_)
        r.add_argument("--index", required=True)
        r.add_argument("--label", required=True)
        r.add_argument("--src", default=str(ROOT / "src"), help="the checkout's src folder to measure")
        r.add_argument("--out", required=True)
        r.add_argument("--n", type=int, default=20)
        r.add_argument("--k", type=int, default=8)
        r.add_argument("--max-tokens", type=int, default=512)
        r.add_argument("--model", default=None)
        r.add_argument("--threads", type=int, default=None)
        r.add_argument("--endpoint", default=None, help="OpenAI-compatible URL of a model kept loaded elsewhere, "
                                                        "e.g. `legalrag llm serve` (run mode)")
        r.add_argument("--endpoint-model", default=None)
        r.add_argument("--ask-options", default=None, help="JSON of extra answer_question keywords")
        r.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data" / "stard"))
    s = sub.add_parser("summary")
    s.add_argument("files", nargs="+")
    s.add_argument("--json", default=None)
    args = ap.parse_args()
    {"run": run, "warm": warm, "summary": summary}[args.cmd](args)


if __name__ == "__main__":
    main()
