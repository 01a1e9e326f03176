"""The scope model's recipe (``data/models/scope/``, read by ``answer.scope``): a logistic regression that tells
a legal question about Chinese national law from a message outside the corpus's scope. Run by
``legalrag train scope-model``.

Data: a message file (``bench/data/scope-messages.jsonl``: ``id``, ``text``, ``lang``, ``label`` in/out,
``kind``, ``split`` train/dev/test, the split fixed in the file) and the STARD dev questions of the frozen split
(in scope; the stard-e5 encoder never saw them, so their retrieval scores are fair features; the train questions'
are not). Each message is searched with the index's search function (the shipped national index's stard-e5
component), so that its retrieval scores are features.

Fitting: the ``full`` and ``text`` models (``answer.scope``), class-balanced, on the train messages and the STARD
dev questions, for each regularisation strength ``C`` of ``c_grid``. The STARD dev questions are cross-fitted
(``stard_folds``): each is scored by a model fitted without its fold. The threshold of each model is the lowest
that declines at most ``max_in_declined`` of the in-scope dev pool (the dev messages in scope, and the STARD dev
questions' out-of-fold scores); the ``C`` that declines the most out-of-scope dev messages is kept. The test part
is not read here (the benchmark ``bench/answers/bench_scope.py`` reports on it).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from legalrag.errors import InputError

LABELS = ("in", "out")
SPLITS = ("train", "dev", "test")
DEFAULTS = {"c_grid": (0.3, 1.0, 3.0, 10.0), "max_in_declined": 0.0, "k": 5, "stard_folds": 5}
LICENCE = ("Released with legalrag under its licence. Fitted on messages written for legalrag (no data set), the "
           "131 STARD dev questions of the frozen split (MIT licence, Copyright (c) 2024 THUIR / (c) 2025 Weihang Su; "
           "keep the notice) and the retrieval scores of the shipped national index (public law texts, PRC Copyright "
           "Law art. 5); the model stores n-gram weights, no message or question text.")


@dataclass(frozen=True)
class ScopeFit:
    """What the recipe made: the model file's content, the card, the figures on train and dev."""

    model_file: Mapping[str, Any]
    card: Mapping[str, Any]
    metrics: Mapping[str, Any]
    seconds: float


def read_messages(path: str | Path) -> list[dict[str, Any]]:
    """The message file's rows, each checked (the line and field named on an error)."""
    rows, seen = [], set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError as exc:
                raise InputError(f"{path}:{n}: not JSON ({exc})", path=str(path)) from exc
            for key, allowed in (("text", None), ("label", LABELS), ("split", SPLITS), ("kind", None),
                                 ("id", None)):
                value = r.get(key)
                if not isinstance(value, str) or not value.strip() or (allowed and value not in allowed):
                    want = " or ".join(allowed) if allowed else "a non-empty string"
                    raise InputError(f"{path}:{n}: field {key!r} is {value!r}; it must be {want}", path=str(path),
                                     field=key)
            if r["id"] in seen:
                raise InputError(f"{path}:{n}: id {r['id']!r} appears twice; give each message its own id",
                                 path=str(path), field="id")
            seen.add(r["id"])
            rows.append(r)
    if not rows:
        raise InputError(f"{path}: no messages", path=str(path))
    return rows


