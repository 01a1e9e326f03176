"""Prefill and decode speed of the embedded model under different llama.cpp settings, interleaved.

Each configuration is one xllamacpp Server in this process (the GGUF is memory-mapped once, so servers share
the weights' pages); the script then calls them in turn, A B C A B C ..., so a shared machine's load falls on
every configuration alike. Each call starts with a fresh nonce so llama.cpp's prompt cache cannot help, and
tokens/s are the runtime's own figures (``timings.prompt_per_second`` / ``predicted_per_second``).

    python bench/llm/prefill_configs.py --configs current,ubatch2048,poll0 --reps 3
    python bench/llm/prefill_configs.py --stream-vs-direct

``--stream-vs-direct``: decode speed of the same model through EmbeddedLLM (an in-process call), a plain
xllamacpp server, and EmbeddedLLM.stream (SSE over the private socket), called A B C C B A.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = {
    "current": {},
    "plain": {"plain": True},  # the MODELS.md snippet: only model, n_ctx and threads set
    "warmup": {"warmup": True},
    "ubatch2048": {"n_ubatch": 2048},
    "ubatch1024": {"n_ubatch": 1024},
    "ubatch256": {"n_ubatch": 256},
    "poll0": {"poll": 0},
    "fa_on": {"flash_attn": 1},
    "fa_off": {"flash_attn": 0},
    "threads1": {"threads": 1},
    "threads2_poll0": {"threads": 2, "poll": 0},
    "norepack": {"no_extra_bufts": True},
    "mlock": {"load_mode": "LLAMA_LOAD_MODE_MMAP_MLOCK"},
}


def make_server(gguf: str, n_ctx: int, threads: int, opts: dict):
    import xllamacpp as xlc

    p = xlc.CommonParams()
    p.model.path = gguf
    p.n_ctx = n_ctx
    t = opts.get("threads", threads)
    p.cpuparams.n_threads = p.cpuparams_batch.n_threads = t
    if not opts.get("plain"):
        p.n_parallel = 1
        p.warmup = bool(opts.get("warmup", False))
        p.verbosity = -1
        if "n_ubatch" in opts:
            p.n_ubatch = opts["n_ubatch"]
        if "poll" in opts:
            p.cpuparams.poll = p.cpuparams_batch.poll = opts["poll"]
        if "flash_attn" in opts:
            p.flash_attn_type = opts["flash_attn"]
        if "no_extra_bufts" in opts:
            p.no_extra_bufts = opts["no_extra_bufts"]
        if "load_mode" in opts:
            p.load_mode = getattr(xlc.llama_load_mode, opts["load_mode"])
    else:
        p.verbosity = -1
    srv = xlc.Server(p)
    srv.handle_metrics()
    return srv


def prompt_text(corpus: Path, chars: int) -> str:
    out, n = [], 0
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            if "劳动" not in d["name"]:
                continue
            out.append(f"{d['name']}：{d['content'].strip()}")
            n += len(out[-1])
            if n >= chars:
                break
    return "\n".join(out)


def stream_vs_direct(model: str, threads: int, reps: int = 2) -> None:
    import os

    from legalrag.llm.base import ChatRequest
    from legalrag.wiring import make_llm

    llm = make_llm(model, cache=False, threads=threads).load()
    plain = make_server(str(llm.path), 4096, threads, {})

    def msgs():
        return [{"role": "system", "content": f"[{uuid.uuid4().hex}] 你是法律助手。"},
                {"role": "user", "content": "请用三句话解释什么是违约金。"}]

    for rep in range(reps):
        for mode in (["emb_chat", "plain", "emb_stream"] if rep % 2 == 0 else ["emb_stream", "plain", "emb_chat"]):
            body = {"messages": msgs(), "max_tokens": 32, "temperature": 0}
            t0 = time.perf_counter()
            if mode == "plain":
                tm = plain.handle_chat_completions(body)["timings"]
            elif mode == "emb_chat":
                tm = llm._server.handle_chat_completions(body)["timings"]
            else:
                st = llm.stream(ChatRequest(messages=tuple(body["messages"]), max_tokens=32))
                for _ in st:
                    pass
                tm = st.result.timings
            print(mode, rep, "prefill", round(tm.get("prompt_per_second", 0), 1), "decode",
                  round(tm.get("predicted_per_second", 0), 2), "wall", round(time.perf_counter() - t0, 1), "load",
                  os.getloadavg()[0], flush=True)
    llm.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", default="current,plain")
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--chars", type=int, default=1800, help="characters of statute text in the prompt")
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "data" / "stard" / "corpus.jsonl"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--stream-vs-direct", action="store_true",
                    help="compare EmbeddedLLM.chat, a plain xllamacpp server and EmbeddedLLM.stream instead")
    args = ap.parse_args()
    if args.stream_vs_direct:
        return stream_vs_direct(args.model, args.threads)

    from legalrag.llm.models import resolve_model

    gguf, _ = resolve_model(args.model, progress=False)
    names = args.configs.split(",")
    servers = {}
    for n in names:
        t0 = time.perf_counter()
        servers[n] = make_server(str(gguf), args.n_ctx, args.threads, CONFIGS[n])
        print(f"loaded {n} in {time.perf_counter() - t0:.2f} s", flush=True)
    text = prompt_text(Path(args.corpus), args.chars)
    rows = []
    for rep in range(args.reps):
        order = names if rep % 2 == 0 else names[::-1]
        for n in order:
            msgs = [{"role": "system", "content": f"[{uuid.uuid4().hex}] 你是严谨的法律助手。"},
                    {"role": "user", "content": text + "\n\n问题：用人单位不签书面劳动合同怎么办？"}]
            t0 = time.perf_counter()
            r = servers[n].handle_chat_completions({"messages": msgs, "max_tokens": args.max_tokens,
                                                    "temperature": 0})
            wall = time.perf_counter() - t0
            tm = r.get("timings", {})
            row = {"config": n, "rep": rep, "prompt_n": tm.get("prompt_n"), "prefill_tok_s": tm.get("prompt_per_second"),
                   "decode_tok_s": tm.get("predicted_per_second"), "prompt_ms": tm.get("prompt_ms"),
                   "predicted_n": tm.get("predicted_n"), "wall_s": wall}
            rows.append(row)
            print(json.dumps(row), flush=True)
    print("\nmedians:")
    summary = {}
    for n in names:
        sel = [r for r in rows if r["config"] == n]
        summary[n] = {k: statistics.median(r[k] for r in sel) for k in ("prefill_tok_s", "decode_tok_s", "wall_s")}
        print(f"  {n:12s} prefill {summary[n]['prefill_tok_s']:7.1f} tok/s  decode {summary[n]['decode_tok_s']:6.1f} "
              f"tok/s  wall {summary[n]['wall_s']:6.2f} s")
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "rows": rows, "summary": summary}, indent=2))


if __name__ == "__main__":
    main()
