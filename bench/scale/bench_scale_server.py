"""Scale benchmarks against real servers: the Milvus standalone server (2.3.5, the `milvus` package's binary) with
Milvus Lite and exact FAISS beside it, and Ray encoding on a one- and a two-node cluster. Not part of `make test`.

    python bench/scale/bench_scale_server.py prepare --n 100000 --real 2000 --queries 200
    python bench/scale/bench_scale_server.py milvus --n 100000 [--engine server-flat --engine server-hnsw --engine lite-flat]
    python bench/scale/bench_scale_server.py ray --n 600

prepare: the first --real STARD articles are encoded for real (USE multilingual, one thread); the other rows are
  SYNTHETIC vectors (each a real vector of that share plus Gaussian noise, renormalised: cosine about 0.8 to it),
  with STARD article texts cycled as their stored content. A real encoding of 100k or 1M passages does not fit
  the time of a shared 2-core CPU (40 to 90 passages/s). Queries: real encodings of STARD training queries. So
  these figures are engine cost (build, memory, latency, agreement with exact search on these vectors), not
  retrieval quality.
milvus: per engine, in its own process: build (create, insert, flush, load, alias swap), peak RSS of the client
  process and of the server process (VmHWM of a server started fresh for the run), p50/p95 single-query
  latency (k=10, vectors precomputed), top-10 agreement with exact FAISS.
ray: passages/s of `encode_parallel` with the real encoder on a one-node and a two-node cluster (separate
  `ray start` processes on 127.0.0.1, one CPU each), the largest difference from the in-process vectors, and a
  run during which the second node is SIGKILLed (retries counted, vectors compared).
Environment: LEGALRAG_SHARED_DATA, LEGALRAG_BENCH_DIR (default indexes/scale/server).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("LEGALRAG_SHARED_DATA", ROOT.parent / "shared" / "data"))
WORK = Path(os.environ.get("LEGALRAG_BENCH_DIR", ROOT / "indexes" / "scale" / "server"))
K = 10


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def work(n: int) -> Path:
    return WORK / f"n{n}"


CHUNK = 50_000  # rows per block when writing the synthetic vectors and computing the exact top 10


def _reusable_real(real: int, n_queries: int):
    """Real encodings (passages, queries) from an earlier prepare with at least this many, so a larger n needs
    no new encoding: the first `real` rows of its passages.npy are the real share."""
    import numpy as np

    for info_path in sorted(WORK.glob("n*/prepared.json")):
        info = json.loads(info_path.read_text())
        if (info.get("encoder") == "use-multilingual" and info.get("real_encoded", 0) >= real
                and info.get("queries", 0) >= n_queries):
            rv = np.array(np.load(info_path.parent / "passages.npy", mmap_mode="r")[:real])
            qv = np.load(info_path.parent / "queries.npy")[:n_queries]
            return rv, qv, info_path.parent, info.get("encode_seconds")
    return None


def prepare(n: int, real: int, n_queries: int, noise: float) -> None:
    """Writes passages.npy (n x d float32, the synthetic rows written a block at a time into a memmap, so a
    million rows never sit in memory), queries.npy and exact_top10.npy (exact inner-product top 10 by FAISS)."""
    import numpy as np

    out = work(n)
    out.mkdir(parents=True, exist_ok=True)
    reused = _reusable_real(real, n_queries)
    if reused is not None:
        rv, qv, origin, enc_s = reused
        print(f"reusing the {real} real passage and {len(qv)} query encodings of {origin}", flush=True)
    else:
        from legalrag.corpora.statutes import load_statutes
        from legalrag.evaluation.datasets import load_queries
        from legalrag.retrieval.dense import passage_text
        from legalrag.wiring import make_encoder

        docs = load_statutes(DATA / "stard" / "corpus.jsonl")
        queries = load_queries(DATA / "stard" / "train.jsonl")[:n_queries]
        enc = make_encoder("use-multilingual", threads=1, progress=True)
        t = time.perf_counter()
        rv = enc.encode_documents([passage_text(d, 256) for d in docs[:real]])
        enc_s, origin = round(time.perf_counter() - t, 1), None
        qv = enc.encode_queries([q.text for q in queries])
    rv = rv.astype(np.float32)
    mm = np.lib.format.open_memmap(out / "passages.npy.part", mode="w+", dtype=np.float32, shape=(n, rv.shape[1]))
    mm[:min(real, n)] = rv[:n]
    # The noise is drawn block by block from one generator: the same stream as one draw of (n - real) rows, so
    # the first rows of a larger n equal a smaller n's.
    rng, cos_sum = np.random.default_rng(0), 0.0
    for a in range(real, n, CHUNK):
        b = min(a + CHUNK, n)
        src = rv[np.arange(a, b) % real]
        block = src + rng.normal(0, noise, size=(b - a, rv.shape[1])).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        cos_sum += float((block * src).sum(axis=1).sum())
        mm[a:b] = block
        print(f"\r{b:,}/{n:,} rows written", end="", file=sys.stderr, flush=True)
    mm.flush()
    del mm
    os.replace(out / "passages.npy.part", out / "passages.npy")
    np.save(out / "queries.npy", qv, allow_pickle=False)
    exact_top(n, refresh=True)
    info = {"n": n, "real_encoded": real, "synthetic": n - real, "noise_sigma": noise,
            "synthetic_mean_cosine_to_source": round(cos_sum / (n - real), 4) if n > real else 1.0,
            "encoder": "use-multilingual", "queries": len(qv), "encode_seconds": enc_s,
            "texts": "STARD articles, cycled (ids suffixed #k)"}
    if origin is not None:
        info["real_encodings_from"] = str(origin.relative_to(ROOT) if origin.is_relative_to(ROOT) else origin)
    (out / "prepared.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    print(json.dumps(info))


def _articles():
    from legalrag.corpora.statutes import load_statutes

    return load_statutes(DATA / "stard" / "corpus.jsonl")


def doc_id(i: int, docs) -> str:
    d = docs[i % len(docs)]
    return d.id if i < len(docs) else f"{d.id}#{i // len(docs)}"


def iter_docs(n: int, docs=None):
    """The n passages, made one at a time: STARD articles cycled, ids suffixed #k after the first round."""
    from legalrag.types import Document

    docs = docs or _articles()
    for i in range(n):
        d = docs[i % len(docs)]
        yield d if i < len(docs) else Document(id=doc_id(i, docs), text=d.text, title=d.title,
                                               metadata=d.metadata)


