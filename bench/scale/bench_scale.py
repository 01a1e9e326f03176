"""Scale benchmarks (issue 21): local FAISS / bm25s against the Milvus backend, and Ray encoding throughput.
Not part of `make test`.

Parts:

  prepare  a corpus of N STARD articles holding the gold articles of the first Q training queries whose gold
           articles are all in it (then filled in corpus order), its passage and query vectors (.npy)
           python bench/scale/bench_scale.py prepare --n 10000 --queries 200 --encoder use-multilingual
  compare  for each backend, in its own process (so peak memory is its own): build time, peak RSS, disk,
           single-query latency p50/p99 (query vectors precomputed: the index, not the encoder, is timed),
           Recall@10 of the engine against FAISS flat (exact) on the same queries, and gold Recall@10
           python bench/scale/bench_scale.py compare --n 10000
  plot     cost against corpus size from every size measured (log-log panels)
           python bench/scale/bench_scale.py plot --out docs/scale_cost_vs_size.png
  encode   passages per second with 1 and 2 local Ray workers (vector cache off), and the projection
           python bench/scale/bench_scale.py encode --n 2000 --encoder use-multilingual --workers 1 --workers 2

Backends: faiss-flat, faiss-hnsw (local dense), milvus-flat, milvus-hnsw (Milvus Lite; the collection also
holds the BM25 field, so its build time includes the jieba analysis), bm25s (local BM25), milvus-bm25 (the
engine's BM25 with the jieba analyzer, on the milvus-flat collection).

The 100k and 1M runs use the same commands with --n 100000 / --n 1000000 and the corpus of
tools/make_scale_corpus.py (--corpus); at 1M, --encode-first 100000 derives the other vectors (engine cost only).
qdrant-flat, qdrant-hnsw, qdrant-bm25: Qdrant Edge in-process (QdrantEdgeIndex below).
Environment: LEGALRAG_HOME (vector cache), LEGALRAG_BENCH_DIR (default indexes/bench-scale).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from legalrag.types import Hit

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("LEGALRAG_SHARED_DATA", ROOT.parent / "shared" / "data"))
WORK = Path(os.environ.get("LEGALRAG_BENCH_DIR", "indexes/bench-scale"))
BACKENDS = ("faiss-flat", "faiss-hnsw", "milvus-flat", "milvus-hnsw", "bm25s", "milvus-bm25",
            "qdrant-flat", "qdrant-hnsw", "qdrant-bm25")
K = 10


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    """CPU seconds of this process (all threads) and its finished children: unlike wall time, not inflated by
    other jobs on a shared machine."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def dir_mib(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def work_dir(n: int) -> Path:
    return WORK / f"n{n}"


# -- prepare ------------------------------------------------------------------------------------------------

def read_documents(path: Path):
    """A statute corpus (STARD's shape) or Document JSONL (``Document.to_dict`` per line)."""
    from legalrag.corpora.statutes import load_statutes
    from legalrag.errors import InputError
    from legalrag.types import Document

    try:
        return load_statutes(path)
    except InputError:
        return [Document.from_dict(json.loads(line)) for line in path.open(encoding="utf-8") if line.strip()]


def derive_vectors(encoded_docs, vectors, docs):
    """Vectors for corpus variants (tools/make_scale_corpus.py) from their two parents' real vectors: the
    normalised sum. Engine cost only: these are not what the encoder would give the spliced text."""
    import numpy as np

    row = {d.id: i for i, d in enumerate(encoded_docs)}
    out = np.empty((len(docs), vectors.shape[1]), dtype=vectors.dtype)
    for k, d in enumerate(docs):
        parents = d.metadata.get("parents")
        if not parents or any(p not in row for p in parents):
            sys.exit(f"{d.id}: no parents among the encoded documents; raise --encode-first")
        v = vectors[row[parents[0]]] + vectors[row[parents[1]]]
        out[k] = v / np.linalg.norm(v)
    return out


