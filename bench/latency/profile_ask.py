"""Where the seconds of one `legalrag ask` go, phase by phase, in one process.

Phases: interpreter start and imports (measured in fresh subprocesses), index open, model file check
(assembly/verification fast path), runtime start, retrieval, prompt build, exact token count (the HTTP
round-trip over the private socket), prefill and decode (the runtime's own timings), citation check (resolver
build + parsing). The call cache is not used, so nothing is answered from disk.

    python bench/latency/profile_ask.py --index INDEX_DIR --question "..." [--threads 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "未发生法律效力的征收补偿协议，是否属于行政诉讼受案范围？"


def _subprocess_seconds(code: str, reps: int = 3) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)
        best = min(best, time.perf_counter() - t0)
    return best


def _messages(question, hits, lang):
    """The answer prompt as `legalrag ask` builds it (the answer engine's defaults)."""
    from legalrag.answer.prompt import build_messages

    return build_messages(question, hits, lang=lang)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument("--question", default=QUESTION)
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=512)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    phases: dict[str, float] = {}
    phases["python_start_s"] = _subprocess_seconds("pass")
    phases["import_cli_s"] = _subprocess_seconds("import legalrag.cli") - phases["python_start_s"]

    t = time.perf_counter()
    from legalrag.answer.engine import question_language
    from legalrag.answer.per_index import resolver_for
    from legalrag.llm.base import ChatRequest
    from legalrag.retrieval.index import open_index
    from legalrag.retrieval.pipeline import build_pipeline
    try:
        from legalrag.wiring import make_llm
    except ImportError:  # older checkouts
        from legalrag.agents.backend import make_llm
    phases["import_ask_path_s"] = time.perf_counter() - t

    t = time.perf_counter()
    index = open_index(args.index)
    pipe = build_pipeline(index)
    phases["index_open_s"] = time.perf_counter() - t

    llm = make_llm(args.model, cache=False, threads=args.threads)
    from legalrag.llm.models import resolve_model

    t = time.perf_counter()
    resolve_model(llm.model, llm.models_dir, progress=False)
    phases["model_file_check_s"] = time.perf_counter() - t
    t = time.perf_counter()
    llm.load()
    phases["model_load_total_s"] = time.perf_counter() - t  # includes the file check again (fast path)

    t = time.perf_counter()
    hits = list(pipe.search(args.question, k=args.k))
    phases["retrieval_s"] = time.perf_counter() - t

    t = time.perf_counter()
    lang = question_language(args.question, index)
    messages = _messages(args.question, hits, lang)
    phases["prompt_build_s"] = time.perf_counter() - t

    if hasattr(llm, "count_tokens"):
        t = time.perf_counter()
        n = llm.count_tokens(messages)
        phases["token_count_http_s"] = time.perf_counter() - t
        phases["prompt_tokens_counted"] = n

    request = ChatRequest(messages=tuple(messages), max_tokens=args.max_tokens, temperature=0.0, seed=0)
    t = time.perf_counter()
    result = llm.chat(request)  # what `ask --json` does
    phases["generation_wall_s"] = time.perf_counter() - t
    tm = dict(result.timings)
    phases["prefill_s"] = tm.get("prompt_ms", 0.0) / 1000
    phases["decode_s"] = tm.get("predicted_ms", 0.0) / 1000
    phases["prompt_tokens"] = result.prompt_tokens
    phases["prompt_tokens_evaluated"] = tm.get("prompt_n", 0.0)
    phases["completion_tokens"] = result.completion_tokens
    phases["prefill_tok_s"] = tm.get("prompt_per_second", 0.0)
    phases["decode_tok_s"] = tm.get("predicted_per_second", 0.0)

    from legalrag.citecheck import check_citations

    t = time.perf_counter()
    resolver = resolver_for(index)
    phases["resolver_build_s"] = time.perf_counter() - t
    t = time.perf_counter()
    cits = check_citations(result.text, resolver, [h.id for h in hits])
    phases["citation_parse_s"] = time.perf_counter() - t
    phases["citations"] = len(cits)
    phases["threads"] = llm.n_threads
    phases["loadavg_1m"] = os.getloadavg()[0]
    for k, v in phases.items():
        print(f"{k:26s} {v:10.3f}" if isinstance(v, float) else f"{k:26s} {v:>10}")
    if args.json:
        Path(args.json).write_text(json.dumps(phases, indent=2))
    llm.close()


if __name__ == "__main__":
    main()
