"""The citation support model's recipe (``data/citations/support_model.json``, read by ``citecheck.support``):
labelled (claim, article) pairs from STARD lawyers' answers, logistic regression on the train part of the frozen
split, the threshold chosen on dev, precision and recall on test. Run by ``legalrag train support-model``.

Pairs (one question gives several):

- ``sentence``: a sentence of the lawyer's answer that cites a gold article (《X》第N条) is a claim that article
  supports (positive); the same claim paired with articles retrieved for the question that are not gold is a
  negative (a wrong citation an answer could have made from its evidence).
- ``conclusion``: the whole answer (citations taken out, first 400 characters) with each gold article
  (positive) and with retrieved non-gold articles (negative): the check a conclusion that cites nothing gets
  against the articles of its basis.

Negatives are the top retrieved non-gold articles of the index's default retriever, ``negatives`` per claim.
Features come from ``legalrag.citecheck.support`` (the encoder gives the cosine; without one only the lexical
model is fitted). Two models are fitted, ``full`` (cosine + lexical) and ``lexical``; both go into the model file.
"""

from __future__ import annotations

import gzip
import json
import math
import random
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

PARTS = ("train", "dev", "test")
DEFAULTS = {"encoder": "stard-e5", "negatives": 3, "train_limit": 0, "min_precision": 0.9, "sample_seed": 13}


@dataclass(frozen=True)
class SupportFit:
    """What the recipe made: the model file's content (as written), the figures by part, the pairs per part."""

    model_file: Mapping[str, Any]
    metrics: Mapping[str, Any]
    pairs: Mapping[str, Mapping[str, int]]
    hand: int
    seconds: float

    @property
    def models(self) -> Mapping[str, Any]:
        return self.model_file["models"]


def write_df(corpus: str | Path, out: Path, min_df: int = 20, log: Callable[[str], None] = print) -> None:
    """The bigram document-frequency table over the corpus's articles (df >= ``min_df``), gzipped JSON."""
    from legalrag.citecheck.support import MAX_ARTICLE_CHARS, bigrams
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
    out = Path(out)
    tmp = out.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as f:
        json.dump(table, f, ensure_ascii=False, separators=(",", ":"))
    tmp.replace(out)
    log(f"bigram table: {len(table['df'])} bigrams -> {out}")


def build_pairs(rows: Sequence[Mapping[str, Any]], resolver: Any, index: Any, docs_by_id: Mapping[str, Any],
                negatives: int, k: int = 10) -> list[tuple]:
    """(claim, article_text, label, kind, question_id, doc_id) for the questions in ``rows``."""
    from legalrag.citecheck.claims import claim_words, find_claims

    retriever = index.retriever()
    out: list[tuple] = []
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


