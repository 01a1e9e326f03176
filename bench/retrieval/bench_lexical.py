"""Lexical retrieval benchmarks (issue 2): quality on STARD and JuDGE, speed and memory against rank_bm25.

    python bench/retrieval/bench_lexical.py --part quality   # STARD 1,234 training queries x 55,515 articles, BM25 + QLD,
                                                   # for several tokenisations (cached under $LEGALRAG_HOME)
    python bench/retrieval/bench_lexical.py --part judge     # JuDGE test facts -> Criminal Law articles (la), BM25 + QLD
    python bench/retrieval/bench_lexical.py --part speed     # build time, queries/s, peak RSS: ours vs rank_bm25, one run
    python bench/retrieval/bench_lexical.py --part all --json results.json

Each speed measurement runs in its own subprocess and reports that process's peak RSS (ru_maxrss), so the
figures do not leak into each other. Threads are capped at 2.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(var, "2")

REPO = Path(__file__).resolve().parents[2]
import numpy as np

K = 10
# (label, tokenizer options, title_mode)
VARIANTS = [
    ("jieba precise, no stop words, text only", {"jieba_mode": "precise", "stopwords": False}, "none"),
    ("jieba precise + stop words, text only", {"jieba_mode": "precise", "stopwords": True}, "none"),
    ("jieba search + stop words, text only", {"jieba_mode": "search", "stopwords": True}, "none"),
    ("jieba search + stop words, full title + text", {"jieba_mode": "search", "stopwords": True}, "full"),
    ("jieba search + stop words, law title + text (default)", {"jieba_mode": "search", "stopwords": True}, "law"),
]


class Clock:
    """Wall and CPU seconds (this process) of a block: CPU time is less distorted by other jobs on the machine."""

    def __enter__(self):
        self.w0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.w0, time.process_time() - self.c0


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stard_paths(data: Path) -> tuple[Path, Path]:
    return data / "stard" / "corpus.jsonl", data / "stard" / "train.jsonl"


def cached_tokens(docs, tokenizer, title_mode: str):
    """TokenizedCorpus for (tokenizer config, title_mode), cached as .npy + JSON; returns (tokens, seconds)."""
    from legalrag.io import cache_dir, sha256_text
    from legalrag.retrieval.lexical import TokenizedCorpus

    key = sha256_text(json.dumps([tokenizer.config.to_dict(), title_mode, len(docs), docs[0].id, docs[-1].id,
                                  docs[len(docs) // 2].text]))[:16]
    d = cache_dir() / "bench-tokens" / key
    if (d / "meta.json").exists():  # written last
        flat = np.load(d / "ids.npy", allow_pickle=False)
        offsets = np.load(d / "offsets.npy", allow_pickle=False)
        vocab = json.loads((d / "vocab.json").read_text(encoding="utf-8"))
        meta = json.loads((d / "meta.json").read_text(encoding="utf-8"))
        ids = [flat[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]
        return TokenizedCorpus(vocab, ids), meta["seconds"]
    t0 = time.perf_counter()
    tc = TokenizedCorpus.build(docs, tokenizer, title_mode, progress=True)
    seconds = time.perf_counter() - t0
    d.mkdir(parents=True, exist_ok=True)
    offsets = np.zeros(len(tc.ids) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(x) for x in tc.ids])
    np.save(d / "ids.npy", np.fromiter((t for x in tc.ids for t in x), dtype=np.int32, count=int(offsets[-1])))
    np.save(d / "offsets.npy", offsets)
    (d / "vocab.json").write_text(json.dumps(tc.vocab, ensure_ascii=False), encoding="utf-8")
    (d / "meta.json").write_text(json.dumps({"seconds": seconds}), encoding="utf-8")
    return tc, seconds


def evaluate(retriever, queries, ks=(K,)):
    from legalrag.evaluation.runs import evaluate_retrieval

    t0 = time.perf_counter()
    res = evaluate_retrieval(retriever, queries, k=max(ks), ks=ks)
    return res.metrics, time.perf_counter() - t0


def part_quality(data: Path) -> list[dict]:
    from legalrag.corpora.statutes import load_statutes
    from legalrag.evaluation.datasets import load_queries
    from legalrag.retrieval.bm25 import BM25Retriever
    from legalrag.retrieval.qld import QLDRetriever
    from legalrag.retrieval.tokenize import tokenizer_for

    corpus, train = stard_paths(data)
    docs = load_statutes(corpus)
    queries = load_queries(train, docs)
    rows = []
    for label, opts, title_mode in VARIANTS:
        tok = tokenizer_for("zh", **opts)
        tc, tok_s = cached_tokens(docs, tok, title_mode)
        configs = [("BM25 k1=1.2 b=0.75", lambda: BM25Retriever.from_documents(docs, tok, title_mode=title_mode,
                                                                              tokens=tc))]
        for mu in (100, 200, 1000):
            configs.append((f"QLD mu={mu}", lambda mu=mu: QLDRetriever.from_documents(
                docs, tok, mu=mu, title_mode=title_mode, tokens=tc)))
        for name, make in configs:
            t0 = time.perf_counter()
            r = make()
            build_s = time.perf_counter() - t0
            m, eval_s = evaluate(r, queries)
            row = {"part": "stard", "tokenisation": label, "retriever": name, "tokenize_s": round(tok_s, 1),
                   "build_s": round(build_s, 2), "eval_s": round(eval_s, 2), "vocab": len(tc.vocab),
                   **{k: round(v, 4) if isinstance(v, float) else v for k, v in m.items()}}
            rows.append(row)
            print(json.dumps(row, ensure_ascii=False), flush=True)
    return rows


def part_judge(data: Path) -> list[dict]:
    from legalrag.corpora.statutes import load_statutes
    from legalrag.evaluation.datasets import QueryFields, load_queries
    from legalrag.retrieval.bm25 import BM25Retriever
    from legalrag.retrieval.qld import QLDRetriever
    from legalrag.retrieval.tokenize import tokenizer_for

    docs = load_statutes(data / "judge" / "data" / "law_corpus.jsonl")
    queries = load_queries(data / "judge" / "data" / "test.json", docs,
                           QueryFields.parse("query_id=text_id,query=text,gold_ids=la"))
    tok = tokenizer_for("zh")
    rows = []
    for name, r in [("BM25 k1=1.2 b=0.75", BM25Retriever.from_documents(docs, tok)),
                    ("QLD mu=200", QLDRetriever.from_documents(docs, tok, mu=200))]:
        m, eval_s = evaluate(r, queries, ks=(5, 10))
        row = {"part": "judge", "retriever": name, "eval_s": round(eval_s, 2),
               **{k: round(v, 4) if isinstance(v, float) else v for k, v in m.items()
                  if k.split("@")[0] in ("precision", "recall", "mrr", "ndcg", "hit", "n_queries")}}
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
    return rows


# --- speed: each job runs in a fresh subprocess (python bench_lexical.py --job NAME) ---------------------------

def job(name: str, data: Path, n_rank_bm25: int, tmp: Path) -> dict:
    from legalrag.corpora.statutes import load_statutes
    from legalrag.retrieval.tokenize import tokenizer_for

    corpus, train = stard_paths(data)
    out: dict = {"job": name}
    if name == "ours_build_index":  # end to end: read JSONL, tokenise, BM25, write the index directory
        from legalrag.retrieval.index import build_index

        with Clock() as c:
            docs = load_statutes(corpus)
            build_index(tmp / "stard-bm25", docs, retrievers=["bm25"], lang="zh", source=str(corpus))
        out["seconds"], out["cpu_seconds"] = c.wall, c.cpu
        out["index_mib"] = sum(p.stat().st_size for p in (tmp / "stard-bm25").rglob("*") if p.is_file()) / 2**20
    elif name == "ours_load":  # open the index, load BM25, answer one query (as `legalrag search` does)
        from legalrag.retrieval.index import open_index

        with Clock() as c:
            idx = open_index(tmp / "stard-bm25")
            r = idx.retriever("bm25")
        out["open_s"], out["open_cpu_s"] = c.wall, c.cpu
        with Clock() as c2:
            r.retrieve("公司不签劳动合同怎么办", k=K)
        out["first_query_s"], out["first_query_cpu_s"] = c2.wall, c2.cpu  # includes loading jieba's dictionary
        with Clock() as c3:
            list(idx.documents)
        out["parse_all_documents_s"], out["parse_all_documents_cpu_s"] = c3.wall, c3.cpu
    elif name == "ours_query":
        from legalrag.evaluation.datasets import load_queries
        from legalrag.retrieval.index import open_index

        idx = open_index(tmp / "stard-bm25")
        r = idx.retriever("bm25")
        qs = [q.text for q in load_queries(train, idx)]
        r.retrieve("预热", k=K)
        with Clock() as c:
            r.retrieve_batch(qs, k=K)
        out["batch_qps"], out["batch_qps_cpu"] = len(qs) / c.wall, len(qs) / c.cpu
        sub = qs[:n_rank_bm25]
        with Clock() as c:
            for q in sub:
                r.retrieve(q, k=K)
        out["single_qps"], out["single_qps_cpu"] = len(sub) / c.wall, len(sub) / c.cpu
        out["n_batch"], out["n_single"] = len(qs), len(sub)
    elif name in ("ours_from_tokens", "rank_bm25"):  # index build from the same cached tokens
        docs = load_statutes(corpus)
        tok = tokenizer_for("zh")
        tc, _ = cached_tokens(docs, tok, "law")
        out["baseline_rss_mib"] = rss_mib()
        if name == "ours_from_tokens":
            from legalrag.retrieval.bm25 import BM25Retriever

            with Clock() as c:
                BM25Retriever.from_documents(docs, tok, tokens=tc)
            out["seconds"], out["cpu_seconds"] = c.wall, c.cpu
        else:
            from rank_bm25 import BM25Okapi

            inv = {i: t for t, i in tc.vocab.items()}
            token_docs = [[inv[i] for i in ids] for ids in tc.ids]
            del tc
            out["baseline_rss_mib"] = rss_mib()
            with Clock() as c:
                model = BM25Okapi(token_docs, k1=1.2, b=0.75)
            out["seconds"], out["cpu_seconds"] = c.wall, c.cpu
            from legalrag.evaluation.datasets import load_queries

            qs = [q.text for q in load_queries(train, docs)][:n_rank_bm25]
            tok("预热")
            with Clock() as c:
                for q in qs:
                    scores = model.get_scores(tok(q))
                    top = np.argpartition(-scores, K)[:K]
                    top[np.argsort(-scores[top])]
            out["single_qps"], out["single_qps_cpu"] = len(qs) / c.wall, len(qs) / c.cpu
            out["n_single"] = len(qs)
    out["peak_rss_mib"] = rss_mib()
    return out


def part_speed(data: Path, n_rank_bm25: int) -> list[dict]:
    import tempfile

    rows = [{"job": "machine", "loadavg_before": os.getloadavg()}]
    with tempfile.TemporaryDirectory(prefix="bench-lexical-") as tmp:
        for name in ("ours_build_index", "ours_load", "ours_query", "ours_from_tokens", "rank_bm25"):
            cmd = [sys.executable, __file__, "--job", name, "--data", str(data), "--tmp", tmp,
                   "--rank-bm25-queries", str(n_rank_bm25)]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"job {name} failed:\n{proc.stderr[-3000:]}")
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            row["process_s"] = round(time.perf_counter() - t0, 2)
            row = {k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}
            rows.append(row)
            print(json.dumps(row), flush=True)
    rows.append({"job": "machine", "loadavg_after": os.getloadavg()})
    print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=("quality", "judge", "speed", "all"), default="all")
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--rank-bm25-queries", type=int, default=200,
                    help="queries timed one by one (rank_bm25 scores every document in Python)")
    ap.add_argument("--json", type=Path, help="write all rows here")
    ap.add_argument("--job", help=argparse.SUPPRESS)
    ap.add_argument("--tmp", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.job:
        print(json.dumps(job(args.job, args.data, args.rank_bm25_queries, args.tmp)))
        return
    rows = []
    if args.part in ("quality", "all"):
        rows += part_quality(args.data)
    if args.part in ("judge", "all"):
        rows += part_judge(args.data)
    if args.part in ("speed", "all"):
        rows += part_speed(args.data, args.rank_bm25_queries)
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
