"""Scale benchmarks against real servers: the Milvus standalone server (2.3.5, the `milvus` package's binary) with
Milvus Lite and exact FAISS beside it, and Ray encoding on a one- and a two-node cluster. Not part of `make test`.

    python bench/bench_scale_server.py prepare --n 100000 --real 2000 --queries 200
    python bench/bench_scale_server.py milvus --n 100000 [--engine server-flat --engine server-hnsw --engine lite-flat]
    python bench/bench_scale_server.py ray --n 600

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
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))  # scale_servers: the same server and cluster start-up as the tests
DATA = Path(os.environ.get("LEGALRAG_SHARED_DATA", ROOT.parent / "shared" / "data"))
WORK = Path(os.environ.get("LEGALRAG_BENCH_DIR", ROOT / "indexes" / "scale" / "server"))
K = 10
MACHINE = "2-core x86-64 CPU, 24 GiB, no GPU, shared with other jobs"


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def work(n: int) -> Path:
    return WORK / f"n{n}"


def prepare(n: int, real: int, n_queries: int, noise: float) -> None:
    import numpy as np

    from legalrag.corpora.statutes import load_statutes
    from legalrag.evaluation.datasets import load_queries
    from legalrag.retrieval.dense import passage_text
    from legalrag.wiring import make_encoder

    docs = load_statutes(DATA / "stard" / "corpus.jsonl")
    queries = load_queries(DATA / "stard" / "train.jsonl")[:n_queries]
    enc = make_encoder("use-multilingual", threads=1, progress=True)
    t = time.perf_counter()
    rv = enc.encode_documents([passage_text(d, 256) for d in docs[:real]])
    enc_s = time.perf_counter() - t
    qv = enc.encode_queries([q.text for q in queries])
    rng = np.random.default_rng(0)
    extra = rv[np.arange(real, n) % real] + rng.normal(0, noise, size=(n - real, rv.shape[1])).astype(np.float32)
    extra /= np.linalg.norm(extra, axis=1, keepdims=True)
    vectors = np.concatenate([rv, extra]).astype(np.float32)
    cos = float((extra * rv[np.arange(real, n) % real]).sum(axis=1).mean()) if n > real else 1.0
    out = work(n)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "passages.npy", vectors, allow_pickle=False)
    np.save(out / "queries.npy", qv, allow_pickle=False)
    info = {"n": n, "real_encoded": real, "synthetic": n - real, "noise_sigma": noise,
            "synthetic_mean_cosine_to_source": round(cos, 4), "encoder": enc.model_id, "queries": len(queries),
            "encode_seconds": round(enc_s, 1), "texts": "STARD articles, cycled (ids suffixed #k)"}
    (out / "prepared.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    print(json.dumps(info))


def _rows(n: int):
    from legalrag.corpora.statutes import load_statutes
    from legalrag.types import Document

    docs = load_statutes(DATA / "stard" / "corpus.jsonl")
    out = []
    for i in range(n):
        d = docs[i % len(docs)]
        out.append(d if i < len(docs) else Document(id=f"{d.id}#{i // len(docs)}", text=d.text, title=d.title,
                                                    metadata=d.metadata))
    return out


class Precomputed:
    """The prepared vectors as an encoder (by position), so the engine, not a model, is timed."""

    def __init__(self, vectors, qvectors):
        self.model_id, self.dimension = "use-multilingual", int(vectors.shape[1])
        self.vectors, self.qvectors, self.next_query = vectors, qvectors, 0

    def encode_documents(self, texts):
        assert len(texts) == len(self.vectors)
        return self.vectors

    def encode_queries(self, texts):
        return self.qvectors[self.next_query:self.next_query + len(texts)]


def one(n: int, engine: str, uri: str, token: str, server_pid: int | None) -> dict:
    import numpy as np

    from legalrag.retrieval import milvus

    src = work(n)
    vectors, qvectors = np.load(src / "passages.npy"), np.load(src / "queries.npy")
    docs = _rows(n)
    enc = Precomputed(vectors, qvectors)
    base_rss = peak_rss_mib()
    kind = engine.split("-", 1)[1].upper()
    store = milvus.MilvusStore(uri, f"bench_{kind.lower()}", token=token, timeout=60)
    t = time.perf_counter()
    milvus.build_collection(store, docs, enc, engine_index=kind, max_chars=256)
    build_s = time.perf_counter() - t
    r = milvus.MilvusRetriever(store, "dense", encoder=enc)
    lat, runs = [], []
    for i in range(len(qvectors)):
        enc.next_query = i
        t = time.perf_counter()
        hits = r.retrieve("q", k=K)
        lat.append((time.perf_counter() - t) * 1000)
        runs.append([h.id for h in hits])
    ref = exact_top(vectors, qvectors, docs)
    agree = sum(len(set(a) & set(b)) / K for a, b in zip(runs, ref)) / len(ref)
    lat.sort()
    out = {"engine": engine, "n": n, "build_s": round(build_s, 1), "client_peak_rss_mib": round(peak_rss_mib(), 0),
           "client_rss_before_build_mib": round(base_rss, 0), "p50_ms": round(lat[len(lat) // 2], 2),
           "p95_ms": round(lat[int(len(lat) * 0.95)], 2), "top10_agreement_with_exact_faiss": round(agree, 4),
           "queries": len(lat)}
    if server_pid:
        out["server_peak_rss_mib"] = vm_hwm_mib(server_pid)
    store.client.close()
    if milvus.is_embedded(uri):
        milvus.release(uri)
    return out


def exact_top(vectors, qvectors, docs):
    import faiss

    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    _, idx = index.search(qvectors, K)
    return [[docs[j].id for j in row] for row in idx]


def vm_hwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 0)
    return float("nan")


def milvus_bench(n: int, engines: list[str]) -> None:
    saved = ROOT / "bench" / "results" / f"scale-milvus-n{n}.json"
    rows = [r for r in json.loads(saved.read_text())["rows"] if r["engine"] not in engines] if saved.exists() else []
    for engine in engines:
        server, tmp = None, Path(tempfile.mkdtemp(prefix="bench-milvus-"))
        try:
            if engine.startswith("server"):
                server = start_server(tmp)
                uri, token, pid = f"http://127.0.0.1:{server.listen_port}", "root:Milvus", server.server_proc.pid
            else:
                uri, token, pid = str(tmp / "lite.db"), "", None
            p = subprocess.run([sys.executable, __file__, "one", "--n", str(n), "--engine", engine, "--uri", uri,
                                "--pid", str(pid or 0)], capture_output=True, text=True,
                               env={**os.environ, "LEGALRAG_MILVUS_TOKEN": token})
            if p.returncode:
                print(p.stderr[-3000:], file=sys.stderr)
                continue
            rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), flush=True)
            save(f"milvus-n{n}", {"prepared": json.loads((work(n) / "prepared.json").read_text()), "rows": rows})
        finally:
            if server is not None:
                from scale_servers import stop_server

                stop_server(server)
            shutil.rmtree(tmp, ignore_errors=True)


def start_server(data: Path):
    import milvus as milvus_mod
    from scale_servers import _cached_binaries, _wait_healthy

    (data / "bin").symlink_to(_cached_binaries(milvus_mod), target_is_directory=True)
    config = milvus_mod.MilvusServerConfig(data_dir=str(data))
    config.set("authorization_enabled", True)
    server = milvus_mod.MilvusServer(config, wait_for_started=False)
    server.start()
    _wait_healthy(server)
    return server


def ray_bench(n: int) -> None:
    import functools

    import numpy as np

    import scale_servers as ss
    from legalrag.corpora.statutes import load_statutes
    from legalrag.distributed import encode_parallel
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
        cluster.nodes.append(ss._start_node("head", ["--head", "--port", str(port), "--include-dashboard", "false",
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
    script = Path(sys.argv[0]).resolve()
    payload = {"command": "python " + " ".join([str(script.relative_to(ROOT)) if script.is_relative_to(ROOT)
                                                else str(script)] + sys.argv[1:]),
               "machine": MACHINE, "date": time.strftime("%Y-%m-%d"), **payload}
    out.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
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
    m.add_argument("--engine", action="append", choices=["server-flat", "server-hnsw", "lite-flat"])
    o = sub.add_parser("one")
    o.add_argument("--n", type=int, required=True)
    o.add_argument("--engine", required=True)
    o.add_argument("--uri", required=True)
    o.add_argument("--pid", type=int, default=0)
    r = sub.add_parser("ray")
    r.add_argument("--n", type=int, default=600)
    a = ap.parse_args()
    if a.part == "prepare":
        prepare(a.n, a.real, a.queries, a.noise)
    elif a.part == "milvus":
        milvus_bench(a.n, a.engine or ["server-flat", "server-hnsw", "lite-flat"])
    elif a.part == "one":
        print(json.dumps(one(a.n, a.engine, a.uri, os.environ.get("LEGALRAG_MILVUS_TOKEN", ""), a.pid or None)))
    else:
        ray_bench(a.n)


if __name__ == "__main__":
    main()
