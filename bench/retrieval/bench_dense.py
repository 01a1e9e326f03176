"""Dense, hybrid and learned-ranker benchmarks on STARD (issue 3). Not part of `make test`.

Parts (run one at a time, under the shared lock; vectors are cached in $LEGALRAG_HOME/vectors):

  encode  cold-encode a corpus with one encoder (fills the vector cache; reports texts/s and wall time)
          python bench/retrieval/bench_dense.py encode --encoder use-multilingual --max-chars 256
          python bench/retrieval/bench_dense.py encode --encoder e5-small --max-chars 128 --subset civil
  stard   the 1,234 training queries over the 55,515-article corpus: BM25, dense, hybrid fusion, the learned
          ranker (5-fold CV by query), recall@K for K=1..100 (PNG), hybrid latency, memory, index size
          python bench/retrieval/bench_dense.py stard --encoder use-multilingual:256 --encoder e5-small:128
  civil   the same comparison on a fixed sub-corpus every encoder fits in here: the 1,260 articles of the
          Civil Code and the 546 training queries whose gold articles are all in it (adds e5-small)
          python bench/retrieval/bench_dense.py civil --encoder use-multilingual:256 --encoder e5-small:128

Environment: LEGALRAG_HOME (shared vector cache), OMP/OPENBLAS threads 1.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("LEGALRAG_SHARED_DATA", ROOT.parent / "shared" / "data"))
WORK = Path(os.environ.get("LEGALRAG_BENCH_DIR", "indexes/bench-dense"))
KS = tuple(range(1, 101))


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_stard(subset: str | None = None):
    from legalrag.corpora.statutes import load_statutes
    from legalrag.evaluation.datasets import load_queries

    docs = load_statutes(DATA / "stard" / "corpus.jsonl")
    queries = load_queries(DATA / "stard" / "train.jsonl", docs)
    if subset == "civil":
        docs = [d for d in docs if d.metadata.get("law") == "中华人民共和国民法典"]
        keep = {d.id for d in docs}
        queries = [q for q in queries if all(g in keep for g in q.gold_ids)]
    return docs, queries


def evaluate(hits_by_query: dict, queries, ks=KS) -> dict:
    from legalrag.evaluation.metrics import evaluate_rankings

    return evaluate_rankings({q: [h.id for h in hs] for q, hs in hits_by_query.items()},
                             {q.id: set(q.gold_ids) for q in queries}, ks=ks)


def row(name: str, m: dict, k: int = 10) -> dict:
    return {"system": name, **{f"{x}@{k}": round(m[f"{x}@{k}"], 4) for x in ("recall", "mrr", "ndcg", "hit")},
            "recall@100": round(m.get("recall@100", float("nan")), 4), "n_queries": m["n_queries"]}


def table(rows: list[dict]) -> str:
    keys = list(rows[0])
    out = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    out += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(out)


def du(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def part_encode(args) -> dict:
    from legalrag.retrieval.dense import passage_text
    from legalrag.wiring import make_encoder

    docs, _ = load_stard(args.subset)
    if args.sample:  # a fixed sample (every n-th article), encoded without the cache: a throughput measurement
        docs = docs[:: max(1, len(docs) // args.sample)][: args.sample]
    texts = [passage_text(d, args.max_chars) for d in docs]
    enc = make_encoder(args.encoder, threads=args.threads, cache=not args.sample)
    from legalrag.io import sha256_text

    cache = enc.vector_cache()
    unique = set(sha256_text(t) for t in texts)
    todo = len(unique) - (len(cache.get("passage", list(unique))) if cache is not None else 0)
    t0 = time.perf_counter()
    enc.encode_documents(texts)
    secs = time.perf_counter() - t0
    res = {"part": "encode", "encoder": args.encoder, "max_chars": args.max_chars, "subset": args.subset or "all",
           "sample": args.sample or None, "mean_chars": round(sum(map(len, texts)) / len(texts), 1),
           "n_texts": len(texts), "encoded_now": todo, "seconds": round(secs, 1),
           "texts_per_s": round(todo / secs, 1) if todo else None, "peak_rss_mib": round(rss_mib())}
    print(json.dumps(res, ensure_ascii=False))
    return res


def recall_plot(curves: dict[str, list[float]], path: Path, title: str) -> None:
    from legalrag.evaluation.plots import plot_curves

    plot_curves(curves, path, title=title, xlabel="K (log scale)")


def run_systems(idx, queries, dense_names: list[str], hybrids: dict[str, tuple], cv_candidates: str | None,
                folds: int, depth: int, rounds: int) -> tuple[list[dict], dict]:
    """Evaluate bm25, each dense component, each hybrid config and (optionally) the learned ranker."""
    from legalrag.rerank.features import FeatureExtractor
    from legalrag.rerank.learned import build_training_set, cross_validate
    from legalrag.retrieval.base import retrieve_many
    from legalrag.retrieval.hybrid import HybridRetriever

    texts = [q.text for q in queries]
    rows, curves, timings = [], {}, {}
    runs = {}
    for name in ["bm25", *dense_names]:
        r = idx.retriever(name)
        t0 = time.perf_counter()
        res = retrieve_many(r, texts, k=100)
        timings[name] = round(time.perf_counter() - t0, 1)
        runs[name] = res
        m = evaluate({q.id: h for q, h in zip(queries, res)}, queries)
        rows.append(row(r.name, m))
        curves[r.name] = [m[f"recall@{k}"] for k in KS]
    for label, (members, kw) in hybrids.items():
        h = HybridRetriever([idx.retriever(n) for n in members], depth=100, **kw)
        fused = [h.fuse_runs([runs[n][i] for n in members], 100) for i in range(len(queries))]
        m = evaluate({q.id: f for q, f in zip(queries, fused)}, queries)
        rows.append(row(label, m))
        curves[label] = [m[f"recall@{k}"] for k in KS]
    if cv_candidates:
        members, kw = hybrids[cv_candidates]
        hyb = HybridRetriever([idx.retriever(n) for n in members], depth=100, **kw)
        ex = FeatureExtractor(idx.retriever("bm25"), [idx.retriever(n) for n in dense_names], depth=100)
        t0 = time.perf_counter()
        ts = build_training_set(ex, hyb, queries, depth, progress=True)
        feat_s = time.perf_counter() - t0
        law_of = {d.id: str(d.metadata.get("law", "")) for d in idx.documents}
        t0 = time.perf_counter()
        cv = cross_validate(ex, ts, law_of, k=folds, rounds=rounds)
        cv_s = time.perf_counter() - t0
        m = evaluate(cv, queries)
        rows.append(row(f"learned ranker ({folds}-fold CV, top-{depth} of {cv_candidates})", m))
        curves[f"learned ranker (top-{depth})"] = [m[f"recall@{k}"] for k in KS]
        timings["ranker_features_s"] = round(feat_s, 1)
        timings["ranker_cv_s"] = round(cv_s, 1)
    return rows, {"curves": curves, "timings": timings}


def dense_components(encoders: list[str]) -> tuple[list, list[str], dict[str, str]]:
    """``spec:max_chars`` options -> (index components with bm25 first, dense component names, name -> spec)."""
    from legalrag.retrieval.dense import component_name
    from legalrag.retrieval.index import ComponentSpec
    from legalrag.wiring import make_encoder

    comps, names, specs = ["bm25"], [], {}
    for e in encoders:
        spec_e, max_chars = e.split(":")[0], int(e.split(":")[1])
        names.append(component_name(make_encoder(spec_e, cache=False, progress=False)))
        specs[names[-1]] = spec_e
        comps.append(ComponentSpec("dense", {"encoder": spec_e, "max_chars": max_chars}, name=names[-1]))
    return comps, names, specs


def part_stard(args) -> dict:
    from legalrag.wiring import Root

    t0 = time.perf_counter()
    docs, queries = load_stard()
    print(f"{len(docs)} documents, {len(queries)} queries ({time.perf_counter() - t0:.1f} s)", flush=True)
    comps, dnames, specs = dense_components(args.encoder)
    out = WORK / ("stard-idx" if len(dnames) == 1 and dnames[0] == "dense-use-multilingual" else
                  "stard-idx-" + "-".join(d.removeprefix("dense-") for d in dnames))
    t0 = time.perf_counter()
    Root().build_index(out, docs, [*comps, "hybrid"], lang="zh", progress=True)
    build_s = time.perf_counter() - t0
    idx = Root().index(out)
    short = {n: n.removeprefix("dense-") for n in dnames}
    hybrids = {}
    for method, label in (("rrf", "RRF k=60"), ("wsf", "min-max score fusion")):
        for n in dnames:
            hybrids[f"hybrid {label} bm25+{short[n]}"] = (["bm25", n], {"method": method})
        if len(dnames) > 1:
            hybrids[f"hybrid {label} bm25+{'+'.join(short.values())}"] = (["bm25", *dnames], {"method": method})
    cv_on = list(hybrids)[-1]  # min-max fusion of BM25 and every encoder
    rows, extra = run_systems(idx, queries, dnames, hybrids, cv_on, args.folds, args.depth, args.rounds)
    # latency: single queries, query encoders without the vector cache, BM25 + each encoder (and all), RRF
    from legalrag.retrieval.dense import DenseRetriever
    from legalrag.retrieval.hybrid import HybridRetriever
    from legalrag.wiring import make_encoder

    cold = {n: DenseRetriever.load(idx.component_dir(n), idx.documents, make_encoder(specs[n], cache=False,
                                                                                          threads=1))
            for n in dnames}
    latency = {}
    for label, members in [*((f"bm25+{short[n]}", [n]) for n in dnames),
                           *([(f"bm25+{'+'.join(short.values())}", dnames)] if len(dnames) > 1 else [])]:
        hyb = HybridRetriever([idx.retriever("bm25"), *(cold[n] for n in members)], depth=100)
        hyb.retrieve("warm-up: load the model", k=10)
        lat = []
        for q in queries[: args.latency_queries]:
            t = time.perf_counter()
            hyb.retrieve(q.text, k=10)
            lat.append((time.perf_counter() - t) * 1000)
        lat.sort()
        latency[label] = {"p50": round(statistics.median(lat), 1), "p95": round(lat[int(0.95 * (len(lat) - 1))], 1),
                          "n": len(lat)}
    res = {"part": "stard", "encoders": args.encoder, "n_docs": len(docs), "n_queries": len(queries),
           "build_index_s_warm_vectors": round(build_s, 1), "rows": rows, "hybrid_latency_ms": latency,
           "index_mib": {n: round(du(idx.component_dir(n)), 1) for n in idx.names},
           "documents_mib": round((out / "documents.jsonl").stat().st_size / 2**20, 1),
           "peak_rss_mib": round(rss_mib()), **extra["timings"]}
    recall_plot(extra["curves"], ROOT / "docs" / "recall_vs_depth_stard.png",
                f"STARD train ({len(queries)} queries, {len(docs)} articles): Recall@K")
    return res


def part_civil(args) -> dict:
    from legalrag.wiring import Root

    docs, queries = load_stard("civil")
    print(f"civil sub-corpus: {len(docs)} documents, {len(queries)} queries", flush=True)
    comps, dnames, _ = dense_components(args.encoder)
    out = WORK / "civil-idx"
    Root().build_index(out, docs, comps, lang="zh", progress=True)
    idx = Root().index(out)
    hybrids = {}
    for method, label in (("rrf", "RRF"), ("wsf", "min-max")):
        for n in dnames:
            hybrids[f"hybrid {label} bm25+{n.removeprefix('dense-')}"] = (["bm25", n], {"method": method})
        if len(dnames) > 1:
            hybrids[f"hybrid {label} bm25+" + "+".join(n.removeprefix("dense-") for n in dnames)] = (
                ["bm25", *dnames], {"method": method})
    cv = list(hybrids)[-1] if args.folds else None
    rows, extra = run_systems(idx, queries, dnames, hybrids, cv, args.folds, args.depth, args.rounds)
    recall_plot(extra["curves"], ROOT / "docs" / "recall_vs_depth_civil.png",
                f"STARD Civil Code subset ({len(queries)} queries, {len(docs)} articles): Recall@K")
    return {"part": "civil", "encoders": args.encoder, "n_docs": len(docs), "n_queries": len(queries), "rows": rows,
            "peak_rss_mib": round(rss_mib()), **extra["timings"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("part", choices=["encode", "stard", "civil"])
    ap.add_argument("--encoder", action="append", help="encode: spec; stard/civil: spec:max_chars (repeatable)")
    ap.add_argument("--max-chars", type=int, default=256)
    ap.add_argument("--subset", choices=["civil"], default=None)
    ap.add_argument("--sample", type=int, default=0, help="encode: time a fixed sample of N articles, uncached")
    ap.add_argument("--threads", type=int, default=1, help="encode: encoder threads")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--depth", type=int, default=100, help="learned-ranker candidates per query")
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("--latency-queries", type=int, default=200)
    ap.add_argument("--out", type=Path, default=None, help="also write the result JSON here")
    args = ap.parse_args()
    if args.part == "encode":
        args.encoder = args.encoder or ["use-multilingual"]
        args.encoder = args.encoder[0]
        res = part_encode(args)
    else:
        args.encoder = args.encoder or ["use-multilingual:256"]
        res = part_stard(args) if args.part == "stard" else part_civil(args)
        print(table(res["rows"]))
        print(json.dumps({k: v for k, v in res.items() if k != "rows"}, ensure_ascii=False, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(res, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
