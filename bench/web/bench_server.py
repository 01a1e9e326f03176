"""Load test of `legalrag serve` on 127.0.0.1 (bounded in requests and seconds). Parts:

  search  /search on a BM25 index (STARD: `legalrag index build --corpus ../shared/data/stard/corpus.jsonl
          --out DIR --retriever bm25`): throughput and p50/p95/p99 latency at 1, 8 and 32 concurrent clients,
          then the server's resident memory before and after --memory-requests more requests.
  ask     /ask with the embedded model (one generation at a time, so requests queue) under --users concurrent
          users: every request must succeed; the server's own queue time (timings.queue_s) is reported.

The server runs as a separate process (`python -m legalrag serve`), so its memory is measured alone; the client
is an asyncio httpx client on the same machine (it competes for the same cores). Queries are the STARD training
questions, cycled. Example (from the repository root):

    python bench/web/bench_server.py search --index /path/to/stard-web --out bench-server-search.json
    python bench/web/bench_server.py ask --index /path/to/stard-web --model qwen2.5-0.5b --users 4 --max-tokens 32
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
STARD_QUERIES = ROOT.parent / "shared" / "data" / "stard" / "train.jsonl"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def start_server(index: str, extra: list[str], timeout: float = 600) -> tuple[subprocess.Popen, str]:
    import httpx

    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "legalrag", "serve", "--index", index, "--host", "127.0.0.1", "--port", str(port),
           "-o", "rate_limit=0", *extra]
    # the access log goes to a file: an unread pipe would fill up and stall the server
    log = open(Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-server-{port}.log", "w")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited; see {log.name}")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("server did not start")


def queries(limit: int | None = None) -> list[str]:
    rows = [json.loads(line) for line in STARD_QUERIES.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows.sort(key=lambda r: r["query_id"])
    return [r["query"] for r in rows][:limit]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


async def hammer(url: str, qs: list[str], concurrency: int, total: int, max_seconds: float, k: int) -> dict[str, Any]:
    """``concurrency`` clients issue /search back to back until ``total`` requests or ``max_seconds``."""
    import httpx

    latencies: list[float] = []
    failures: dict[str, int] = {}
    issued = 0
    stop_at = time.perf_counter() + max_seconds
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        async def worker() -> None:
            nonlocal issued
            while issued < total and time.perf_counter() < stop_at:
                q = qs[issued % len(qs)]
                issued += 1
                t0 = time.perf_counter()
                try:
                    r = await client.post("/search", json={"query": q, "k": k})
                    ok = r.status_code == 200
                    if not ok:
                        failures[str(r.status_code)] = failures.get(str(r.status_code), 0) + 1
                except Exception as exc:  # counted, not fatal: the figure is how many failed
                    ok = False
                    failures[type(exc).__name__] = failures.get(type(exc).__name__, 0) + 1
                if ok:
                    latencies.append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - t0
    return {"concurrency": concurrency, "requests": issued, "ok": len(latencies), "failures": failures,
            "seconds": round(wall, 2), "req_per_s": round(len(latencies) / wall, 1) if latencies else 0.0,
            **({f"p{q}_ms": round(percentile(latencies, q) * 1000, 1) for q in (50, 95, 99)} if latencies else {})}


def part_search(args: argparse.Namespace) -> dict[str, Any]:
    qs = queries()
    proc, url = start_server(args.index, ["--no-llm", "-o", "max_k=50"])
    try:
        asyncio.run(hammer(url, qs, 4, 200, 60, args.k))  # warm-up: tokenizer, caches, first connections
        levels = [asyncio.run(hammer(url, qs, c, args.requests, args.max_seconds, args.k)) for c in args.concurrency]
        before = rss_mib(proc.pid)
        memory_run = {"ok": 0, "failures": {}}
        if args.memory_requests:
            memory_run = asyncio.run(hammer(url, qs, 8, args.memory_requests, args.memory_max_seconds, args.k))
        after = rss_mib(proc.pid)
    finally:
        stop_server(proc)
    return {"index": Path(args.index).name, "k": args.k, "levels": levels,
            "memory": {"requests": memory_run["ok"], "failures": memory_run["failures"],
                       "rss_before_mib": round(before, 1), "rss_after_mib": round(after, 1),
                       "growth_mib": round(after - before, 1)}}


async def users(url: str, qs: list[str], n: int, k: int, max_tokens: int) -> list[dict[str, Any]]:
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=1800) as client:
        async def one(i: int) -> dict[str, Any]:
            t0 = time.perf_counter()
            r = await client.post("/ask", json={"question": qs[i], "k": k, "max_tokens": max_tokens})
            wall = time.perf_counter() - t0
            body = r.json()
            if r.status_code != 200:
                return {"user": i, "status": r.status_code, "error": body.get("error"), "wall_s": round(wall, 2)}
            t = body["timings"]
            return {"user": i, "status": 200, "wall_s": round(wall, 2), "queue_s": t["queue_s"],
                    "generation_s": round(t.get("generation_s", 0), 2),
                    "tokens": body["steps"][1]["tokens"] if len(body["steps"]) > 1 else None,
                    "citations": len(body["citations"]), "unresolved": body["unresolved"]}

        return await asyncio.gather(*(one(i) for i in range(n)))


def part_ask(args: argparse.Namespace) -> dict[str, Any]:
    qs = queries(args.users)
    os.environ["LEGALRAG_THREADS"] = str(args.threads)  # the server's threads: the runtime.threads setting
    extra = ["--model", args.model, "-o", "llm_cache=false", "-o", "max_waiting=16"]
    proc, url = start_server(args.index, extra)
    try:
        import httpx

        t0 = time.perf_counter()  # load the model before timing (first call), on a question not in the test
        httpx.post(url + "/ask", json={"question": "试用期", "k": 1, "max_tokens": 16}, timeout=1800).raise_for_status()
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        results = asyncio.run(users(url, qs, args.users, args.k, args.max_tokens))
        wall = time.perf_counter() - t0
    finally:
        stop_server(proc)
    return {"model": args.model, "threads": args.threads, "max_tokens": args.max_tokens, "k": args.k,
            "users": args.users, "warmup_s": round(load_s, 2), "wall_s": round(wall, 2),
            "failed": sum(r["status"] != 200 for r in results),
            "max_queue_s": max(r.get("queue_s", 0) for r in results),
            "mean_queue_s": round(statistics.mean(r.get("queue_s", 0) for r in results), 2), "requests": results}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("part", choices=["search", "ask"])
    p.add_argument("--index", required=True, help="index directory (STARD BM25)")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 8, 32])
    p.add_argument("--requests", type=int, default=2000, help="requests per concurrency level (at most)")
    p.add_argument("--max-seconds", type=float, default=60, help="time limit per concurrency level")
    p.add_argument("--memory-requests", type=int, default=10000)
    p.add_argument("--memory-max-seconds", type=float, default=600)
    p.add_argument("--model", default="qwen2.5-0.5b")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--users", type=int, default=4)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--out", type=Path, help="write the results here as JSON")
    args = p.parse_args()
    result = part_search(args) if args.part == "search" else part_ask(args)
    text = json.dumps(result, ensure_ascii=False, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
