"""Crash-consistency fault injection at scale: for each fault kind, fork a writer, SIGKILL it at a random
moment, check the state on disk; repeat. Prints per kind: injected, valid afterwards, data lost (target 0).

    python bench/bench_faults.py --kills 100            # about 2 minutes on 2 cores
    python bench/bench_faults.py --kinds "index build,LLM call cache" --kills 300 --json out.json
    python bench/bench_faults.py --memory 20000,80000,240000   # peak RSS and time of `index build` and a search
    python bench/bench_faults.py --memory 20000 --retrievers bm25,qld --chunk-docs 5000
    python bench/bench_faults.py --search-memory INDEX --retrievers qld   # what opening and searching holds

The fault kinds and their checks are in tests/crash_workers.py (shared with tests/test_crash_consistency.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from crash_workers import FAULTS, run_fault  # noqa: E402


_BUILD = """
import inspect, resource, sys, time
from legalrag.retrieval.index import build_index, read_corpus
from legalrag.corpora.statutes import FieldMap
retrievers, chunk = sys.argv[3].split(","), int(sys.argv[4])
extra = {"chunk_docs": chunk} if chunk and "chunk_docs" in inspect.signature(build_index).parameters else {}
t = time.perf_counter()
docs, _ = read_corpus(sys.argv[1], FieldMap.parse("id=id,text=text,name=name"))
idx = build_index(sys.argv[2], docs, retrievers, lang="zh", **extra)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, round(time.perf_counter() - t, 1))
"""

# A fresh process opens the index, asks for 10 hits (what a search holds), then for 100,000 (what a huge request adds).
_SEARCH = """
import resource, sys, time
from legalrag.retrieval.index import open_index
q = "当事人应当依照约定履行合同义务"
t = time.perf_counter()
r = open_index(sys.argv[1]).retriever(sys.argv[2])
r.retrieve(q, k=10)
k10_kb, k10_s = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter() - t
# resident now: anonymous (heap: what the process holds) and file-backed (mapped index pages the kernel can drop)
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
anon_kb, file_kb = int(status["RssAnon"].split()[0]), int(status["RssFile"].split()[0])
t = time.perf_counter()
hits = r.retrieve(q, k=100_000)
print(anon_kb, file_kb, k10_kb, round(k10_s, 2), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(hits),
      round(time.perf_counter() - t, 2))
