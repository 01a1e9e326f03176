"""The support model's recipe (``data/citations/support_model.json``, read by ``citecheck.support``): labelled
(claim, article) pairs from STARD lawyers' answers over the frozen split, two stacked logistic models, the
thresholds chosen on dev, the figures on test. Run by ``legalrag train support-model``.

Pairs (one question gives several):

- ``sentence``: a sentence of the lawyer's answer that cites a gold article (《X》第N条) is a claim that article
  supports (positive); the same claim with hard negatives: the top ``negatives`` articles the index retrieved for
  the question that are not gold (a wrong citation an answer could have made from its evidence), and the gold
  article of the neighbouring question (the question of the same part whose words are closest, with other gold);
  never an article the lawyer's answer itself cites, nor one with the very text of a gold article.
- ``conclusion``: the whole answer (citations taken out, first 400 characters) with each gold article (positive)
  and the same negatives: the check a conclusion gets against the articles of its basis.

The models (``citecheck.support``):

- ``lexical``: logistic regression over the clause-level lexical features, fitted on the train part (no encoder
  feature, so nothing the encoder learned from those questions enters it);
- ``full``: logistic regression over ``lexical``'s logit and the encoder's cosine, fitted on the dev part, whose
  131 questions the shipped ``stard-e5`` never saw. Its threshold is chosen on out-of-fold predictions of dev
  (``folds`` folds by question), so no dev pair is scored by a model fitted on it.

Thresholds: the lowest with precision >= ``min_precision`` (on dev, out of fold for ``full``).
"""

from __future__ import annotations

import json
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

PARTS = ("train", "dev", "test")
DEFAULTS = {"encoder": "stard-e5", "negatives": 3, "neighbours": 1, "train_limit": 0, "min_precision": 0.9,
            "folds": 5, "k": 10, "sample_seed": 13}


@dataclass(frozen=True)
class SupportFit:
    """What the recipe made: the model file's content (as written), the figures by part, the pairs per part, and
    each part's pairs with their scores (for curves and comparisons)."""

    model_file: Mapping[str, Any]
    metrics: Mapping[str, Any]
    pairs: Mapping[str, Mapping[str, int]]
    hand: int
    seconds: float
    scored: Mapping[str, Any] = None  # part -> {"labels", "kinds", "full", "lexical", "features"}

    @property
    def models(self) -> Mapping[str, Any]:
        return self.model_file["models"]


def write_df(corpus: str | Path, out: Path, min_df: int = 20, log: Callable[[str], None] = print) -> None:
    """The bigram document-frequency table over the corpus's articles (df >= ``min_df``), gzipped JSON."""
    import gzip
    from collections import Counter

    from legalrag.citecheck.support import bigrams
    df: Counter = Counter()
    n, total = 0, 0
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            b = bigrams(json.loads(line)["content"][:1000])
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


def neighbours(rows: Sequence[Mapping[str, Any]]) -> dict[Any, Any]:
    """For each question, the question of ``rows`` whose words are closest (Jaccard of character bigrams) among
    those with no gold article in common."""
    from legalrag.citecheck.support import bigrams

    grams = [set(bigrams(r["query"])) for r in rows]
    gold = [{str(g) for g in r["gold_ids"]} for r in rows]
    out = {}
    for i, r in enumerate(rows):
        best, who = -1.0, None
        for j in range(len(rows)):
            if j == i or gold[i] & gold[j]:
                continue
            u = len(grams[i] | grams[j])
            s = len(grams[i] & grams[j]) / u if u else 0.0
            if s > best:
                best, who = s, rows[j]["query_id"]
        out[r["query_id"]] = who
    return out


