"""Calibrate the support model: labelled (claim, article) pairs from STARD lawyers' answers, logistic
regression on the train part of the frozen split, threshold chosen on dev, precision/recall on test.

Pairs (one question gives several):

- ``sentence``: a sentence of the lawyer's answer that cites a gold article (《X》第N条) is a claim that article
  supports (positive); the same claim paired with articles retrieved for the question that are not gold is a
  negative (a wrong citation an answer could have made from its evidence).
- ``conclusion``: the whole answer (citations taken out, first 400 characters) with each gold article
  (positive) and with retrieved non-gold articles (negative): the check a conclusion that cites nothing gets
  against the articles of its basis.

Negatives are the top retrieved non-gold articles of ``--index`` (BM25 over the 55,515-article corpus, or the
stard-ft hybrid index when given), ``--negatives`` per claim. Features come from
``legalrag.citecheck.support`` (the shipped ``stard-e5`` for the cosine). Writes the model file, the bigram
table and a results file:

    LEGALRAG_DATA=... python bench/citecheck/support_calibrate.py --corpus $LEGALRAG_DATA/stard/corpus.jsonl \
        --split runs/stard-split --index indexes/stard-bm25 --train-limit 600 \
        --out-model src/legalrag/data/citations/support_model.json --results bench/results/support-stard.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import time
from collections import Counter
from pathlib import Path

from legalrag.citecheck import CitationResolver
from legalrag.citecheck.claims import claim_words, find_claims
from legalrag.citecheck.support import (
    DF_PATH,
    FULL_FEATURES,
    LEXICAL_FEATURES,
    MAX_ARTICLE_CHARS,
    SupportScorer,
    bigrams,
)

PAGE = {"section": "citations", "rows": [{"configuration": "support mark (stard-e5 cosine + lexical), STARD test part, all labelled pairs", "default": True, "result": "precision {metrics[full][test][precision]:.2f}, recall {metrics[full][test][recall]:.2f} (target P >= 0.9 at R >= 0.7: missed)", "cost": "CPU", "needs": "CPU", "anchor": "lab/citations.md"}, {"configuration": "support mark, claims that cite their article in the sentence (test)", "result": "precision {metrics[full][test_sentence][precision]:.2f}, recall {metrics[full][test_sentence][recall]:.2f}", "cost": "CPU", "needs": "CPU", "anchor": "lab/citations.md"}, {"configuration": "support mark, 32 hand-labelled claims (data we wrote)", "result": "precision {metrics[full][hand][precision]:.2f}, recall {metrics[full][hand][recall]:.2f}", "cost": "CPU", "needs": "CPU", "anchor": "lab/citations.md"}, {"configuration": "wrong citation (retrieved, not gold) shown ✓", "result": "existence only {metrics[full][test_wrong_citation_shown_ok][existence_only]:.2f} -> support mark {metrics[full][test_wrong_citation_shown_ok][support_mark]:.3f}", "cost": "CPU", "needs": "CPU", "anchor": "lab/citations.md"}]}  # the results page rows


def write_df(corpus: str, out: Path, min_df: int = 20) -> None:
    df: Counter = Counter()
    n, total = 0, 0
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            b = bigrams(json.loads(line)["content"][:MAX_ARTICLE_CHARS])
            df.update(set(b))
            n, total = n + 1, total + len(b)
    table = {"about": f"bigram document frequencies over {n} statute articles (df >= {min_df}); "
                      "legalrag.citecheck.support", "n_docs": n, "min_df": min_df, "avg_len": total / n,
             "df": {k: v for k, v in sorted(df.items()) if v >= min_df}}
    tmp = out.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as f:
        json.dump(table, f, ensure_ascii=False, separators=(",", ":"))
    tmp.replace(out)
    print(f"bigram table: {len(table['df'])} bigrams -> {out}", flush=True)


def build_pairs(rows, resolver, index, docs_by_id, negatives: int, k: int = 10):
    """(claim, article_text, label, kind, question_id, doc_id) for the questions in ``rows``."""
    from legalrag.retrieval.pipeline import Pipeline  # noqa: F401 (the index's default retriever is used)

    retriever = index.retriever()
    out = []
    for r in rows:
        if not isinstance(r.get("answer"), str) or not r["answer"].strip():
            continue  # a few STARD records have no lawyer's answer
        gold = {str(g) for g in r["gold_ids"]}
        hits = retriever.retrieve(r["query"], k)
        negs = [h.document for h in hits if h.id not in gold][:negatives]
        ms = resolver.extract(r["answer"])
        claims = find_claims(r["answer"], ms)
        for m, c in zip(ms, claims):
            doc = resolver.resolve(m.citation)
            if doc is None or doc.id not in gold or c is None or c.kind != "sentence":
                continue
            out.append((c.text, doc.text, 1, "sentence", r["query_id"], doc.id))
            out += [(c.text, n.text, 0, "sentence", r["query_id"], n.id) for n in negs]
        whole = claim_words(r["answer"], [m.span for m in ms])[:400]
        if whole:
            out += [(whole, docs_by_id[g].text, 1, "conclusion", r["query_id"], g) for g in gold if g in docs_by_id]
            out += [(whole, n.text, 0, "conclusion", r["query_id"], n.id) for n in negs]
    return out


def fit(X, y, features):
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    A = np.array([[x[f] for f in features] for x in X], dtype=float)
    mean, scale = A.mean(0), A.std(0) + 1e-9
    lr = LogisticRegression(C=1.0, class_weight="balanced", max_iter=1000).fit((A - mean) / scale, y)
    return {"features": list(features), "coefficients": dict(zip(features, map(float, lr.coef_[0]))),
            "intercept": float(lr.intercept_[0]), "mean": dict(zip(features, map(float, mean))),
            "scale": dict(zip(features, map(float, scale)))}


def prob(model, x):
    z = model["intercept"] + sum(model["coefficients"][f] * (x[f] - model["mean"][f]) / model["scale"][f]
                                 for f in model["features"])
    return 1 / (1 + math.exp(-max(min(z, 50), -50)))


def pr(ps, y, t):
    from legalrag.evaluation.metrics import precision_recall_at

    return precision_recall_at(ps, y, t)


def choose_threshold(ps, y, min_precision):
    """The lowest threshold whose precision on these pairs is at least ``min_precision`` (most recall)."""
    from legalrag.evaluation.metrics import threshold_for_precision

    return threshold_for_precision(ps, y, min_precision)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--split", required=True, help="folder with train.jsonl, dev.jsonl, test.jsonl")
    ap.add_argument("--index", required=True)
    ap.add_argument("--encoder", default="stard-e5")
    ap.add_argument("--negatives", type=int, default=3)
    ap.add_argument("--train-limit", type=int, default=0)
    ap.add_argument("--min-precision", type=float, default=0.9)
    ap.add_argument("--hand", default=str(Path(__file__).resolve().parents[1] / "data" / "support_hand.jsonl"))
    ap.add_argument("--cache", default="runs/support-pairs.json")
    ap.add_argument("--out-model", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--df", default=str(DF_PATH))
    ap.add_argument("--pairs-only", action="store_true", help="build and cache the pairs, then stop")
    ap.add_argument("--no-cosine", action="store_true", help="fit the lexical model only (no encoder)")
    args = ap.parse_args()
    t0 = time.time()
    if not Path(args.df).exists():
        write_df(args.corpus, Path(args.df))
    from legalrag.corpora.statutes import load_statutes
    from legalrag.evaluation.record import command as record_command
    from legalrag.evaluation.record import write_result
    from legalrag.wiring import Root, make_encoder

    docs = load_statutes(args.corpus)
    by_id = {d.id: d for d in docs}
    resolver = CitationResolver.from_documents(docs)
    cache = Path(args.cache)
    parts = json.loads(cache.read_text(encoding="utf-8")) if cache.exists() else {}
    if set(parts) != {"train", "dev", "test"}:
        index = Root().index(args.index)
        for part in ("train", "dev", "test"):
            if part in parts:
                continue
            rows = [json.loads(l) for l in open(Path(args.split) / f"{part}.jsonl", encoding="utf-8")]
            if part == "train" and args.train_limit:
                rows = random.Random(13).sample(rows, min(args.train_limit, len(rows)))
            parts[part] = build_pairs(rows, resolver, index, by_id, args.negatives)
            print(f"{part}: {len(parts[part])} pairs ({sum(p[2] for p in parts[part])} positive)", flush=True)
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps(parts, ensure_ascii=False), encoding="utf-8")  # resumable by part
    if args.pairs_only:
        return
    hand = [json.loads(l) for l in open(args.hand, encoding="utf-8")] if Path(args.hand).exists() else []
    hand_pairs = []
    for h in hand:
        doc = resolver.resolve(resolver.extract(h["article"])[0].citation)
        hand_pairs.append((h["claim"], doc.text, int(h["supports"]), "hand", h.get("id", ""), doc.id))
    assert all(p[5] in by_id for ps in parts.values() for p in ps) and all(p[5] in by_id for p in hand_pairs)
    parts["hand"] = hand_pairs
    scorer = SupportScorer(encoder=None if args.no_cosine else make_encoder(args.encoder, progress=True))
    feats = {}
    for part, pairs in parts.items():
        t = time.time()
        feats[part] = scorer.features([(p[0], by_id[p[5]]) for p in pairs], cosine=not args.no_cosine)
        print(f"features {part}: {len(pairs)} pairs in {time.time() - t:.0f} s", flush=True)
    models, metrics = {}, {}
    kinds = (("lexical", LEXICAL_FEATURES),) if args.no_cosine else (("full", FULL_FEATURES), ("lexical", LEXICAL_FEATURES))
    for name, features in kinds:
        y = {p: [q[2] for q in parts[p]] for p in parts}
        m = fit(feats["train"], y["train"], features)
        ps = {p: [prob(m, x) for x in feats[p]] for p in parts}
        m["threshold"] = choose_threshold(ps["dev"], y["dev"], args.min_precision)
        models[name] = m
        res = {}
        for p in parts:
            res[p] = pr(ps[p], y[p], m["threshold"])
            for kind in ("sentence", "conclusion"):
                idx = [i for i, q in enumerate(parts[p]) if q[3] == kind]
                if idx:
                    res[f"{p}_{kind}"] = pr([ps[p][i] for i in idx], [y[p][i] for i in idx], m["threshold"])
        # a wrong citation (retrieved, not gold) cited for a claim: existence-only marked every one OK
        neg = [i for i, q in enumerate(parts["test"]) if q[2] == 0]
        res["test_wrong_citation_shown_ok"] = {
            "existence_only": 1.0, "support_mark": round(sum(ps["test"][i] >= m["threshold"] for i in neg)
                                                         / max(len(neg), 1), 4), "n": len(neg)}
        metrics[name] = res
        print(name, json.dumps(res, ensure_ascii=False), flush=True)
    model_file = {"about": "legalrag's support model: logistic regression over the features of "
                           "legalrag.citecheck.support; see data/citations/README.md (data, licence, figures)",
                  "data": "STARD (LeCoQA split, MIT licence) lawyers' answers and gold articles, frozen split: fitted "
                          "on train, threshold on dev (lowest with precision >= %.2f), reported on test; negatives "
                          "are retrieved non-gold articles" % args.min_precision,
                  "command": record_command(), "encoder": args.encoder,
                  "models": models, "test": {k: metrics[k]["test"] for k in metrics}}
    tmp = Path(args.out_model).with_suffix(".tmp")
    tmp.write_text(json.dumps(model_file, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    tmp.replace(args.out_model)
    counts = {p: {"pairs": len(v), "positives": sum(q[2] for q in v)} for p, v in parts.items()}
    write_result(args.results, metrics, name="Support marks: precision and recall of 'this article supports this sentence'",
                 machine_note="shared with other jobs",
                 data="STARD lawyers' answers + gold articles, frozen split (train fit / dev threshold / test "
                      f"report); negatives: top retrieved non-gold articles of {args.index}; 'hand': "
                      f"{len(hand)} claims written by the legalrag authors (data we wrote)",
                 pairs=counts, models=models, seconds=round(time.time() - t0, 1), page=PAGE)
    print(f"wrote {args.out_model} and {args.results}", flush=True)


if __name__ == "__main__":
    main()
