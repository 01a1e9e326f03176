"""Benchmarks of the LLM layer (issue 4). Run each part under the shared lock, e.g.

    python bench/llm/bench_llm.py throughput --model qwen2.5-0.5b
    python bench/llm/bench_llm.py assembly | cache | structured | stard | ask

Parts:
  throughput  prefill and decode tokens/s through EmbeddedLLM.chat vs the same xllamacpp Server called
              directly (alternating calls on one loaded model; every prompt starts with a fresh nonce so
              llama.cpp's prompt cache cannot help either side); overhead = layer wall / direct wall - 1.
  assembly    first-use assembly of the GGUF from its parts into an empty cache dir, then the cached path.
  cache       latency of a CachedLLM hit (SQLite) after one miss.
  structured  ask_structured on bench/data/schema_prompts.jsonl: success on the first try and after retries,
              with the JSON schema passed to the runtime and without it (prompt-only).
  stard       `legalrag ask` on the 20 smallest-query_id STARD training questions over the STARD corpus
              (BM25): citations found, resolved, retrieved, gold.
  ask         one `legalrag ask` on the demo sample with the retrieval / generation split.
Results are printed as tables and written as JSON to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Literal


def SUPPORT():  # noqa: N802 - the support model `ask` marks with, built once by the composition root
    from legalrag.wiring import Root

    return Root().make_support_scorer()

ROOT = Path(__file__).resolve().parents[2]
def _table(rows: list[dict[str, Any]], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    if not rows:
        return
    t = Table(title=title)
    for col in rows[0]:
        t.add_column(str(col))
    for r in rows:
        t.add_row(*[f"{v:.3f}" if isinstance(v, float) else str(v) for v in r.values()])
    Console().print(t)


def _prompt_text(n_articles: int) -> str:
    from legalrag.corpora.statutes import load_statutes
    from legalrag.demo import sample_path

    docs = load_statutes(sample_path())[:n_articles]
    return "\n".join(f"{d.title}：{d.text}" for d in docs)


# ------------------------------------------------------------------------------------------ throughput
def throughput(args: argparse.Namespace) -> dict[str, Any]:
    from legalrag.llm.base import ChatRequest
    from legalrag.llm.wire import parse_reply, request_body
    from legalrag.wiring import make_llm

    llm = make_llm(args.model, cache=False, n_ctx=4096, threads=args.threads).load()
    context = _prompt_text(args.articles)
    rows = []
    for rep in range(args.reps):
        for mode in ("layer", "direct") if rep % 2 == 0 else ("direct", "layer"):
            msgs = ({"role": "system", "content": f"[{uuid.uuid4().hex}] 你是法律助手。"},
                    {"role": "user", "content": context + "\n请概括以上法条的主要内容。"})
            req = ChatRequest(messages=msgs, max_tokens=args.max_tokens, temperature=0.0)
            t0 = time.perf_counter()
            if mode == "layer":
                r = llm.chat(req)
            else:
                r = parse_reply(llm._server.handle_chat_completions(request_body(req)), 0.0, llm.model_id)
            wall = time.perf_counter() - t0
            tm = r.timings
            rows.append({"model": args.model, "mode": mode, "rep": rep, "prompt_tokens": r.prompt_tokens,
                         "completion_tokens": r.completion_tokens,
                         "prefill_tok_s": tm.get("prompt_per_second", 0.0),
                         "decode_tok_s": tm.get("predicted_per_second", 0.0), "wall_s": wall,
                         "runtime_s": (tm.get("prompt_ms", 0.0) + tm.get("predicted_ms", 0.0)) / 1000})
    _table(rows, f"throughput {args.model}, {args.threads} thread(s)")
    summary = {}
    for mode in ("layer", "direct"):
        sel = [r for r in rows if r["mode"] == mode]
        summary[mode] = {k: statistics.median(r[k] for r in sel) for k in ("prefill_tok_s", "decode_tok_s", "wall_s",
                                                                          "runtime_s")}
    # per-call overhead outside the runtime: (wall - runtime) of the layer vs direct, relative to wall
    extra = [r["wall_s"] - r["runtime_s"] for r in rows if r["mode"] == "layer"]
    extra_d = [r["wall_s"] - r["runtime_s"] for r in rows if r["mode"] == "direct"]
    summary["overhead_wall_pct"] = 100 * (summary["layer"]["wall_s"] / summary["direct"]["wall_s"] - 1)
    summary["layer_outside_runtime_ms"] = 1000 * statistics.median(extra)
    summary["direct_outside_runtime_ms"] = 1000 * statistics.median(extra_d)
    summary["overhead_outside_runtime_pct"] = 100 * (statistics.median(extra) - statistics.median(extra_d)) / \
        summary["direct"]["wall_s"]
    summary["load_s"] = llm.load_seconds
    print(json.dumps(summary, indent=2))
    llm.close()
    return {"rows": rows, "summary": summary}


# -------------------------------------------------------------------------------------------- assembly
def assembly(args: argparse.Namespace) -> dict[str, Any]:
    from legalrag.llm.models import _sidecar, ensure_model

    out = []
    for name in args.models:
        with tempfile.TemporaryDirectory(dir=args.tmp) as d:
            t0 = time.perf_counter()
            p = ensure_model(name, d, progress=False)
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            ensure_model(name, d, progress=False)
            cached = time.perf_counter() - t0
            _sidecar(p).unlink()
            t0 = time.perf_counter()
            ensure_model(name, d, progress=False)
            rehash = time.perf_counter() - t0
            out.append({"model": name, "bytes": p.stat().st_size, "first_use_s": first, "cached_s": cached,
                        "rehash_s": rehash})
    _table(out, "model assembly")
    return {"rows": out}


# ----------------------------------------------------------------------------------------------- cache
def cache(args: argparse.Namespace) -> dict[str, Any]:
    from legalrag.llm.base import ChatRequest
    from legalrag.wiring import make_llm

    with tempfile.TemporaryDirectory(dir=args.tmp) as d:
        llm = make_llm(args.model, cache=Path(d) / "calls.sqlite", n_ctx=2048, threads=args.threads)
        inner = llm.inner.load()
        req = ChatRequest(messages=({"role": "user", "content": "什么是违约金？请简要回答。"},), max_tokens=32,
                          logprobs=True, top_logprobs=5)
        miss = llm.chat(req)
        hits = []
        for _ in range(args.n):
            t0 = time.perf_counter()
            r = llm.chat(req)
            hits.append(time.perf_counter() - t0)
            assert r.cached and r.text == miss.text
        row = {"model": args.model, "miss_s": miss.seconds, "hit_median_ms": 1000 * statistics.median(hits),
               "hit_p95_ms": 1000 * sorted(hits)[int(0.95 * len(hits)) - 1], "n_hits": len(hits)}
        llm.close()
    inner.close()
    _table([row], "call cache")
    return {"rows": [row]}


# ------------------------------------------------------------------------------------------ structured
def _model_from_fields(name: str, fields: dict[str, str]):
    from pydantic import Field, conlist, create_model

    def one(spec: str):
        kind, _, rest = spec.partition(":")
        if kind == "str":
            return (str, Field(min_length=1, max_length=int(rest))) if rest else (str, Field(min_length=1))
        if kind in ("int", "float"):
            typ = int if kind == "int" else float
            if not rest:
                return (typ, ...)
            lo, hi = rest.split(":")
            return (typ, Field(ge=typ(lo), le=typ(hi)))
        if kind == "bool":
            return (bool, ...)
        if kind == "enum":
            return (Literal[tuple(rest.split("|"))], ...)
        if kind.startswith("list["):
            inner_spec = spec[5:spec.index("]")]
            n = spec[spec.index("]") + 2:] if spec.endswith(tuple("0123456789")) and "]:" in spec else ""
            inner_t = one(inner_spec)[0]
            if n:
                return (conlist(inner_t, min_length=int(n), max_length=int(n)), ...)
            return (conlist(inner_t, min_length=1), ...)
        raise ValueError(spec)

    return create_model(name, **{k: one(v) for k, v in fields.items()})


def structured(args: argparse.Namespace) -> dict[str, Any]:
    from legalrag.errors import StructuredOutputError
    from legalrag.llm.structured import structured_call
    from legalrag.wiring import make_llm

    items = [json.loads(x) for x in Path(args.data).read_text(encoding="utf-8").splitlines() if x.strip()]
    items = items[:args.limit] if args.limit else items
    llm = make_llm(args.model, cache=False, n_ctx=4096, threads=args.threads).load()
    rows, per_item = [], []
    for use_schema in (True, False):
        subset = items if use_schema else items[:args.prompt_only]
        first = ok = calls = 0
        t0 = time.perf_counter()
        for it in subset:
            cls = _model_from_fields(f"M_{it['id']}", it["fields"])
            msgs = [{"role": "system", "content": "Reply with one JSON object only, with the fields: "
                     + ", ".join(f"{k} ({v})" for k, v in it["fields"].items())},
                    {"role": "user", "content": it["prompt"]}]
            try:
                rep = structured_call(llm, msgs, cls, retries=args.retries, use_schema=use_schema,
                                      max_tokens=args.max_tokens)
                ok += 1
                first += rep.attempts == 1
                calls += rep.attempts
                per_item.append({"id": it["id"], "schema": use_schema, "attempts": rep.attempts, "ok": True})
            except StructuredOutputError as exc:
                calls += len(exc.raw)
                per_item.append({"id": it["id"], "schema": use_schema, "attempts": len(exc.raw), "ok": False,
                                 "last": exc.raw[-1][:200]})
        n = len(subset)
        rows.append({"model": args.model, "json_schema": use_schema, "prompts": n, "first_try": first,
                     "first_try_rate": first / n, "after_retries": ok, "after_retries_rate": ok / n,
                     "calls": calls, "seconds": time.perf_counter() - t0})
    llm.close()
    _table(rows, f"structured output (retries={args.retries})")
    return {"rows": rows, "items": per_item}


# ----------------------------------------------------------------------------------------------- stard
def stard(args: argparse.Namespace) -> dict[str, Any]:
    from legalrag.answer.question import answer_question
    from legalrag.corpora.statutes import load_statutes
    from legalrag.retrieval.index import build_index, open_index
    from legalrag.wiring import make_llm

    data = Path(args.data_dir)
    queries = [json.loads(x) for x in (data / "train.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    queries.sort(key=lambda q: int(q["query_id"]) if str(q["query_id"]).isdigit() else str(q["query_id"]))
    queries = queries[:args.n]
    index_dir = Path(args.index)
    try:
        index = open_index(index_dir)
    except Exception:
        index = build_index(index_dir, load_statutes(data / "corpus.jsonl"), retrievers=["bm25"], lang="zh",
                            progress=True)
    llm = make_llm(args.model, n_ctx=4096, threads=args.threads)
    rows = []
    for q in queries:
        gold = {str(g) for g in q["gold_ids"]}
        a = answer_question(q["query"], index, llm, k=args.k, max_tokens=args.max_tokens, support=SUPPORT(),
                            max_article_chars=args.article_chars)
        cits = a.citations
        rows.append({"query_id": q["query_id"], "citations": len(cits), "resolved": sum(c.resolved for c in cits),
                     "in_retrieved": sum(c.in_retrieved for c in cits),
                     "gold": sum(c.resolved and c.document_id in gold for c in cits),
                     "gold_cited": len(gold & {c.document_id for c in cits if c.resolved}), "n_gold": len(gold),
                     "gold_retrieved": len(gold & {h.id for h in a.hits}),
                     "retrieval_s": a.timings["retrieval_s"], "generation_s": a.timings["generation_s"],
                     "cached": bool(a.timings.get("cached"))})
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    tot = {k: sum(r[k] for r in rows) for k in ("citations", "resolved", "in_retrieved", "gold", "gold_cited",
                                                 "n_gold", "gold_retrieved")}
    tot["questions"] = len(rows)
    tot["answers_with_citations"] = sum(r["citations"] > 0 for r in rows)
    tot["generation_s_median"] = statistics.median(r["generation_s"] for r in rows)
    _table(rows, f"STARD train, {len(rows)} smallest query ids, {args.model}, BM25 k={args.k}")
    print(json.dumps(tot, indent=2))
    return {"rows": rows, "total": tot}


def ask_one(args: argparse.Namespace) -> dict[str, Any]:
    from legalrag.answer.question import answer_question
    from legalrag.demo import SAMPLE_QUESTION, demo_index
    from legalrag.serialize import answer_to_dict
    from legalrag.wiring import make_llm

    llm = make_llm(args.model, cache=False, threads=args.threads)
    t0 = time.perf_counter()
    llm.load()
    load = time.perf_counter() - t0
    a = answer_question(SAMPLE_QUESTION, demo_index(), llm, k=args.k, support=SUPPORT())
    d = answer_to_dict(a, model=llm.model_id)
    d["load_s"] = load
    print(json.dumps(d, ensure_ascii=False, indent=2))
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("part", choices=["throughput", "assembly", "cache", "structured", "stard", "ask"])
    ap.add_argument("--model", default="qwen2.5-0.5b")
    ap.add_argument("--models", nargs="+", default=["qwen2.5-0.5b", "qwen2.5-1.5b"])
    ap.add_argument("--threads", type=int, default=int(os.environ.get("LEGALRAG_THREADS", "2")))
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--articles", type=int, default=6, help="throughput: sample articles in the prompt")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--limit", type=int, default=0, help="structured: only the first N prompts")
    ap.add_argument("--retries", type=int, default=2)
    ap.add_argument("--prompt-only", type=int, default=52, help="structured: prompts also run without the schema")
    ap.add_argument("--data", default=str(ROOT / "bench" / "data" / "schema_prompts.jsonl"))
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data" / "stard"))
    ap.add_argument("--index", default="indexes/stard",
                    help="stard: an index of the STARD corpus (built there when missing)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--article-chars", type=int, default=300)
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    fn = {"throughput": throughput, "assembly": assembly, "cache": cache, "structured": structured,
          "stard": stard, "ask": ask_one}[args.part]
    t0 = time.perf_counter()
    result = fn(args)
    result = {"part": args.part, "args": vars(args), "seconds": time.perf_counter() - t0, **result}
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=2, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
