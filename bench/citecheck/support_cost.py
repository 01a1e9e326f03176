"""What the support model costs per citation on this machine: one (claim, article) judgement at a time, the claim
encoded live and the article's vector cached (as it is after an index build or the first check of that article),
with the clause matching, the quote and the reason; and the fast lexical option for comparison:

    LEGALRAG_DATA=... python bench/citecheck/support_cost.py --corpus $LEGALRAG_DATA/stard/corpus.jsonl \
        --split bench/data/stard-split.json --n 100 --threads 2 --out bench/results/support-cost.json

The claims are those of lawyers' answers of the dev and test parts that cite an article (each with the article it
cites). The machine's load average is recorded beside each figure: on a shared machine it dominates.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = {"section": "citations", "rows": [
    {"configuration": "support model, cost per citation (claim encoded live, article vector cached)",
     "result": "median {metrics[full][median_ms]:.0f} ms, p90 {metrics[full][p90_ms]:.0f} ms (budget 50 ms); lexical "
               "option {metrics[lexical][median_ms]:.1f} ms",
     "cost": "2 threads", "needs": "CPU", "anchor": "lab/citations.md"}]}


class LiveClaims:
    """An encoder whose passages come from a cached encoder and whose claims are encoded live (uncached)."""

    def __init__(self, cached, live):
        self.cached, self.live = cached, live

    def encode_documents(self, texts):
        return self.cached.encode_documents(texts)

    def encode_queries(self, texts):
        return self.live.encode_queries(texts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--split", default=str(ROOT / "bench" / "data" / "stard-split.json"))
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    from legalrag.citecheck import CitationResolver
    from legalrag.citecheck.claims import find_claims
    from legalrag.citecheck.support import SupportModel, SupportScorer, passage
    from legalrag.corpora.statutes import load_statutes
    from legalrag.evaluation.record import write_result
    from legalrag.training.recipes.support import read_parts
    from legalrag.wiring import make_encoder

    docs = load_statutes(args.corpus)
    resolver = CitationResolver.from_documents(docs)
    pairs = []
    parts = read_parts(Path(args.corpus).with_name("train.jsonl"), args.split)
    for r in parts["dev"] + parts["test"]:
        text = r["answer"] if isinstance(r.get("answer"), str) else ""
        ms = resolver.extract(text)
        for m, c in zip(ms, find_claims(text, ms)):
            doc = resolver.resolve(m.citation)
            if doc is not None and c is not None:
                pairs.append((c.text, doc))
        if len(pairs) >= args.n:
            break
    pairs = pairs[:args.n]
    cached = make_encoder("stard-e5", threads=args.threads, progress=False)
    live = make_encoder("stard-e5", threads=args.threads, progress=False, cache=False)
    full = SupportScorer(LiveClaims(cached, live), SupportModel.load("full"))
    cached.encode_documents(sorted({passage(d) for _, d in pairs}))  # the article vectors, cached
    full.judge(pairs[:2])  # the first call loads the tables and the model's session
    lexical = SupportScorer(model=SupportModel.load("lexical"))
    lexical.judge(pairs[:2])
    metrics = {}
    for name, scorer in (("full", full), ("lexical", lexical)):
        times = []
        for pair in pairs:
            t = time.perf_counter()
            scorer.judge([pair])
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        metrics[name] = {"n": len(times), "load_average_1min": round(os.getloadavg()[0], 2), "median_ms": round(statistics.median(times), 2),
                         "p90_ms": round(times[int(0.9 * (len(times) - 1))], 2), "max_ms": round(times[-1], 2),
                         "mean_ms": round(statistics.fmean(times), 2)}
        print(name, metrics[name], flush=True)
    times = []
    for claim, _ in pairs:  # the part of it that is the claim's encoding
        t = time.perf_counter()
        live.encode_queries([claim[:1000]])
        times.append((time.perf_counter() - t) * 1000)
    metrics["claim_encoding_only"] = {"median_ms": round(statistics.median(times), 2),
                                      "load_average_1min": round(os.getloadavg()[0], 2)}
    write_result(args.out, metrics, name="Support model: cost per citation (one judgement at a time)",
                 machine_note=f"{args.threads} threads; shared with other jobs",
                 data=f"{len(pairs)} sentences of lawyers' answers (STARD dev part) citing an article, with it",
                 budget_ms=50, page=PAGE)


if __name__ == "__main__":
    main()