"""


def search_memory(index: Path, retriever: str) -> dict:
    """Peak RSS of a fresh process that opens ``index`` and searches it (10 hits, then 100,000)."""
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    out = subprocess.run([sys.executable, "-c", _SEARCH, str(index), retriever], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    return {"open_and_10_hits_peak_rss_mib": round(int(out[-5]) / 1024, 1),
            "then_rss_anon_mib": round(int(out[-7]) / 1024, 1), "then_rss_file_mib": round(int(out[-6]) / 1024, 1),
            "open_and_10_hits_s": float(out[-4]),
            "100k_hits_peak_rss_mib": round(int(out[-3]) / 1024, 1), "hits_returned": int(out[-2]),
            "100k_hits_s": float(out[-1])}


def memory_table(sizes: list[int], tmp: Path, retrievers: str = "bm25", chunk_docs: int = 0,
                 keep: Path | None = None) -> list[dict]:
    """Peak RSS and time of building an index over synthetic Chinese corpora (one fresh process per size), then
    of a 100k-hit request in another fresh process. ``chunk_docs``: the streamed build's chunk (0: its default)."""
    import json as _json
    import os as _os
    import random
    import subprocess

    rng = random.Random(0)
    words = ["当事人", "合同", "履行", "义务", "违约", "赔偿", "损失", "人民法院", "依照", "规定", "租金", "借款", "利息",
             "担保", "物权", "侵权", "责任", "期限", "解除", "通知", "书面", "约定", "法律", "行政", "处罚"]
    env = {**_os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    rows = []
    for n in sizes:
        corpus = tmp / f"corpus-{n}.jsonl"
        with corpus.open("w", encoding="utf-8") as fh:
            for i in range(n):
                text = "，".join("".join(rng.choice(words) for _ in range(4)) for _ in range(8)) + "。"
                fh.write(_json.dumps({"id": f"a{i}", "text": text, "name": f"某法第{i + 1}条"}, ensure_ascii=False) + "\n")
        out = subprocess.run([sys.executable, "-c", _BUILD, str(corpus), str(tmp / f"idx-{n}"), retrievers,
                              str(chunk_docs)], env=env, capture_output=True, text=True, check=True).stdout.split()
        build_kb, build_s = int(out[-2]), float(out[-1])
        mb = corpus.stat().st_size / 2**20
        rows.append({"documents": n, "corpus_mib": round(mb, 1), "build_peak_rss_mib": round(build_kb / 1024, 1),
                     "build_s": build_s, **search_memory(tmp / f"idx-{n}", retrievers.split(",")[0])})
        print(rows[-1], file=sys.stderr, flush=True)
        corpus.unlink()
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(keep / f"idx-{n}", ignore_errors=True)
            shutil.move(str(tmp / f"idx-{n}"), str(keep / f"idx-{n}"))
        shutil.rmtree(tmp / f"idx-{n}", ignore_errors=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=100, help="kills per fault kind")
    ap.add_argument("--kinds", default=",".join(FAULTS), help="comma-separated fault kinds")
    ap.add_argument("--max-delay", type=float, default=0.5, help="kill within this many seconds of the start")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="write the table here as JSON")
    ap.add_argument("--memory", default=None, help="comma-separated corpus sizes (documents): measure peak RSS "
                                                    "of index build and a 100k-hit request instead of killing")
    ap.add_argument("--search-memory", type=Path, default=None, metavar="INDEX",
                    help="peak RSS of opening INDEX and searching it (its first --retrievers component)")
    ap.add_argument("--keep", type=Path, default=None, help="with --memory: keep the indexes here (idx-N)")
    ap.add_argument("--retrievers", default="bm25", help="with --memory: the index components to build")
    ap.add_argument("--chunk-docs", type=int, default=0,
                    help="with --memory: documents per chunk of the streamed build (0: its default)")
    args = ap.parse_args()
    from rich.console import Console
    from rich.table import Table

    if args.search_memory:
        row = {"index": args.search_memory.name, **search_memory(args.search_memory, args.retrievers.split(",")[0])}
        print(json.dumps(row))
        return
    if args.memory:
        with tempfile.TemporaryDirectory(prefix="legalrag-memory-") as tmp:
            rows = memory_table([int(x) for x in args.memory.split(",")], Path(tmp), args.retrievers,
                                args.chunk_docs, args.keep)
        table = Table(title=f"Peak RSS of `index build` ({args.retrievers}) and of a 100k-hit request, by corpus size")
        for col in rows[0]:
            table.add_column(col.replace("_", " "))
        for r in rows:
            table.add_row(*[str(v) for v in r.values()])
        Console().print(table)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
        return

    rows = []
    with tempfile.TemporaryDirectory(prefix="legalrag-faults-") as tmp:
        os.environ["LEGALRAG_HOME"] = str(Path(tmp) / "home")
        for i, kind in enumerate(k.strip() for k in args.kinds.split(",") if k.strip()):
            t0 = time.perf_counter()
            outcomes = run_fault(kind, Path(tmp) / f"k{i}", args.kills, seed=args.seed + i, max_delay=args.max_delay)
            bad = [o.detail for o in outcomes if not o.valid or o.lost]
            rows.append({"fault": kind, "injected": len(outcomes), "valid": sum(o.valid for o in outcomes),
                         "data_lost": sum(o.lost for o in outcomes), "seconds": round(time.perf_counter() - t0, 1),
                         "examples_of_failures": bad[:3]})
            print(f"{kind}: {rows[-1]}", file=sys.stderr)
    table = Table(title=f"SIGKILL fault injection ({args.kills} kills per kind, kill within {args.max_delay} s)")
    for col in ("fault kind", "injected", "valid afterwards", "data lost", "seconds"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["fault"], str(r["injected"]), str(r["valid"]), str(r["data_lost"]), str(r["seconds"]))
    Console().print(table)
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