def fit_logistic(X: Sequence[Mapping[str, float]], y: Sequence[int], features: Sequence[str]) -> dict[str, Any]:
    """Class-balanced logistic regression over standardised features, in the model file's shape."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    A = np.array([[x[f] for f in features] for x in X], dtype=float)
    mean, scale = A.mean(0), A.std(0) + 1e-9
    lr = LogisticRegression(C=1.0, class_weight="balanced", max_iter=1000).fit((A - mean) / scale, y)
    return {"features": list(features), "coefficients": dict(zip(features, map(float, lr.coef_[0]))),
            "intercept": float(lr.intercept_[0]), "mean": dict(zip(features, map(float, mean))),
            "scale": dict(zip(features, map(float, scale)))}


def prob(model: Mapping[str, Any], x: Mapping[str, float]) -> float:
    z = model["intercept"] + sum(model["coefficients"][f] * (x[f] - model["mean"][f]) / model["scale"][f]
                                 for f in model["features"])
    return 1 / (1 + math.exp(-max(min(z, 50), -50)))


def read_split(split: Path, part: str) -> list[dict]:
    from legalrag.errors import InputError

    path = Path(split) / f"{part}.jsonl"
    if not path.exists():
        raise InputError(f"the split folder has no {part}.jsonl (it needs train.jsonl, dev.jsonl and test.jsonl)",
                         path=str(path))
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_hand(path: Optional[Path], resolver: Any) -> list[tuple]:
    """Hand-labelled claims (``claim``, ``article`` as a citation, ``supports``): a fourth part, reported only."""
    if path is None or not Path(path).exists():
        return []
    from legalrag.errors import InputError

    out = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate((ln for ln in f if ln.strip()), 1):
            h = json.loads(line)
            found = resolver.extract(h["article"])
            doc = resolver.resolve(found[0].citation) if found else None
            if doc is None:
                raise InputError(f"the article {h['article']!r} is not in the corpus", path=str(path), line=i,
                                 field="article")
            out.append((h["claim"], doc.text, int(h["supports"]), "hand", h.get("id", ""), doc.id))
    return out


def support_model(corpus: str | Path, split: str | Path, index: Any, out: str | Path, *, encoder: Any = None,
                  encoder_name: str = DEFAULTS["encoder"], negatives: int = DEFAULTS["negatives"],
                  train_limit: int = DEFAULTS["train_limit"], min_precision: float = DEFAULTS["min_precision"],
                  hand: Optional[str | Path] = None, cache: Optional[str | Path] = None,
                  df: Optional[str | Path] = None, command: str = "",
                  log: Callable[[str], None] = print) -> SupportFit:
    """Fit the support model and write it to ``out`` (atomically, the shipped format). ``index``: an open index
    over ``corpus`` (or a callable returning one, called only when pairs are to be built); ``encoder``: the
    encoder of the cosine (None: the lexical model only); ``train_limit``: questions sampled from train (seed
    13; 0: all); ``cache``: a JSON file of the pairs, written after each part (a rerun resumes); ``df``: the
    bigram table (written from the corpus when missing; default: the shipped one)."""
    from legalrag.citecheck import CitationResolver
    from legalrag.citecheck.support import DF_PATH, FULL_FEATURES, LEXICAL_FEATURES, BigramIdf, SupportScorer
    from legalrag.corpora.statutes import load_statutes
    from legalrag.errors import InputError
    from legalrag.evaluation.metrics import precision_recall_at, threshold_for_precision
    from legalrag.io import atomic_write_text

    if negatives < 1:
        raise InputError(f"negatives must be at least 1, got {negatives}", field="negatives")
    t0 = time.time()
    df_path = Path(df) if df is not None else DF_PATH
    if not df_path.exists():
        write_df(corpus, df_path, log=log)
    docs = load_statutes(corpus)
    by_id = {d.id: d for d in docs}
    resolver = CitationResolver.from_documents(docs)
    cache_path = Path(cache) if cache is not None else None
    parts: dict[str, list] = (json.loads(cache_path.read_text(encoding="utf-8"))
                              if cache_path is not None and cache_path.exists() else {})
    if set(parts) != set(PARTS):
        idx = index() if callable(index) else index
        for part in PARTS:
            if part in parts:
                continue
            rows = read_split(Path(split), part)
            if part == "train" and train_limit:
                rows = random.Random(DEFAULTS["sample_seed"]).sample(rows, min(train_limit, len(rows)))
            parts[part] = build_pairs(rows, resolver, idx, by_id, negatives)
            log(f"{part}: {len(parts[part])} pairs ({sum(p[2] for p in parts[part])} positive)")
            if cache_path is not None:
                atomic_write_text(cache_path, json.dumps(parts, ensure_ascii=False))  # resumable by part
    for part in ("train", "dev"):  # the fit and the threshold need both labels
        if not any(p[2] for p in parts[part]) or all(p[2] for p in parts[part]):
            raise InputError(f"the {part} part gave no positive or no negative pair ({len(parts[part])} pairs): "
                             "the split's questions need lawyers' answers citing their gold articles",
                             path=str(Path(split) / f"{part}.jsonl"))
    parts = {p: [tuple(q) for q in parts[p]] for p in PARTS}
    hand_pairs = read_hand(Path(hand) if hand else None, resolver)
    missing = [p[5] for ps in parts.values() for p in ps if p[5] not in by_id]
    if missing:
        raise InputError(f"{len(missing)} pairs name articles that are not in the corpus (e.g. {missing[0]!r}): "
                         "the pairs cache was made over another corpus; delete it", path=str(cache_path))
    if hand_pairs:
        parts["hand"] = hand_pairs
    scorer = SupportScorer(encoder=encoder, idf=BigramIdf.load(df_path))
    cosine = encoder is not None
    feats = {}
    for part, pairs in parts.items():
        t = time.time()
        feats[part] = scorer.features([(p[0], by_id[p[5]]) for p in pairs], cosine=cosine)
        log(f"features {part}: {len(pairs)} pairs in {time.time() - t:.0f} s")
    models, metrics = {}, {}
    kinds = (("full", FULL_FEATURES), ("lexical", LEXICAL_FEATURES)) if cosine else (("lexical", LEXICAL_FEATURES),)
    y = {p: [q[2] for q in parts[p]] for p in parts}
    for name, features in kinds:
        m = fit_logistic(feats["train"], y["train"], features)
        ps = {p: [prob(m, x) for x in feats[p]] for p in parts}
        m["threshold"] = threshold_for_precision(ps["dev"], y["dev"], min_precision)
        models[name] = m
        res = {}
        for p in parts:
            res[p] = precision_recall_at(ps[p], y[p], m["threshold"])
            for kind in ("sentence", "conclusion"):
                ix = [i for i, q in enumerate(parts[p]) if q[3] == kind]
                if ix:
                    res[f"{p}_{kind}"] = precision_recall_at([ps[p][i] for i in ix], [y[p][i] for i in ix],
                                                             m["threshold"])
        # a wrong citation (retrieved, not gold) cited for a claim: existence-only marked every one OK
        neg = [i for i, q in enumerate(parts["test"]) if q[2] == 0]
        res["test_wrong_citation_shown_ok"] = {
            "existence_only": 1.0, "support_mark": round(sum(ps["test"][i] >= m["threshold"] for i in neg)
                                                         / max(len(neg), 1), 4), "n": len(neg)}
        metrics[name] = res
        log(f"{name} " + json.dumps(res, ensure_ascii=False))
    model_file = {"about": "legalrag's support model: logistic regression over the features of "
                           "legalrag.citecheck.support; see data/citations/README.md (data, licence, figures)",
                  "data": "STARD (LeCoQA split, MIT licence) lawyers' answers and gold articles, frozen split: fitted "
                          "on train, threshold on dev (lowest with precision >= %.2f), reported on test; negatives "
                          "are retrieved non-gold articles" % min_precision,
                  "command": command, "encoder": encoder_name,
                  "models": models, "test": {k: metrics[k]["test"] for k in metrics}}
    atomic_write_text(out, json.dumps(model_file, ensure_ascii=False, indent=1) + "\n")
    counts = {p: {"pairs": len(v), "positives": sum(q[2] for q in v)} for p, v in parts.items()}
    return SupportFit(model_file=model_file, metrics=metrics, pairs=counts, hand=len(hand_pairs),
                      seconds=round(time.time() - t0, 1))


__all__ = ["DEFAULTS", "SupportFit", "build_pairs", "fit_logistic", "prob", "support_model", "write_df"]