class NpyRows:
    """Rows of a 2-d .npy file read from disk a range at a time (pread, not a memory map: mapped pages would
    count in this process's RSS once read)."""

    def __init__(self, path: Path):
        import numpy as np

        header = np.load(path, mmap_mode="r")  # only for the shape, dtype and data offset: no page is read
        self.shape, self.dtype, self.offset = header.shape, header.dtype, header.offset
        assert header.flags.c_contiguous and len(self.shape) == 2
        del header
        self.path, self.row_bytes = path, self.shape[1] * self.dtype.itemsize

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: slice):
        import numpy as np

        a, b, _ = rows.indices(self.shape[0])
        with open(self.path, "rb") as f:
            buf = os.pread(f.fileno(), (b - a) * self.row_bytes, self.offset + a * self.row_bytes)
        return np.frombuffer(buf, dtype=self.dtype).reshape(-1, self.shape[1])


class Precomputed:
    """The prepared query vectors as an encoder (by position), so the engine, not a model, is timed; the
    passage vectors go to the build as precomputed ``vectors``."""

    def __init__(self, dimension: int, qvectors):
        self.model_id, self.dimension = "use-multilingual", int(dimension)
        self.qvectors, self.next_query = qvectors, 0

    def encode_documents(self, texts):
        raise AssertionError("the bench passes precomputed vectors")

    def encode_queries(self, texts):
        return self.qvectors[self.next_query:self.next_query + len(texts)]


def engine_spec(engine: str, a) -> tuple[str, dict, list[dict]]:
    """(index type, its build parameters, the search parameters to measure: the first is the reported one)."""
    kind = engine.split("-", 1)[1]
    if kind == "ivf":
        return "IVF_FLAT", {"nlist": a.nlist}, [{"nprobe": p} for p in a.nprobe or [16]]
    if kind == "hnsw":
        return "HNSW", {"M": a.hnsw_m, "efConstruction": a.hnsw_efc}, [{"ef": e} for e in a.ef] if a.ef else [{}]
    return "FLAT", {}, [{}]