def build_pairs(rows: Sequence[Mapping[str, Any]], resolver: Any, hits: Mapping[str, Sequence[str]],
                docs_by_id: Mapping[str, Any], negatives: int, n_neighbours: int = 1) -> list[tuple]:
    """(claim, label, kind, question_id, doc_id, negative_kind) for the questions in ``rows``; ``hits``: each
    question's retrieved article ids, best first."""
    from legalrag.citecheck.claims import claim_words, find_claims

    near = neighbours(rows) if n_neighbours else {}
    gold_of = {r["query_id"]: [str(g) for g in r["gold_ids"]] for r in rows}
    out: list[tuple] = []
    for r in rows:
        if not isinstance(r.get("answer"), str) or not r["answer"].strip():
            continue  # a few STARD records have no lawyer's answer
        gold = set(gold_of[r["query_id"]])
        ms = resolver.extract(r["answer"])
        # an article the lawyer's answer cites is no wrong citation for it, gold or not; nor is one with the very
        # text of a gold article (the same rule in two laws)
        cited = {d.id for d in (resolver.resolve(m.citation) for m in ms) if d is not None}
        same = {docs_by_id[g].text for g in gold if g in docs_by_id}
        ok = lambda h: h not in gold and h not in cited and h in docs_by_id and docs_by_id[h].text not in same  # noqa: E731
        negs = [(h, "retrieved") for h in hits.get(str(r["query_id"]), []) if ok(h)][:negatives]
        other = near.get(r["query_id"])
        taken = {h for h, _ in negs}
        negs += [(g, "neighbour") for g in gold_of.get(other, [])[:n_neighbours] if ok(g) and g not in taken]
        claims = find_claims(r["answer"], ms)
        seen = set()
        for m, c in zip(ms, claims):
            doc = resolver.resolve(m.citation)
            if doc is None or doc.id not in gold or c is None or c.kind != "sentence" or (c.text, doc.id) in seen:
                continue
            seen.add((c.text, doc.id))
            out.append((c.text, 1, "sentence", r["query_id"], doc.id, ""))
            out += [(c.text, 0, "sentence", r["query_id"], n, why) for n, why in negs]
        whole = claim_words(r["answer"], [m.span for m in ms])[:400]
        if whole:
            out += [(whole, 1, "conclusion", r["query_id"], g, "") for g in sorted(gold) if g in docs_by_id]
            out += [(whole, 0, "conclusion", r["query_id"], n, why) for n, why in negs]
    return out