def derived_check(docs, vectors) -> dict:
    """Where variants were really encoded: how close the derived vector is to the real one (cosine)."""
    import numpy as np

    ids = {d.id for d in docs}
    parents_ok = [i for i, d in enumerate(docs) if d.metadata.get("parents")
                  and all(p in ids for p in d.metadata["parents"])]
    if not parents_ok:
        return {}
    derived = derive_vectors(docs, vectors, [docs[i] for i in parents_ok])
    real = vectors[parents_ok] / np.linalg.norm(vectors[parents_ok], axis=1, keepdims=True)
    cos = (derived * real).sum(axis=1)
    return {"derived_vs_real_cosine": {"variants": len(cos), "mean": round(float(cos.mean()), 4),
                                       "p5": round(float(np.percentile(cos, 5)), 4),
                                       "min": round(float(cos.min()), 4)}}


def prepare(n: int, n_queries: int, encoder: str, corpus: Path | None = None, encode_first: int | None = None,
            threads: int = 1) -> None:
    import numpy as np

    from legalrag.evaluation.datasets import load_queries
    from legalrag.retrieval.dense import passage_text
    from legalrag.wiring import make_encoder

    docs = read_documents(corpus or DATA / "stard" / "corpus.jsonl")
    by_id = {d.id: d for d in docs}
    queries = load_queries(DATA / "stard" / "train.jsonl")
    chosen, keep = [], {}
    for q in queries:  # take queries in file order while their gold articles fit in the budget
        need = [g for g in q.gold_ids if g not in keep]
        if len(chosen) >= n_queries or len(keep) + len(need) > n // 2:
            continue
        if all(g in by_id for g in q.gold_ids):
            chosen.append(q)
            keep.update({g: by_id[g] for g in need})
    for d in docs:
        if len(keep) >= n:
            break
        keep.setdefault(d.id, d)
    if len(keep) < n:
        sys.exit(f"the corpus has {len(docs)} documents; --n {n} needs a larger one: --corpus FILE "
                 "(see the Scale-out section of docs/benchmarks.md)")
    order = [d for d in docs if d.id in keep]  # corpus order
    out = work_dir(n)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for d in order:
            fh.write(json.dumps(d.to_dict(), ensure_ascii=False) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for q in chosen:
            fh.write(json.dumps({"query_id": q.id, "query": q.text, "gold_ids": list(q.gold_ids)},
                                ensure_ascii=False) + "\n")
    enc = make_encoder(encoder, threads=threads)  # one thread: on a loaded machine two threads ran 10x slower
    m = len(order) if encode_first is None else min(encode_first, len(order))
    t = time.perf_counter()
    pv = enc.encode_documents([passage_text(d, 256) for d in order[:m]])
    enc_s = time.perf_counter() - t
    qv = enc.encode_queries([q.text for q in chosen])
    info = {"n": len(order), "queries": len(chosen), "encoder": enc.model_id, "dimension": int(enc.dimension),
            "max_chars": 256, "encode_seconds_with_cache": round(enc_s, 2), "encoded": m,
            "derived": len(order) - m, **derived_check(order[:m], pv)}
    if m < len(order):
        pv = np.concatenate([pv, derive_vectors(order[:m], pv, order[m:])])
    np.save(out / "passages.npy", pv, allow_pickle=False)
    np.save(out / "queries.npy", qv, allow_pickle=False)
    (out / "prepared.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    print(json.dumps(info))


# -- one backend, in its own process --------------------------------------------------------------------------

class Precomputed:
    """The prepared vectors as an Encoder (by text), so that builds and queries time the index, not a model."""

    def __init__(self, texts, vectors, qtexts, qvectors, model_id):
        self.model_id, self.dimension = model_id, int(vectors.shape[1])
        self._p = dict(zip(texts, vectors))
        self._q = dict(zip(qtexts, qvectors))

    def encode_documents(self, texts):
        import numpy as np

        return np.stack([self._p[t] for t in texts])

    def encode_queries(self, texts):
        import numpy as np

        return np.stack([self._q[t] for t in texts])


def one(n: int, backend: str) -> None:
    import numpy as np

    from legalrag.evaluation.datasets import load_queries
    from legalrag.retrieval.dense import passage_text
    from legalrag.retrieval.index import ComponentSpec
    from legalrag.types import Document

    src = work_dir(n)
    info = json.loads((src / "prepared.json").read_text(encoding="utf-8"))
    docs = [Document.from_dict(json.loads(line)) for line in (src / "corpus.jsonl").open(encoding="utf-8")]
    queries = load_queries(src / "queries.jsonl")
    enc = None if "bm25" in backend else Precomputed(  # full-text backends do not hold the vectors
        [passage_text(d, 256) for d in docs], np.load(src / "passages.npy"), [q.text for q in queries],
        np.load(src / "queries.npy"), info["encoder"])
    base_rss = peak_rss_mib()
    if backend.startswith("qdrant"):
        return one_qdrant(src, backend, docs, queries, enc, base_rss)
    spec = {"faiss-flat": [ComponentSpec("dense", {"encoder": "pre", "max_chars": 256}, name="dense")],
            "faiss-hnsw": [ComponentSpec("dense", {"encoder": "pre", "max_chars": 256, "index_type": "hnsw"},
                                         name="dense")],
            "milvus-flat": [ComponentSpec("milvus", {"encoder": "pre", "max_chars": 256}, name="dense")],
            "milvus-hnsw": [ComponentSpec("milvus", {"encoder": "pre", "max_chars": 256, "engine_index": "HNSW"},
                                          name="dense")],
            "bm25s": ["bm25"],
            "milvus-bm25": [ComponentSpec("milvus", {}, name="milvus"), ComponentSpec("milvus-bm25", name="bm25")],
            }[backend]
    out = src / f"idx-{backend}"
    shutil.rmtree(out, ignore_errors=True)
    from legalrag.retrieval import index as index_mod

    factory = lambda s, **_: enc
    t, c = time.perf_counter(), cpu_s()
    from legalrag.wiring import register_backends

    register_backends()
    idx = index_mod.build_index(out, docs, spec, lang="zh", make_encoder=factory)
    build_s, build_cpu = time.perf_counter() - t, cpu_s() - c
    comp = "bm25" if "bm25" in backend else "dense"
    r = idx.retriever(comp)
    disk = dir_mib(out / "milvus.db") if backend.startswith("milvus") else dir_mib(out / comp)
    result = measure(src, backend, r, queries, build_s, build_cpu, base_rss, disk)
    if backend.startswith("milvus"):
        from legalrag.retrieval import milvus

        r.store.client.close()
        milvus.release(str(out / "milvus.db"))
    print(json.dumps(result))


# -- Qdrant Edge ------------------------------------------------------------------------------------------
# Qdrant Edge (``qdrant-edge-py``, Qdrant's Rust engine run inside the process) as a benchmark backend of this
# script: the measured alternative to the Milvus backend (issue 21). A thin adapter, not a
# legalrag index component: it builds a shard from documents and precomputed vectors and answers
# ``retrieve(query, k)`` like a Retriever.
#
# Layout: one shard per index directory with a named dense vector ``dense`` (cosine; exact search for
# ``qdrant-flat``, the engine's HNSW for ``qdrant-hnsw``) or a sparse vector ``bm25`` (Qdrant's BM25 model with
# its multilingual tokenizer, which segments Chinese, and the engine's IDF modifier) for ``qdrant-bm25``. The
# payload holds the document id.

BATCH = 1000
HNSW_M, HNSW_EF_CONSTRUCT, HNSW_EF = 32, 200, 128  # the FAISS HNSW settings' order of magnitude


def _qe():
    from legalrag._optional import require

    return require("qdrant_edge", "scale")


def _bm25_model(avg_len: float):
    qe = _qe()
    return qe.Bm25(qe.Bm25Config(tokenizer=qe.TokenizerType.Multilingual, language="chinese", avg_len=avg_len))


class QdrantEdgeIndex:
    def __init__(self, shard, documents, kind: str, query_vectors=None, bm25=None):
        self.shard, self.documents, self.kind = shard, documents, kind
        self.name = f"qdrant-{kind}"
        self._qv, self._bm25 = query_vectors, bm25

    @classmethod
    def build(cls, path: Path, kind: str, documents, texts, vectors=None, query_vectors=None):
        """``kind``: flat | hnsw | bm25. ``texts``: what each document is indexed as; ``query_vectors``: text ->
        vector for dense queries (so that the engine, not an encoder, is timed)."""
        qe = _qe()
        if kind == "bm25":
            probe = _bm25_model(256.0)  # unique tokens per document, to set BM25's average length
            sample = texts[:: max(1, len(texts) // 2000)]
            avg = sum(len(probe.embed_query(t).indices) for t in sample) / max(1, len(sample))
            bm25 = _bm25_model(avg)
            cfg = qe.EdgeConfig(sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
                                wal_enabled=False)
        else:
            bm25 = None
            hnsw = qe.HnswIndexConfig(m=HNSW_M, ef_construct=HNSW_EF_CONSTRUCT,
                                      full_scan_threshold=10 if kind == "hnsw" else 10**9, max_indexing_threads=1)
            cfg = qe.EdgeConfig(vectors={"dense": qe.EdgeVectorParams(size=int(vectors.shape[1]),
                                                                     distance=qe.Distance.Cosine)},
                                hnsw_config=hnsw, max_search_threads=1, wal_enabled=False)
        # no write-ahead log: a full build is durable once flush() returns, and the WAL would only slow it
        shard = qe.EdgeShard.create(str(path), cfg)
        for start in range(0, len(documents), BATCH):
            points = []
            for i in range(start, min(start + BATCH, len(documents))):
                vec = {"bm25": bm25.embed_document(texts[i])} if bm25 else {"dense": vectors[i].tolist()}
                points.append(qe.Point(i, vec, {"id": documents[i].id}))
            shard.update(qe.UpdateOperation.upsert_points(points))
        shard.flush()
        shard.optimize()  # builds the HNSW graph (and merges segments) before any query
        return cls(shard, list(documents), kind, query_vectors, bm25)

    def _request(self, query: str, k: int):
        qe = _qe()
        if self.kind == "bm25":
            return qe.QueryRequest(limit=k, query=qe.Query.Nearest(self._bm25.embed_query(query), using="bm25"))
        return qe.QueryRequest(limit=k, query=qe.Query.Nearest(self._qv(query).tolist(), using="dense"),
                               params=qe.SearchParams(exact=self.kind == "flat", hnsw_ef=HNSW_EF))

    def _hits(self, points):
        return [Hit(self.documents[int(p.id)], float(p.score), rank=r + 1, retriever=self.name)
                for r, p in enumerate(points)]

    def retrieve(self, query: str, k: int = 10, filter=None):
        return self._hits(self.shard.query(self._request(query, k)))

    def retrieve_batch(self, queries, k: int = 10, filter=None):
        batch = _qe().QueryBatchRequest([self._request(q, k) for q in queries])
        return [self._hits(points) for points in self.shard.query_batch(batch)]

    def close(self) -> None:
        self.shard.close()


def one_qdrant(src: Path, backend: str, docs, queries, enc, base_rss: float) -> None:
    import numpy as np

    out = src / f"idx-{backend}"
    shutil.rmtree(out, ignore_errors=True)
    kind = backend.split("-", 1)[1]
    # BM25 indexes what the local bm25 component indexes (title + full text); dense the encoded passage text
    texts = [f"{d.title}\n{d.text}" if d.title else d.text for d in docs] if kind == "bm25" else None
    t, c = time.perf_counter(), cpu_s()
    r = QdrantEdgeIndex.build(out, kind, docs, texts, vectors=None if enc is None else np.load(src / "passages.npy"),
                              query_vectors=None if enc is None else lambda q: enc.encode_queries([q])[0])
    build_s, build_cpu = time.perf_counter() - t, cpu_s() - c
    result = measure(src, backend, r, queries, build_s, build_cpu, base_rss, dir_mib(out))
    r.close()
    print(json.dumps(result))


def measure(src: Path, backend: str, r, queries, build_s: float, build_cpu: float, base_rss: float,
            disk: float) -> dict:
    r.retrieve(queries[0].text, k=K)  # warm up (load, first call)
    lat = []
    runs = {}
    c = cpu_s()
    for q in queries:
        t = time.perf_counter()
        hits = r.retrieve(q.text, k=K)
        lat.append(time.perf_counter() - t)
        runs[q.id] = [h.id for h in hits]
    query_cpu_ms = (cpu_s() - c) * 1000 / len(queries)
    t = time.perf_counter()
    from legalrag.retrieval.base import retrieve_many

    retrieve_many(r, [q.text for q in queries], k=K)
    batch_s = time.perf_counter() - t
    lat_ms = sorted(x * 1000 for x in lat)
    gold = {q.id: set(q.gold_ids) for q in queries}
    result = {"backend": backend, "n": n_docs(src), "queries": len(queries), "build_s": round(build_s, 2),
              "build_cpu_s": round(build_cpu, 2), "query_cpu_ms": round(query_cpu_ms, 2),
              "peak_rss_mib": round(peak_rss_mib(), 1), "rss_before_build_mib": round(base_rss, 1),
              "disk_mib": round(disk, 1),
              "p50_ms": round(lat_ms[len(lat_ms) // 2], 2), "p99_ms": round(lat_ms[min(len(lat_ms) - 1,
                                                                                      int(len(lat_ms) * 0.99))], 2),
              "batch_qps": round(len(queries) / batch_s, 1),
              "gold_recall@10": round(sum(len(set(runs[i]) & gold[i]) / len(gold[i]) for i in runs) / len(runs), 4)}
    (src / f"run-{backend}.json").write_text(json.dumps(runs), encoding="utf-8")
    return result


def n_docs(src: Path) -> int:
    return json.loads((src / "prepared.json").read_text(encoding="utf-8"))["n"]


def overlap(a: dict, b: dict) -> float:
    return sum(len(set(a[q]) & set(b[q])) / max(1, len(b[q])) for q in b) / len(b)


def compare(n: int, backends, force: bool = False) -> None:
    src = work_dir(n)
    rows = []
    for b in backends:  # resumable: a backend measured before (result-B.json) is not run again unless --force
        done = src / f"result-{b}.json"
        if done.exists() and not force:
            rows.append(json.loads(done.read_text(encoding="utf-8")))
            continue
        print(f"{b} ...", file=sys.stderr, flush=True)
        p = subprocess.run([sys.executable, __file__, "one", "--n", str(n), "--backend", b], capture_output=True,
                           text=True)
        if p.returncode != 0:
            print(p.stderr[-3000:], file=sys.stderr)
            print(f"{b} failed (rc {p.returncode}); going on", file=sys.stderr)
            continue
        rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
        done.write_text(json.dumps(rows[-1]), encoding="utf-8")
    runs = {r["backend"]: json.loads((src / f"run-{r['backend']}.json").read_text()) for r in rows}
    for r in rows:
        ref = "faiss-flat" if "bm25" not in r["backend"] else "bm25s"
        if ref in runs:
            r[f"overlap@10 vs {ref}"] = round(overlap(runs[r["backend"]], runs[ref]), 4)
    (src / "compare.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")
    keys = list(dict.fromkeys(k for r in rows for k in r))
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r.get(k, "")) for k in keys) + " |")


