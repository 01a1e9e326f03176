"""Statute retrieval agents and LLM rerankers on STARD (issue 5).

Fixed subset: the 50 STARD training queries with the smallest query_ids (``--offset M --limit N`` runs
queries M+1 .. M+N of them, in query_id order). For each configuration: Recall@10 / MRR@10 / nDCG@10, and per
query the mean first-stage retrieval calls, LLM calls, tokens and wall seconds; for the agent loops also the pool size and
the pool-stage Recall@K at the mean pool size.

Configurations: ``baseline`` (the index's first-stage retriever), ``pointwise`` / ``yesno`` / ``listwise``
(baseline top ``--depth`` reranked by the LLM), ``rewrite1`` (one round of single-element rewriting, no
planner), ``planner`` (the full loop), ``planner-fused`` (the loop with one call per round: the planner writes the
chosen agent's queries itself), ``planner+listwise``.

    python bench/agents/bench_agents.py --index indexes/stard-agents --limit 50 --model qwen2.5-1.5b \
        --configs baseline,pointwise,yesno,listwise,rewrite1,planner,planner+listwise --out results.json

``--endpoint URL --endpoint-model NAME`` runs the same configurations against an OpenAI-compatible server.
LLM calls are cached on disk (``--cache``), so a rerun, or ``planner+listwise`` after ``planner``, only pays
for calls it has not made before; ``--no-cache`` makes every call (for timings). ``bench/agents/agents_runs.py`` turns the
``--out`` file into run files for ``legalrag eval compare``. Threads are capped at 2.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "2")

REPO = Path(__file__).resolve().parents[2]
K = 10
CONFIGS = ("baseline", "pointwise", "yesno", "listwise", "rewrite1", "planner", "planner-fused", "planner+listwise")


def make_llm(model: str, cache: Path | None, threads: int):
    """The embedded model behind the SQLite call cache in ``cache`` (none when ``cache`` is None)."""
    from legalrag.wiring import make_llm as wired

    if cache is None:
        return wired(model, cache=False, threads=threads)
    cache.mkdir(parents=True, exist_ok=True)
    return wired(model, cache=cache / "calls.sqlite", threads=threads)


def load_subset(path: Path, n: int) -> list[dict]:
    rows = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    rows.sort(key=lambda r: int(r["query_id"]))
    return rows[:n]


def open_or_build_index(path: Path, corpus: Path, retriever: str):
    from legalrag.retrieval.index import read_corpus
    from legalrag.wiring import Root

    if not (path / "manifest.json").exists():
        print(f"building the {retriever} index at {path} ...", flush=True)
        Root().build_index(path, read_corpus(corpus), retrievers=[retriever], lang="zh", progress=True, source=str(corpus))
    return Root().index(path)


def make_runner(name, retriever, llm, args, light=None):
    """A function query -> (ranked ids, pool ids or None, cost dict) for configuration ``name``."""
    from legalrag.agents.planner import PlannerConfig, PlannerLoop
    from legalrag.wiring import make_reranker

    rerankers = {  # over the Chinese STARD index: the rerankers prompt in Chinese
        "pointwise": lambda: make_reranker("llm-pointwise", None, llm=llm, max_chars=args.max_chars),
        "yesno": lambda: make_reranker("llm-yesno", None, llm=llm, max_chars=args.max_chars),
        "listwise": lambda: make_reranker("llm-listwise", None, llm=llm, window=args.window, step=args.step,
                                          max_chars=args.max_chars // 2),
    }

    def run(text):
        if name == "baseline" or name in rerankers:
            hits = retriever.retrieve(text, k=max(args.depth, K, args.first_stage_k))
            if light is not None:
                hits = light.rerank(text, hits[: args.first_stage_k]) + hits[args.first_stage_k:]
            calls = tokens = 0
            if name in rerankers:
                rr = rerankers[name]()
                hits = rr.rerank(text, hits[: args.depth]) + hits[args.depth:]
                calls, tokens = rr.stats.usage.calls, rr.stats.usage.total_tokens
            return [h.id for h in hits], None, {"retrieval_calls": 1, "llm_calls": calls, "tokens": tokens}, None
        cfg = PlannerConfig(lang="zh", first_stage_k=args.first_stage_k, pool_k=args.pool_k, seed=args.seed,
                            max_rounds=args.max_rounds, max_pool_titles=args.pool_titles,
                            script=("single_element",) if name == "rewrite1" else None,
                            fused=name == "planner-fused")
        final = rerankers["listwise"]() if name == "planner+listwise" else None
        res = PlannerLoop(llm, retriever, light_reranker=light, final_reranker=final, config=cfg).run(text)
        cost = {"retrieval_calls": res.retrieval_calls, "llm_calls": res.llm_calls, "tokens": res.tokens,
                "prompt_tokens": res.usage.prompt_tokens, "completion_tokens": res.usage.completion_tokens,
                "pool_size": len(res.pool), "rounds": res.rounds, "refused_exits": res.refused_exits,
                "failures": res.failures, "repairs": res.repairs}
        return [h.id for h in res.hits], [h.id for h in res.pool], cost, res.summary()

    return run


def summarise(name, rows):
    from legalrag.evaluation.metrics import recall_at_k

    n = len(rows)
    keys = ("retrieval_calls", "llm_calls", "tokens", "prompt_tokens", "completion_tokens", "seconds", "pool_size",
            "rounds", "refused_exits", "failures", "repairs")
    summary = {"config": name, "n": n, **{m: sum(r[m] for r in rows) / n for m in ("recall", "mrr", "ndcg")},
               **{f"mean_{k}": sum(r.get(k, 0) or 0 for r in rows) / n for k in keys}}
    if rows and rows[0]["pool_ids"] is not None:
        kpool = max(1, round(summary["mean_pool_size"]))
        summary["pool_k"] = kpool
        summary["pool_recall_at_k"] = sum(recall_at_k(r["pool_ids"], r["gold"], kpool) for r in rows) / n
        summary["pool_recall_full"] = sum(recall_at_k(r["pool_ids"], r["gold"], max(1, len(r["pool_ids"])))
                                          for r in rows) / n
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--index", type=Path, default=Path("indexes/stard-agents"))
    ap.add_argument("--retriever", default="bm25", help="first-stage index component (bm25, hybrid, ...)")
    ap.add_argument("--light", default=None, choices=["learned"],
                    help="light reranker between the first stage and the pool / baseline cut (the index's trained "
                         "ranker: `legalrag train ranker`, on queries outside the subset)")
    ap.add_argument("--subset", type=int, default=50, help="the fixed subset: this many smallest query_ids")
    ap.add_argument("--limit", type=int, default=None, help="run only the first N queries of the subset")
    ap.add_argument("--offset", type=int, default=0, help="skip the first N queries of the subset (with --limit: "
                                                          "queries offset+1 .. offset+limit)")
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--threads", type=int, default=1, help="llama.cpp threads (1 is fastest on a shared, loaded machine)")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--depth", type=int, default=20, help="candidates the LLM rerankers see")
    ap.add_argument("--window", type=int, default=10)
    ap.add_argument("--step", type=int, default=5)
    ap.add_argument("--max-chars", type=int, default=160)
    ap.add_argument("--first-stage-k", type=int, default=30)
    ap.add_argument("--pool-k", type=int, default=10)
    ap.add_argument("--max-rounds", type=int, default=4)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--cache", type=Path, default=Path("runs/agents-llm-calls"))
    ap.add_argument("--no-cache", action="store_true", help="make every LLM call (no call cache): for timings")
    ap.add_argument("--endpoint", default=None, help="OpenAI-compatible endpoint URL instead of the embedded model")
    ap.add_argument("--endpoint-model", default=None, help="model name at --endpoint")
    ap.add_argument("--pool-titles", type=int, default=15, help="pool titles shown to the planner")
    ap.add_argument("--budget-s", type=float, default=None, help="stop starting new queries after this many seconds")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    queries = load_subset(args.data / "stard" / "train.jsonl", args.subset)[args.offset:]
    queries = queries[: args.limit] if args.limit is not None else queries
    index = open_or_build_index(args.index, args.data / "stard" / "corpus.jsonl", args.retriever)
    retriever = index.retriever(args.retriever)
    retriever.retrieve("预热", k=1)
    needs_llm = args.configs != "baseline"
    llm = None
    if needs_llm and args.endpoint:
        from legalrag.wiring import make_llm as endpoint_llm

        llm = endpoint_llm(None, args.endpoint, args.endpoint_model)  # behind the SQLite call cache
    elif needs_llm:
        llm = make_llm(args.model, None if args.no_cache else args.cache / args.model, args.threads)
    if llm is not None and not args.endpoint:  # load the model before the timed queries
        from legalrag.llm.base import ChatRequest

        llm.chat(ChatRequest(messages=({"role": "user", "content": "你好"},), max_tokens=1, temperature=0.0))
    print(f"{len(queries)} queries (query_ids {queries[0]['query_id']}..{queries[-1]['query_id']}), "
          f"first stage {args.retriever}, model {llm.model_id if llm else 'none'}", flush=True)
    from legalrag.evaluation.metrics import mrr_at_k, ndcg_at_k, recall_at_k

    names = args.configs.split(",")
    for name in names:
        if name not in CONFIGS:
            raise SystemExit(f"unknown config {name!r}; choose from {CONFIGS}")
    light = None
    if args.light:
        from legalrag.wiring import make_reranker

        light = make_reranker(args.light, index)
    runners = {name: make_runner(name, retriever, llm, args, light) for name in names}
    rows = {name: [] for name in names}
    traces = {name: [] for name in names}
    t_start = time.perf_counter()
    # Query-major order: every configuration sees the same queries, so a time budget cuts all of them equally.
    for qi, q in enumerate(queries):
        if args.budget_s and time.perf_counter() - t_start > args.budget_s:
            print(f"time budget reached after {qi} queries", flush=True)
            break
        gold = {str(g) for g in q["gold_ids"]}
        for name in names:
            t0 = time.perf_counter()
            ranked, pool, cost, trace = runners[name](q["query"])
            if pool is not None:
                cost["pool_recall"] = len(gold & set(pool)) / len(gold)
            row = {"query_id": q["query_id"], "recall": recall_at_k(ranked, gold, K), "mrr": mrr_at_k(ranked, gold, K),
                   "ndcg": ndcg_at_k(ranked, gold, K), "seconds": time.perf_counter() - t0, "pool_ids": pool,
                   "gold": sorted(gold), "top10": ranked[:K], **cost}
            rows[name].append(row)
            if trace is not None:
                traces[name].append({"query_id": q["query_id"], **trace})
            pool_note = f" poolR={cost['pool_recall']:.2f}" if "pool_recall" in cost else ""
            print(f"q{q['query_id']} {name}: R@10={row['recall']:.2f} MRR={row['mrr']:.2f} "
                  f"llm={cost['llm_calls']} tok={cost['tokens']}{pool_note} {row['seconds']:.1f}s", flush=True)
        results = {"args": {k: str(v) for k, v in vars(args).items()},
                   "summaries": [summarise(n, rows[n]) for n in names], "rows": rows, "traces": traces}
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    results = {"summaries": [summarise(n, rows[n]) for n in names if rows[n]]}
    print(f"\n{'config':18} {'n':>3} {'R@10':>6} {'MRR@10':>7} {'nDCG@10':>8} {'ret/q':>6} {'llm/q':>6} "
          f"{'tok/q':>7} {'s/q':>6} {'pool':>5} {'poolR@K':>8}")
    for s in results["summaries"]:
        pool = f"{s['mean_pool_size']:5.1f}" if "pool_k" in s else "    -"
        prec = f"{s['pool_recall_at_k']:8.3f}" if "pool_k" in s else "       -"
        print(f"{s['config']:18} {s['n']:>3} {s['recall']:6.3f} {s['mrr']:7.3f} {s['ndcg']:8.3f} "
              f"{s['mean_retrieval_calls']:6.2f} {s['mean_llm_calls']:6.1f} {s['mean_tokens']:7.0f} "
              f"{s['mean_seconds']:6.1f} {pool} {prec}")


if __name__ == "__main__":
    main()