def fit_logistic(X: Sequence[Mapping[str, float]], y: Sequence[int], features: Sequence[str],
                 C: float = 1.0) -> dict[str, Any]:
    """Class-balanced logistic regression over standardised features, in the model file's shape."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    A = np.array([[x[f] for f in features] for x in X], dtype=float)
    mean, scale = A.mean(0), A.std(0) + 1e-9
    lr = LogisticRegression(C=C, class_weight="balanced", max_iter=2000).fit((A - mean) / scale, y)
    return {"features": list(features), "coefficients": dict(zip(features, map(float, lr.coef_[0]))),
            "intercept": float(lr.intercept_[0]), "mean": dict(zip(features, map(float, mean))),
            "scale": dict(zip(features, map(float, scale)))}


def logit(model: Mapping[str, Any], x: Mapping[str, float]) -> float:
    z = model["intercept"] + sum(model["coefficients"][f] * (x[f] - model["mean"][f]) / model["scale"][f]
                                 for f in model["features"])
    return max(min(z, 50.0), -50.0)


def prob(model: Mapping[str, Any], x: Mapping[str, float]) -> float:
    return 1 / (1 + math.exp(-logit(model, x)))


def curve(scores: Sequence[float], labels: Sequence[int], points: int = 41) -> list[dict[str, float]]:
    """Precision and recall at ``points`` thresholds from 0 to 1."""
    from legalrag.evaluation.metrics import precision_recall_at

    out = []
    for i in range(points):
        t = i / (points - 1)
        m = precision_recall_at(scores, labels, t)
        out.append({"threshold": round(t, 4), "precision": m["precision"], "recall": m["recall"]})
    return out


def read_parts(questions: str | Path, split: str | Path) -> dict[str, list[dict]]:
    """The questions of each part: ``split`` is the frozen split's JSON (lists of query ids under train, dev and
    test) or a folder with train.jsonl, dev.jsonl and test.jsonl; ``questions`` the STARD questions' JSONL (with
    lawyers' answers) the JSON's ids name."""
    from legalrag.errors import InputError

    split = Path(split)
    if split.is_dir():
        out = {}
        for part in PARTS:
            path = split / f"{part}.jsonl"
            if not path.exists():
                raise InputError(f"the split folder has no {part}.jsonl (it needs train.jsonl, dev.jsonl and "
                                 "test.jsonl)", path=str(path))
            out[part] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return out
    try:
        ids = json.loads(split.read_text(encoding="utf-8"))
        parts = {p: set(ids[p]) for p in PARTS}
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"cannot read the split {split}: {exc}; it needs lists of query ids under "
                         "train, dev and test (bench/data/stard-split.json)", path=str(split)) from exc
    rows = [json.loads(line) for line in Path(questions).read_text(encoding="utf-8").splitlines() if line.strip()]
    return {p: [r for r in rows if r["query_id"] in parts[p]] for p in PARTS}


def read_hand(path: Optional[Path], resolver: Any) -> list[tuple]:
    """Hand-labelled claims (``claim``, ``article`` as a citation, ``supports``): reported only, never fitted."""
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
            out.append((h["claim"], int(h["supports"]), "hand", h.get("id", ""), doc.id, ""))
    return out


def _folds(pairs: Sequence[tuple], k: int, seed: int) -> list[int]:
    qs = sorted({p[3] for p in pairs}, key=str)
    random.Random(seed).shuffle(qs)
    fold = {q: i % k for i, q in enumerate(qs)}
    return [fold[p[3]] for p in pairs]


def support_model(corpus: str | Path, split: str | Path, index: Any, out: str | Path, *, encoder: Any = None,
                  encoder_name: str = DEFAULTS["encoder"], negatives: int = DEFAULTS["negatives"],
                  train_limit: int = DEFAULTS["train_limit"], min_precision: float = DEFAULTS["min_precision"],
                  folds: int = DEFAULTS["folds"], fit_kinds: Sequence[str] = ("sentence", "conclusion"),
                  questions: Optional[str | Path] = None,
                  hand: Optional[str | Path] = None, cache: Optional[str | Path] = None,
                  df: Optional[str | Path] = None, command: str = "",
                  log: Callable[[str], None] = print) -> SupportFit:
    """Fit the support models and write them to ``out`` (atomically, the shipped format). ``split``: the frozen
    split (its JSON of ids, with ``questions`` the STARD questions' JSONL; or a folder of the three parts);
    ``index``: an open index over ``corpus`` (or a callable returning one, called only when hits are missing);
    ``encoder``: the encoder of the cosine (None: the lexical model only); ``train_limit``: questions sampled from
    train (0: all); ``cache``: a JSON file of the retrieved ids and the pairs (a rerun resumes); ``df``: the bigram
    table (written from the corpus when missing; default: the shipped one)."""
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
    rows = read_parts(questions or Path(corpus).with_name("train.jsonl"), split)
    if train_limit:
        rows["train"] = random.Random(DEFAULTS["sample_seed"]).sample(rows["train"],
                                                                      min(train_limit, len(rows["train"])))
    cache_path = Path(cache) if cache is not None else None
    state: dict[str, Any] = (json.loads(cache_path.read_text(encoding="utf-8"))
                             if cache_path is not None and cache_path.exists() else {})
    hits: dict[str, list[str]] = state.get("hits", {})
    missing = [r for p in PARTS for r in rows[p] if str(r["query_id"]) not in hits]
    if missing:
        idx = index() if callable(index) else index
        from legalrag.retrieval.pipeline import build_pipeline

        pipeline = build_pipeline(idx)
        for n, r in enumerate(missing, 1):
            hits[str(r["query_id"])] = [h.id for h in pipeline.search(r["query"], k=DEFAULTS["k"])]
            if cache_path is not None and (n % 200 == 0 or n == len(missing)):
                atomic_write_text(cache_path, json.dumps({"hits": hits}, ensure_ascii=False))
        log(f"retrieved for {len(missing)} questions")
    parts = {p: build_pairs(rows[p], resolver, hits, by_id, negatives, DEFAULTS["neighbours"]) for p in PARTS}
    for p in PARTS:
        log(f"{p}: {len(parts[p])} pairs ({sum(q[1] for q in parts[p])} positive)")
    for part in ("train", "dev"):  # the fits and the thresholds need both labels
        if not any(q[1] for q in parts[part]) or all(q[1] for q in parts[part]):
            raise InputError(f"the {part} part gave no positive or no negative pair ({len(parts[part])} pairs): "
                             "the split's questions need lawyers' answers citing their gold articles",
                             path=str(split))
    hand_pairs = read_hand(Path(hand) if hand else None, resolver)
    if hand_pairs:
        parts["hand"] = hand_pairs
    scorer = SupportScorer(encoder=encoder, idf=BigramIdf.load(df_path))
    cosine = encoder is not None
    feats = {}
    for part, pairs in parts.items():
        t = time.time()
        feats[part] = scorer.features([(q[0], by_id[q[4]]) for q in pairs], cosine=cosine and part != "train")
        log(f"features {part}: {len(pairs)} pairs in {time.time() - t:.0f} s")
    y = {p: [q[1] for q in parts[p]] for p in parts}
    kinds = {p: [q[2] for q in parts[p]] for p in parts}
    fit_ix = [i for i, k in enumerate(kinds["train"]) if k in fit_kinds]
    lexical = fit_logistic([feats["train"][i] for i in fit_ix], [y["train"][i] for i in fit_ix], LEXICAL_FEATURES)
    for p in parts:
        for x in feats[p]:
            x["lexical_logit"] = logit(lexical, x)
    scores = {p: {"lexical": [prob(lexical, x) for x in feats[p]]} for p in parts}
    lexical["threshold"] = threshold_for_precision(scores["dev"]["lexical"], y["dev"], min_precision)
    models: dict[str, Any] = {"lexical": lexical}
    if cosine:
        fold = _folds(parts["dev"], folds, DEFAULTS["sample_seed"])
        oof = [0.0] * len(parts["dev"])
        for k in range(folds):
            fit_ix = [i for i, f in enumerate(fold) if f != k]
            m = fit_logistic([feats["dev"][i] for i in fit_ix], [y["dev"][i] for i in fit_ix], FULL_FEATURES)
            for i, f in enumerate(fold):
                if f == k:
                    oof[i] = prob(m, feats["dev"][i])
        full = fit_logistic(feats["dev"], y["dev"], FULL_FEATURES)
        full["base"] = "lexical"
        full["threshold"] = threshold_for_precision(oof, y["dev"], min_precision)
        models["full"] = full
        for p in parts:
            if p != "train":  # no cosine on train: the encoder was trained on those questions
                scores[p]["full"] = oof if p == "dev" else [prob(full, x) for x in feats[p]]
    metrics: dict[str, Any] = {}
    for name, m in models.items():
        res = {}
        for p in parts:
            if p == "train" and name == "full":
                continue  # no cosine on train: the encoder was trained on those questions
            s = scores[p][name]
            res[p] = precision_recall_at(s, y[p], m["threshold"])
            for kind in ("sentence", "conclusion"):
                ix = [i for i, k in enumerate(kinds[p]) if k == kind]
                if ix:
                    res[f"{p}_{kind}"] = precision_recall_at([s[i] for i in ix], [y[p][i] for i in ix], m["threshold"])
        neg = [i for i, q in enumerate(parts["test"]) if q[1] == 0]
        res["test_wrong_citation_shown_ok"] = {
            "existence_only": 1.0, "support_mark": round(sum(scores["test"][name][i] >= m["threshold"] for i in neg)
                                                         / max(len(neg), 1), 4), "n": len(neg)}
        res["test_curve"] = curve(scores["test"][name], y["test"])
        metrics[name] = res
        log(f"{name} test {res['test']} dev {res['dev']}")
    for m in models.values():
        for d in ("coefficients", "mean", "scale"):
            m[d] = {k: round(v, 6) for k, v in m[d].items()}
        m["intercept"] = round(m["intercept"], 6)
    model_file = {"about": "legalrag's support model: logistic regressions over the features of "
                           "legalrag.citecheck.support (full stacks on lexical); see data/citations/README.md "
                           "(data, licence, figures)",
                  "data": "STARD (LeCoQA split, MIT licence) lawyers' answers and gold articles, frozen split: "
                          "lexical fitted on train, full (lexical logit + encoder cosine) fitted on dev, which the "
                          "encoder never saw, its threshold chosen out of fold; thresholds the lowest with dev "
                          "precision >= %.2f; reported on test; negatives are retrieved non-gold articles and the "
                          "gold article of the neighbouring question" % min_precision,
                  "command": command, "encoder": encoder_name if cosine else None,
                  "models": models, "test": {k: metrics[k]["test"] for k in metrics}}
    atomic_write_text(out, json.dumps(model_file, ensure_ascii=False, indent=1) + "\n")
    counts = {p: {"pairs": len(v), "positives": sum(q[1] for q in v)} for p, v in parts.items()}
    scored = {p: {"labels": y[p], "kinds": kinds[p], "pairs": [(q[0], q[4]) for q in parts[p]],
                  "features": feats[p], **scores[p]} for p in parts}
    return SupportFit(model_file=model_file, metrics=metrics, pairs=counts, hand=len(hand_pairs),
                      seconds=round(time.time() - t0, 1), scored=scored)


__all__ = ["DEFAULTS", "SupportFit", "build_pairs", "curve", "fit_logistic", "logit", "neighbours", "prob",
           "read_parts", "support_model", "write_df"]