# -- cost against corpus size ---------------------------------------------------------------------------------

PLOT_METRICS = {"build_s": "build s (wall)", "build_cpu_s": "build CPU s", "peak_rss_mib": "peak RSS MiB",
                "disk_mib": "disk MiB", "p50_ms": "p50 latency ms", "p99_ms": "p99 latency ms"}


def plot(sizes, out: Path) -> None:
    """One log-log panel per cost, one line per backend, from every ``result-B.json`` measured at each size."""
    from legalrag.evaluation.plots import plot_scaling

    panels: dict[str, dict[str, dict[float, float]]] = {label: {} for label in PLOT_METRICS.values()}
    for n in sizes:
        for f in sorted(work_dir(n).glob("result-*.json")):
            r = json.loads(f.read_text(encoding="utf-8"))
            for key, label in PLOT_METRICS.items():
                if r.get(key) is not None:
                    panels[label].setdefault(r["backend"], {})[float(r["n"])] = r[key]
    print(plot_scaling(panels, out, title="Cost against corpus size (log-log)"))


LABELS = {"faiss-flat": "FAISS flat (exact)", "faiss-hnsw": "FAISS HNSW (M=32, efSearch 128)",
          "milvus-flat": "Milvus Lite FLAT", "milvus-hnsw": "Milvus Lite HNSW (M=32)",
          "qdrant-flat": "Qdrant Edge exact", "qdrant-hnsw": "Qdrant Edge HNSW (m=32, ef 128)",
          "bm25s": "bm25s (legalrag tokenizer)", "milvus-bm25": "Milvus Lite BM25 (jieba analyzer)",
          "qdrant-bm25": "Qdrant Edge BM25 (multilingual tokenizer)"}


