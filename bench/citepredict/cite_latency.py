"""Citation prediction's LLM stages, before and after, case by case (issue 22): seconds, calls and tokens per
case and per stage, and whether the predictions changed (paired randomization tests on per-case F1).

    python bench/citepredict/cite_latency.py run --index indexes/judge-bm25 --cases 30 --threads 1 --out runs/cite-latency.jsonl
    python bench/citepredict/cite_latency.py summary runs/cite-latency.jsonl

``run`` loads the embedded model once (no call cache: every call is made), builds one predictor per
configuration (``--configs``: label=JSON overrides of ``CiteConfig``; by default "before" = the per-stage
prompts and one verification call per addition, "after" = case-first prompts and one batched verification
call) sharing that model, and runs every configuration on
each case in turn, alternating which goes first, so both see the same machine. Each LLM call is recorded with
its prompt kind (analysis, rerank, verify), prompt tokens, the prompt tokens the runtime actually evaluated
(the rest came from its prompt cache), completion tokens and seconds. The file is appended case by case, and a
rerun skips what it holds (resumable).

Data and selection rules as in ``bench/citepredict/bench_cite.py``: JuDGE ``test.json`` split by sorted ``text_id`` (first
200 development, the rest evaluation), selection rules calibrated on the development cases without an LLM.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

REPO = Path(__file__).resolve().parents[2]
from legalrag.evaluation.record import percentile as _pct

DATA = Path(os.environ.get("LEGALRAG_SHARED_DATA", REPO.parent / "shared" / "data")) / "judge" / "data"
DEFAULT_CONFIGS = ('before={"verify_batch": false, "case_first": false}',
                   'after={"verify_batch": true, "case_first": true}')
# how each stage's prompt opens: its system message (per-stage layout) or its user message (case-first layout)
KINDS = (("You are a legal analyst", "analysis"), ("你是法律检索的评估员", "rerank"), ("You check whether", "verify"),
         ("Task: describe", "analysis"), ("Task: rate", "rerank"), ("Task: check whether", "verify"))


class Recorder:
    """An LLM that records every call of the model it wraps (kind, tokens, evaluated tokens, seconds)."""

    def __init__(self, llm):
        self.inner, self.model_id = llm, llm.model_id
        self.calls: list[dict] = []
        self._lock = threading.Lock()

    def __getattr__(self, name: str):
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def chat(self, request):
        opening = [m["content"] for m in request.messages if m["role"] in ("system", "user")][:2]
        kind = next((k for prefix, k in KINDS for text in opening if text.startswith(prefix)), "other")
        t0 = time.perf_counter()
        result = self.inner.chat(request)
        with self._lock:
            self.calls.append({"kind": kind, "prompt": result.prompt_tokens, "completion": result.completion_tokens,
                               "evaluated": int(result.timings.get("prompt_n", result.prompt_tokens)),
                               "seconds": round(time.perf_counter() - t0, 3)})
        return result


def _setup(index_dir: str):
    from legalrag.citepredict.cases import CaseMemory
    from legalrag.citepredict.data import load_cases, split_dev_eval
    from legalrag.citepredict.evaluate import calibrate, run_cases
    from legalrag.citepredict.service import build_predictor
    from legalrag.wiring import Root

    index = Root().index(index_dir)
    dev, ev = split_dev_eval(load_cases(DATA / "test.json"), 200)
    memory = CaseMemory.build(dev)
    over = {"core_k": 2, "prior_weight": 2.0, "rerank_top": 3}
    base = build_predictor(index, train_citations=DATA / "qrels_file_train", overrides=over, cases=memory)
    rules = calibrate(run_cases(base, dev), [c.gold for c in dev])
    return index, ev, memory, over, rules


def run(args: argparse.Namespace) -> None:
    from legalrag.citepredict.evaluate import ROWS, stage_sets
    from legalrag.citepredict.service import build_predictor
    from legalrag.evaluation.metrics import set_prf
    from legalrag.wiring import make_llm, make_reranker

    configs = {}
    for spec in args.configs or DEFAULT_CONFIGS:
        label, _, js = spec.partition("=")
        configs[label] = json.loads(js or "{}")
    index, ev, memory, over, rules = _setup(args.index)
    cases = ev[args.offset: args.offset + args.cases]
    done = set()
    out = Path(args.out)
    if out.exists():
        done = {(r["id"], r["label"]) for r in map(json.loads, out.read_text(encoding="utf-8").splitlines()) if r}
    raw = make_llm(args.llm, cache=False, threads=args.threads, n_ctx=4096)
    t = time.perf_counter()
    raw.load()
    print(f"loaded {args.llm} in {time.perf_counter() - t:.1f}s ({args.threads} threads)", flush=True)
    rec = Recorder(raw)
    threshold = rules["+ similar cases"][1]
    preds = {}
    for label, cfg in configs.items():
        o = {**over, "verify": True, "analysis": True, "threshold": threshold, **cfg}
        reranker = make_reranker("llm-pointwise", index, llm=rec) if o.get("rerank_top", 3) > 0 else None
        preds[label] = build_predictor(index, train_citations=DATA / "qrels_file_train", overrides=o, llm=rec,
                                       reranker=reranker, cases=memory)
    labels = list(configs)
    out.parent.mkdir(parents=True, exist_ok=True)
    for i, case in enumerate(cases):
        order = labels if i % 2 == 0 else labels[::-1]
        for label in order:
            if (case.id, label) in done:
                continue
            rec.calls.clear()
            t0 = time.perf_counter()
            result = preds[label].predict(case.facts)
            seconds = time.perf_counter() - t0
            sets = {row: sorted(s[0]) for row, s in stage_sets([result], rules).items()}
            f1 = {row: set_prf(set(s), case.gold)[2] for row, s in sets.items()}
            row = {"id": case.id, "label": label, "position": order.index(label), "seconds": round(seconds, 2),
                   "calls": list(rec.calls), "gold": sorted(case.gold), "sets": sets, "f1": f1,
                   "verdicts": [s.action for s in result.steps if s.agent == "cite-verify"],
                   "load": os.getloadavg()[0]}
            with out.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            final = ROWS[-1][0]
            print(f"[{i + 1}/{len(cases)}] {case.id} {label}: {seconds:.1f}s, {len(rec.calls)} calls, "
                  f"F1 {f1[final]:.3f}, final {sets[final]}", flush=True)


def summary(args: argparse.Namespace) -> None:
    from legalrag.citepredict.evaluate import ROWS
    from legalrag.evaluation.compare import paired_randomization_test, sign_flips
    from legalrag.evaluation.metrics import micro_prf

    rows = [json.loads(line) for path in args.files for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip()]
    by = {}
    for r in rows:
        by.setdefault(r["label"], {})[r["id"]] = r
    labels = list(by)
    ids = sorted(set.intersection(*(set(v) for v in by.values())))
    print(f"{len(ids)} cases run by every configuration ({', '.join(labels)})\n")
    head = ("| per case | " + " | ".join(labels) + " |\n|---|" + "---|" * len(labels))
    print(head)

    def line(name, fn):
        print(f"| {name} | " + " | ".join(fn([by[lab][i] for i in ids]) for lab in labels) + " |")

    line("seconds, mean / p50 / p95", lambda rs: f"{statistics.mean(r['seconds'] for r in rs):.1f} / "
         f"{_pct([r['seconds'] for r in rs], 50):.1f} / {_pct([r['seconds'] for r in rs], 95):.1f}")
    line("LLM calls", lambda rs: f"{statistics.mean(len(r['calls']) for r in rs):.2f}")
    line("prompt tokens (evaluated)", lambda rs: f"{statistics.mean(sum(c['prompt'] for c in r['calls']) for r in rs):.0f} "
         f"({statistics.mean(sum(c['evaluated'] for c in r['calls']) for r in rs):.0f})")
    line("completion tokens", lambda rs: f"{statistics.mean(sum(c['completion'] for c in r['calls']) for r in rs):.0f}")
    for kind in ("analysis", "rerank", "verify"):
        line(f"{kind}: calls, s (summed over calls), prompt (evaluated) + completion tokens",
             lambda rs, k=kind: (f"{statistics.mean(sum(c['kind'] == k for c in r['calls']) for r in rs):.2f}, "
                                 f"{statistics.mean(sum(c['seconds'] for c in r['calls'] if c['kind'] == k) for r in rs):.1f} s, "
                                 f"{statistics.mean(sum(c['prompt'] for c in r['calls'] if c['kind'] == k) for r in rs):.0f} "
                                 f"({statistics.mean(sum(c['evaluated'] for c in r['calls'] if c['kind'] == k) for r in rs):.0f}) + "
                                 f"{statistics.mean(sum(c['completion'] for c in r['calls'] if c['kind'] == k) for r in rs):.0f}"))
    # concurrent calls (per-addition verification runs up to 4 at once) overlap: the stage's wall time is the
    # case's time less the other stages' calls (retrieval and the non-LLM stages take hundredths of a second)
    line("verification stage, wall s", lambda rs: f"{statistics.mean(r['seconds'] - sum(c['seconds'] for c in r['calls'] if c['kind'] != 'verify') for r in rs):.1f}")
    line("mean load average", lambda rs: f"{statistics.mean(r['load'] for r in rs):.2f}")
    print()
    signs = sign_flips(len(ids), 10_000)
    a = labels[0]
    print(f"| stage (micro P / R / F1) | " + " | ".join(labels) + f" | per-case F1 diff vs {a} (p) |")
    print("|---|" + "---|" * (len(labels) + 1))
    for row, _ in ROWS:
        cells = []
        for lab in labels:
            m = micro_prf([set(by[lab][i]["sets"][row]) for i in ids], [set(by[lab][i]["gold"]) for i in ids])
            cells.append(f"{m['precision']:.3f} / {m['recall']:.3f} / {m['f1']:.3f}")
        diffs = []
        for lab in labels[1:]:
            fa = [by[lab][i]["f1"][row] for i in ids]
            fb = [by[a][i]["f1"][row] for i in ids]
            p = paired_randomization_test(fa, fb, signs=signs)
            diffs.append(f"{lab}: {(sum(fa) - sum(fb)) / len(ids):+.3f} ({p:.3f})")
        print(f"| {row} | " + " | ".join(cells) + " | " + "; ".join(diffs) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--index", required=True, help="JuDGE statute index (legalrag index build --retriever bm25)")
    r.add_argument("--cases", type=int, default=30, help="evaluation cases, in sorted id order")
    r.add_argument("--offset", type=int, default=0, help="skip this many evaluation cases first")
    r.add_argument("--llm", default="qwen2.5-1.5b")
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("--configs", nargs="*", help='label=JSON CiteConfig overrides, e.g. after=\'{"verify_batch": true}\'')
    r.add_argument("--out", required=True)
    s = sub.add_parser("summary")
    s.add_argument("files", nargs="+")
    args = ap.parse_args()
    run(args) if args.cmd == "run" else summary(args)


if __name__ == "__main__":
    main()