def _wait_indexed(store, n: int, limit_s: float = 3600.0) -> dict:
    """Wait until the vector index covers every row (a search before that scans unindexed segments)."""
    t, info = time.perf_counter(), {}
    while time.perf_counter() - t < limit_s:
        try:
            info = store.client.describe_index(store.alias, "vec")
        except Exception as exc:  # older servers name the index differently: stop waiting
            return {"error": str(exc)[:200]}
        if int(info.get("indexed_rows", n)) >= n and not int(info.get("pending_index_rows", 0)):
            break
        time.sleep(2)
    return {"indexed_rows": info.get("indexed_rows"), "wait_s": round(time.perf_counter() - t, 1)}


def one(n: int, engine: str, uri: str, token: str, server_pid: int | None, a) -> dict:
    import numpy as np

    from legalrag.retrieval import milvus

    src = work(n)
    vectors, qvectors = NpyRows(src / "passages.npy"), np.load(src / "queries.npy")
    articles = _articles()
    enc = Precomputed(vectors.shape[1], qvectors)
    base_rss = peak_rss_mib()
    kind, index_params, searches = engine_spec(engine, a)
    store = milvus.MilvusStore(uri, f"bench_{engine.split('-', 1)[1]}", token=token, timeout=60)
    phases: dict[str, float] = {}
    publish = store.publish

    def timed_publish(name, expected):  # flush, load, count, alias swap
        phases["insert_s"] = round(time.perf_counter() - t, 1)
        publish(name, expected)

    store.publish = timed_publish
    t = time.perf_counter()
    milvus.build_collection(store, iter_docs(n, articles), enc, vectors=vectors, engine_index=kind,
                            index_params=index_params, max_chars=256, progress=a.progress, batch_size=a.batch)
    build_s = time.perf_counter() - t
    build_peak = peak_rss_mib()
    indexed = _wait_indexed(store, n) if kind != "FLAT" else {}
    segments = None
    try:
        segments = len(store.client.list_loaded_segments(store.alias))
    except Exception:
        pass
    ref = exact_top(n)
    out = {"engine": engine, "n": n, "index_type": kind, "index_params": index_params, "insert_batch": a.batch,
           "build_s": round(build_s, 1),
           **phases, "publish_s": round(build_s - phases.get("insert_s", 0), 1),
           "client_peak_rss_mib": None, "client_peak_rss_after_build_mib": round(build_peak, 0),
           "client_rss_before_build_mib": round(base_rss, 0), "index_wait": indexed, "loaded_segments": segments}
    runs_by = []
    for params in searches:
        r = milvus.MilvusRetriever(store, "dense", encoder=enc, search_params=params)
        lat, runs = [], []
        for i in range(len(qvectors)):
            enc.next_query = i
            t = time.perf_counter()
            hits = r.retrieve("q", k=K)
            lat.append((time.perf_counter() - t) * 1000)
            runs.append([h.id for h in hits])
        agree = sum(len(set(x) & {doc_id(int(j), articles) for j in row}) / K for x, row in zip(runs, ref)) / len(ref)
        lat.sort()
        runs_by.append({"search_params": params, "p50_ms": round(lat[len(lat) // 2], 2),
                        "p95_ms": round(lat[int(len(lat) * 0.95)], 2),
                        "top10_agreement_with_exact_faiss": round(agree, 4), "queries": len(lat)})
    out.update({k: v for k, v in runs_by[0].items()})
    if len(runs_by) > 1:
        out["searches"] = runs_by
    out["client_peak_rss_mib"] = round(peak_rss_mib(), 0)
    if server_pid:
        out["server_peak_rss_mib"] = proc_mib(server_pid)
        out["server_rss_end_mib"] = proc_mib(server_pid, "VmRSS")
    store.client.close()
    if milvus.is_embedded(uri):
        milvus.release(uri)
    return out


def exact_top(n: int, refresh: bool = False):
    """Row numbers of the exact inner-product top 10 of every query (FAISS IndexFlatIP over blocks of the
    passages, merged), computed once per prepared set and kept beside it."""
    import faiss
    import numpy as np

    path = work(n) / "exact_top10.npy"
    if path.exists() and not refresh:
        return np.load(path)
    rows, qv = NpyRows(work(n) / "passages.npy"), np.load(work(n) / "queries.npy")
    best_d = np.full((len(qv), K), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(qv), K), dtype=np.int64)
    for a in range(0, len(rows), CHUNK):
        block = np.ascontiguousarray(rows[a:a + CHUNK])
        index = faiss.IndexFlatIP(block.shape[1])
        index.add(block)
        d, i = index.search(qv, K)
        cand_d, cand_i = np.concatenate([best_d, d], axis=1), np.concatenate([best_i, i + a], axis=1)
        order = np.argsort(-cand_d, axis=1, kind="stable")[:, :K]
        best_d, best_i = np.take_along_axis(cand_d, order, 1), np.take_along_axis(cand_i, order, 1)
    np.save(path, best_i, allow_pickle=False)
    return best_i


def proc_mib(pid: int, field: str = "VmHWM") -> float:
    """A memory figure of a process from /proc (VmHWM: its peak resident set; VmRSS: the current one), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return round(int(line.split()[1]) / 1024, 0)
    return float("nan")


class LoadSampler:
    """The machine's 1-minute load average, sampled every 30 s while an engine runs."""

    def __init__(self):
        import threading

        self.samples, self.stop = [os.getloadavg()[0]], threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.wait(30):
            self.samples.append(os.getloadavg()[0])

    def done(self) -> dict:
        self.stop.set()
        self.samples.append(os.getloadavg()[0])
        s = self.samples
        return {"min": round(min(s), 1), "mean": round(sum(s) / len(s), 1), "max": round(max(s), 1)}


def milvus_bench(n: int, engines: list[str], a) -> None:
    name = f"milvus-n{n}" + (f"-{a.tag}" if a.tag else "")
    saved = ROOT / "bench" / "results" / f"scale-{name}.json"
    old = json.loads(saved.read_text()) if saved.exists() else {}
    rows = [r for r in old.get("rows", []) if r["engine"] not in engines]
    exact_top(n)  # here, not in the measured client
    for engine in engines:
        server, tmp = None, Path(tempfile.mkdtemp(prefix="bench-milvus-"))
        load = LoadSampler()
        try:
            if engine.startswith("server"):
                server = start_server(tmp)
                uri, token, pid = f"http://127.0.0.1:{server.listen_port}", "root:Milvus", server.server_proc.pid
            else:
                uri, token, pid = str(tmp / "lite.db"), "", None
            p = subprocess.run([sys.executable, __file__, "one", "--n", str(n), "--engine", engine, "--uri", uri,
                                "--pid", str(pid or 0), *_search_args(a)], stdout=subprocess.PIPE,
                               stderr=None if a.progress else subprocess.PIPE, text=True,
                               env={**os.environ, "LEGALRAG_MILVUS_TOKEN": token})
            if p.returncode:
                print((p.stderr or "")[-3000:], file=sys.stderr)
                continue
            row = json.loads(p.stdout.strip().splitlines()[-1])
            row["load_average_1min"] = load.done()
            rows.append(row)
            print(json.dumps(rows[-1]), flush=True)
            payload = {"prepared": json.loads((work(n) / "prepared.json").read_text()), "rows": rows}
            if a.source:
                payload["source"] = a.source
            save(name, payload)
        finally:
            load.done()
            if server is not None:
                from legalrag.retrieval.milvus.server import stop_server

                stop_server(server)
            shutil.rmtree(tmp, ignore_errors=True)


def _search_args(a) -> list[str]:
    out = ["--nlist", str(a.nlist), "--hnsw-m", str(a.hnsw_m), "--hnsw-efc", str(a.hnsw_efc)]
    for p in a.nprobe or []:
        out += ["--nprobe", str(p)]
    for e in a.ef or []:
        out += ["--ef", str(e)]
    return out + ["--batch", str(a.batch)] + (["--progress"] if a.progress else [])


def start_server(data: Path):
    from legalrag.retrieval.milvus.server import start_standalone

    return start_standalone(data, auth=True)  # the same server start-up as the tests'


def ray_bench(n: int) -> None:
    import functools

    import numpy as np

    from legalrag.corpora.statutes import load_statutes
    from legalrag.distributed import encode_parallel
    from legalrag.distributed import local as ss
    from legalrag.distributed.cluster import ensure_ray, shutdown
    from legalrag.retrieval.dense import passage_text
    from legalrag.wiring import make_encoder

    os.environ["RAY_AUTH_MODE"] = "disabled"
    texts = [passage_text(d, 256) for d in load_statutes(DATA / "stard" / "corpus.jsonl")[:n]]
    factory = functools.partial(make_encoder, "use-multilingual", cache=False, progress=False, threads=1)
    t = time.perf_counter()
    single = factory().encode_documents(texts)
    rows = [{"setup": "in-process", "seconds": round(time.perf_counter() - t, 1)}]
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    port = ss.free_port()
    cluster = ss.RayCluster(f"127.0.0.1:{port}", temp)
    try:
        t = time.perf_counter()
        cluster.nodes.append(ss.start_node("head", ["--head", "--port", str(port), "--include-dashboard", "false",
                                                     "--temp-dir", str(temp)], 1, temp, None))
        head_s = time.perf_counter() - t
        for label in ("1 node", "2 nodes", "2 nodes, node 2 killed mid-run"):
            if label == "2 nodes":
                t = time.perf_counter()
                cluster.add_node("node-2")
                head_s = time.perf_counter() - t
            if label.endswith("killed mid-run"):
                node = cluster.add_node("node-3")
                import threading

                threading.Timer(8.0, node.kill).start()  # while batches are running
            ensure_ray(address=cluster.address)
            vecs, rep = encode_parallel(texts, factory, address=cluster.address, batch_size=50)
            rows.append({"setup": label, "node_start_s": round(head_s, 1), "seconds": round(rep.seconds, 1),
                         "retries": rep.retries, "errors": rep.errors[:3], "cpus": rep.workers,
                         "max_abs_diff_vs_in_process": float(np.abs(vecs - single).max())})
            print(json.dumps(rows[-1]), flush=True)
            shutdown()
    finally:
        for node in reversed(cluster.nodes):
            node.stop()
        shutil.rmtree(temp, ignore_errors=True)
    for r in rows:
        r["passages_per_s"] = round(n / r["seconds"], 1)
    save(f"ray-n{n}", {"n": n, "encoder": "use-multilingual", "rows": rows})


def save(name: str, payload: dict) -> None:
    out = ROOT / "bench" / "results" / f"scale-{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    from legalrag.evaluation.record import write_result

    payload = dict(payload)
    write_result(out, payload.pop("metrics", {}), name=payload.pop("name", f"Scale against real servers: {name}"),
                 machine_note="shared with other jobs", **payload)
    print(f"saved {out.relative_to(ROOT)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="part", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--real", type=int, default=2000, help="rows encoded for real; the rest are synthetic")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--noise", type=float, default=0.03, help="sigma of the Gaussian noise per dimension")
    m = sub.add_parser("milvus")
    m.add_argument("--n", type=int, default=100_000)
    m.add_argument("--engine", action="append",
                   choices=["server-flat", "server-hnsw", "server-ivf", "lite-flat"])
    m.add_argument("--tag", default="", help="saved as scale-milvus-nN-TAG.json (default scale-milvus-nN.json)")
    m.add_argument("--source", default="", help="the docs heading the results are described under")
    o = sub.add_parser("one")
    o.add_argument("--n", type=int, required=True)
    o.add_argument("--engine", required=True)
    o.add_argument("--uri", required=True)
    o.add_argument("--pid", type=int, default=0)
    for q in (m, o):
        q.add_argument("--nlist", type=int, default=1024, help="IVF_FLAT lists")
        q.add_argument("--nprobe", type=int, action="append", help="IVF_FLAT lists searched (repeat: the first "
                       "is the reported row, the others are listed with it); default 16")
        q.add_argument("--hnsw-m", type=int, default=32)
        q.add_argument("--hnsw-efc", type=int, default=200)
        q.add_argument("--ef", type=int, action="append", help="HNSW search ef (default: the engine's)")
        q.add_argument("--progress", action="store_true", help="the insert's progress bar on stderr")
        q.add_argument("--batch", type=int, default=500, help="rows per insert call")
    r = sub.add_parser("ray")
    r.add_argument("--n", type=int, default=600)
    a = ap.parse_args()
    if a.part == "prepare":
        prepare(a.n, a.real, a.queries, a.noise)
    elif a.part == "milvus":
        milvus_bench(a.n, a.engine or ["server-flat", "server-hnsw", "lite-flat"], a)
    elif a.part == "one":
        print(json.dumps(one(a.n, a.engine, a.uri, os.environ.get("LEGALRAG_MILVUS_TOKEN", ""), a.pid or None, a)))
    else:
        ray_bench(a.n)


if __name__ == "__main__":
    main()