def table(n: int) -> None:
    """The measured backends at ``n`` as the Markdown table of docs/benchmarks.md."""
    src = work_dir(n)
    rows = {b: json.loads((src / f"result-{b}.json").read_text()) for b in BACKENDS
            if (src / f"result-{b}.json").exists()}
    runs = {b: json.loads((src / f"run-{b}.json").read_text()) for b in rows}
    print("| backend | build s (CPU s) | peak RSS MiB | disk MiB | p50 ms | p99 ms | CPU ms/query | batch q/s "
          "| Recall@10 vs exact / overlap@10 vs bm25s | gold Recall@10 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for b, r in rows.items():
        ref = "bm25s" if "bm25" in b else "faiss-flat"
        ov = f"{overlap(runs[b], runs[ref]):.3f}" if ref in runs else "-"
        print(f"| {LABELS[b]} | {r['build_s']:,} ({r['build_cpu_s']:,}) | {r['peak_rss_mib']:,.0f} | "
              f"{r['disk_mib']:,} | {r['p50_ms']} | {r['p99_ms']} | {r['query_cpu_ms']} | {r['batch_qps']:,} | "
              f"{ov} | {r['gold_recall@10']:.4f} |")


# -- Ray encoding throughput --------------------------------------------------------------------------------

def encode(n: int, encoder: str, workers_list) -> None:
    import functools

    from legalrag.corpora.statutes import load_statutes
    from legalrag.distributed import encode_parallel
    from legalrag.distributed.cluster import shutdown
    from legalrag.retrieval.dense import passage_text
    from legalrag.wiring import make_encoder

    docs = load_statutes(DATA / "stard" / "corpus.jsonl")[:n]
    texts = [passage_text(d, 256) for d in docs]
    factory = functools.partial(make_encoder, encoder, cache=False, progress=False, threads=1)
    t = time.perf_counter()
    single = factory().encode_documents(texts)
    rows = [{"workers": "in-process", "seconds": round(time.perf_counter() - t, 2)}]
    for w in workers_list:
        t = time.perf_counter()
        from legalrag.distributed.cluster import ensure_ray

        ensure_ray(workers=w)
        start_s = time.perf_counter() - t
        factory().encode_documents(texts[:8])  # not timed: model files warm in the page cache
        vecs, report = encode_parallel(texts, factory, batch_size=128)
        import numpy as np

        rows.append({"workers": w, "ray_start_s": round(start_s, 2), "seconds": round(report.seconds, 2),
                     "max_abs_diff_vs_in_process": float(np.abs(vecs - single).max()), "retries": report.retries})
        shutdown()
    for r in rows:
        r["passages_per_s"] = round(n / r["seconds"], 1)
    print(json.dumps({"n": n, "encoder": encoder, "rows": rows}, indent=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="part", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--n", type=int, default=10_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--encoder", default="use-multilingual")
    p.add_argument("--corpus", type=Path, help="a corpus larger than STARD (statute or Document JSONL)")
    p.add_argument("--threads", type=int, default=1, help="encoder threads")
    p.add_argument("--encode-first", type=int, help="encode only the first N documents; derive the vectors of "
                   "the rest (variants from tools/make_scale_corpus.py) from their parents': engine cost only")
    o = sub.add_parser("one")
    o.add_argument("--n", type=int, default=10_000)
    o.add_argument("--backend", choices=BACKENDS, required=True)
    c = sub.add_parser("compare")
    c.add_argument("--n", type=int, default=10_000)
    c.add_argument("--backend", action="append", choices=BACKENDS)
    c.add_argument("--force", action="store_true", help="measure again backends already measured")
    e = sub.add_parser("encode")
    e.add_argument("--n", type=int, default=2000)
    e.add_argument("--encoder", default="use-multilingual")
    e.add_argument("--workers", type=int, action="append")
    t = sub.add_parser("table")
    t.add_argument("--n", type=int, default=10_000)
    pl = sub.add_parser("plot")
    pl.add_argument("--n", type=int, action="append", help="sizes measured (default 10000, 100000, 1000000)")
    pl.add_argument("--out", type=Path, default=Path("docs/scale_cost_vs_size.png"))
    a = ap.parse_args()
    if a.part == "prepare":
        prepare(a.n, a.queries, a.encoder, a.corpus, a.encode_first, a.threads)
    elif a.part == "one":
        one(a.n, a.backend)
    elif a.part == "table":
        table(a.n)
    elif a.part == "plot":
        plot(a.n or [10_000, 100_000, 1_000_000], a.out)
    elif a.part == "compare":
        compare(a.n, a.backend or BACKENDS, a.force)
    else:
        encode(a.n, a.encoder, a.workers or [1, 2])


if __name__ == "__main__":
    main()