def stard_questions(queries: str | Path, split: str | Path, part: str) -> list[str]:
    """The STARD questions of ``part`` of the frozen split (``split``: bench/data/stard-split.json)."""
    ids = json.loads(Path(split).read_text(encoding="utf-8")).get(part)
    if not isinstance(ids, list):
        raise InputError(f"{split}: no {part!r} list of query ids", path=str(split), field=part)
    by_id = {}
    with open(queries, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                by_id[r["query_id"]] = r["query"]
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise InputError(f"{queries}: {len(missing)} query ids of the {part} part are missing (first {missing[0]}); "
                         "pass STARD's train.jsonl", path=str(queries))
    return [by_id[i] for i in ids]


def raw_features(texts: Sequence[str], search: Callable[[str, int], Sequence[Any]], scorer: str,
                 k: int = 5) -> list[dict[str, float]]:
    from legalrag.answer.scope import features

    return [features(t, list(search(t, k)), scorer) for t in texts]


def standardiser(rows: Sequence[Mapping[str, float]]) -> tuple[dict[str, float], dict[str, float]]:
    """Mean and scale of each numeric feature over the rows that have it (the retrieval ones: scored rows)."""
    from legalrag.answer.scope import NUMERIC

    mean, scale = {}, {}
    for k in NUMERIC:
        vals = [r[k] for r in rows if k in r]
        if not vals:
            continue
        m = sum(vals) / len(vals)
        mean[k] = m
        scale[k] = math.sqrt(sum((v - m) ** 2 for v in vals) / len(vals)) or 1.0
    return mean, scale


def fit_one(rows: Sequence[Mapping[str, float]], y: Sequence[int], C: float, uses_scores: bool) -> Any:
    """A class-balanced logistic regression; returns an ``answer.scope.ScopeModel`` (threshold 0.5 for now)."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    from legalrag.answer.scope import ScopeModel

    mean, scale = standardiser(rows)
    blank = ScopeModel({}, 0.0, mean, scale, 0.5, uses_scores)
    vec = DictVectorizer(sparse=True)
    X = vec.fit_transform([blank.vector(r) for r in rows])
    lr = LogisticRegression(C=C, class_weight="balanced", max_iter=5000).fit(X, list(y))
    weights = dict(zip(vec.get_feature_names_out(), map(float, lr.coef_[0])))
    return ScopeModel(weights, float(lr.intercept_[0]), mean, scale, 0.5, uses_scores)


def choose_threshold(p_in: Sequence[float], max_share: float) -> float:
    """The lowest threshold that declines at most ``max_share`` of the in-scope probabilities ``p_in``."""
    allowed = int(max_share * len(p_in))
    ranked = sorted(p_in, reverse=True)
    return round(min(ranked[allowed] + 1e-4, 0.9999), 4) if allowed < len(ranked) else 0.9999


def rate(ps: Sequence[float], t: float) -> float:
    return round(sum(p >= t for p in ps) / len(ps), 4) if ps else 0.0


def scope_model(messages: str | Path, stard_queries: str | Path, stard_split: str | Path,
                search: Callable[[str, int], Sequence[Any]], scorer: str, out: str | Path, *,
                c_grid: Sequence[float] = DEFAULTS["c_grid"], max_in_declined: float = DEFAULTS["max_in_declined"],
                k: int = DEFAULTS["k"], stard_folds: int = DEFAULTS["stard_folds"], command: str = "",
                log: Callable[[str], None] = print) -> ScopeFit:
    """Fit, choose on dev, write ``out/scope_model.json`` and ``out/legalrag_model.json`` (the card) atomically."""
    from dataclasses import replace

    from legalrag.answer.scope import FEATURES_VERSION, MODEL_FILE
    from legalrag.io import atomic_write_text, sha256_file

    t0 = time.perf_counter()
    rows = read_messages(messages)
    parts = {s: [r for r in rows if r["split"] == s] for s in SPLITS}
    for s in ("train", "dev"):
        for lab in LABELS:
            if not any(r["label"] == lab for r in parts[s]):
                raise InputError(f"{messages}: the {s} part has no {lab!r} messages", path=str(messages))
    stard_dev = stard_questions(stard_queries, stard_split, "dev")
    log(f"searching {len(parts['train']) + len(parts['dev'])} messages and {len(stard_dev)} STARD dev questions")
    X = {s: raw_features([r["text"] for r in parts[s]], search, scorer, k) for s in ("train", "dev")}
    X_stard = raw_features(stard_dev, search, scorer, k)
    y_train = [int(r["label"] == "out") for r in parts["train"]]
    dev_in = [x for x, r in zip(X["dev"], parts["dev"]) if r["label"] == "in"]
    dev_out = [x for x, r in zip(X["dev"], parts["dev"]) if r["label"] == "out"]

    def unscored(xs: Sequence[Mapping[str, float]]) -> list[dict[str, float]]:
        return [{**x, "scored": 0.0} for x in xs]

    # with `stard_folds` > 1 the STARD dev questions are training data too (in scope; the encoder never saw
    # them), cross-fitted: each is scored by a model fitted without its fold, and the threshold is chosen on
    # those out-of-fold scores and the dev messages (which no model was fitted on)
    folds = [[i for i in range(len(X_stard)) if i % stard_folds == f] for f in range(stard_folds)] \
        if stard_folds > 1 else []
    chosen: dict[str, Any] = {}
    tried: dict[str, list] = {}
    stard_p: dict[str, list[float]] = {}
    for name, uses in (("full", True), ("text", False)):
        view = (lambda xs: list(xs)) if uses else unscored
        train, stard_x = view(X["train"]), view(X_stard)
        d_in, d_out = view(dev_in), view(dev_out)
        # each model is chosen on the messages it decides at run time: `full` on the scored ones (Chinese, hits
        # of the scorer), `text` on every message as if its hits came from another scorer
        keep = (lambda x: bool(x.get("scored"))) if uses else (lambda x: True)
        best = None
        for C in c_grid:
            if folds:
                m = fit_one(train + stard_x, y_train + [0] * len(stard_x), C, uses)
                p_stard = [0.0] * len(stard_x)
                for fold in folds:
                    held = set(fold)
                    rest = [x for i, x in enumerate(stard_x) if i not in held]
                    m_f = fit_one(train + rest, y_train + [0] * len(rest), C, uses)
                    for i in fold:
                        p_stard[i] = m_f.probability(stard_x[i])
            else:
                m = fit_one(train, y_train, C, uses)
                p_stard = [m.probability(x) for x in stard_x]
            pool = [p for p, x in zip(p_stard, stard_x) if keep(x)] + [m.probability(x) for x in d_in if keep(x)]
            outs = [m.probability(x) for x in d_out if keep(x)]
            t = choose_threshold(pool, max_in_declined)
            row = {"C": C, "threshold": t, "dev_out_declined": rate(outs, t), "dev_in_declined": rate(pool, t),
                   "dev_out_n": len(outs), "dev_in_n": len(pool)}
            tried.setdefault(name, []).append(row)
            log(f"{name} C={C}: threshold {t}, dev out-of-scope declined {row['dev_out_declined']} of "
                f"{len(outs)}, in-scope pool declined {row['dev_in_declined']} of {len(pool)}")
            if best is None or row["dev_out_declined"] > best[1]["dev_out_declined"]:
                best = (replace(m, threshold=t), row)
                stard_p[name] = p_stard
        chosen[name] = best
    full, text = chosen["full"][0], chosen["text"][0]

    def routed(xs: Sequence[Mapping[str, float]]) -> float:  # as answer.scope decides on the national index
        return rate([1.0 if (full if x.get("scored") else text).probability(x) >=
                     (full if x.get("scored") else text).threshold else 0.0 for x in xs], 0.5)

    stard_routed = rate([1.0 if p >= (full if x.get("scored") else text).threshold else 0.0 for x, p in
                         zip(X_stard, [stard_p["full"][i] if x.get("scored") else stard_p["text"][i]
                                       for i, x in enumerate(X_stard)])], 0.5)
    metrics = {"dev": {name: row for name, (_, row) in chosen.items()},
               "dev_routed": {"out_of_scope_declined": routed(dev_out), "in_scope_messages_declined": routed(dev_in),
                              "stard_dev_declined" + ("_out_of_fold" if folds else ""): stard_routed},
               "tried": tried,
               "counts": {s: {lab: sum(r["label"] == lab for r in parts[s]) for lab in LABELS} for s in SPLITS},
               "stard_dev": len(stard_dev)}
    model_file = {"about": "legalrag's scope decision: logistic regression over the features of "
                           "legalrag.answer.scope; see README.md beside this file",
                  "features": FEATURES_VERSION, "scorer": scorer, "command": command,
                  "models": {name: m.to_dict() for name, (m, _) in chosen.items()}, "dev": metrics["dev"],
                  "dev_routed": metrics["dev_routed"]}
    out = Path(out)
    atomic_write_text(out / MODEL_FILE, json.dumps(model_file, ensure_ascii=False, indent=1) + "\n")
    def counts(part: str) -> str:
        return f"{metrics['counts'][part]['in']} / {metrics['counts'][part]['out']}"

    card = {"name": "scope", "kind": "scope-model",
            "origin": "legalrag scope decision (logistic regression over message n-grams, legal vocabulary, the "
                      "foreign-jurisdiction pattern and the shipped index's retrieval scores)",
            "files_sha256": {MODEL_FILE: sha256_file(out / MODEL_FILE)}, "weights_sha256": {},
            "licence": LICENCE, "trained": True,
            "summary": "Decides before an answer whether a message is a legal question about the national law of "
                       "the People's Republic of China; out-of-scope messages get a one-line decline (answer.scope).",
            "data": f"{messages}: messages written for legalrag, in / out of scope: train " + counts("train")
                    + ", dev " + counts("dev") + ", test " + counts("test") + " (not read by the recipe); "
                    f"{len(stard_dev)} STARD dev questions of the frozen split (in scope)"
                    + (f", cross-fitted in {stard_folds} folds as training data" if folds else "")
                    + " and for the threshold",
            "command": command,
            "figures": {"dev (each message decided by the model that decides it at run time)": metrics["dev_routed"],
                        **{f"dev, {name}": row for name, row in metrics["dev"].items()}}}
    atomic_write_text(out / "legalrag_model.json", json.dumps(card, ensure_ascii=False, indent=1) + "\n")
    log(f"wrote {out / MODEL_FILE}")
    return ScopeFit(model_file, card, metrics, time.perf_counter() - t0)
