"""The decisive-article selector's recipe (``data/models/selector``, read by ``answer.select``), run by
``legalrag train selector``.

Data: the frozen STARD split (``train.jsonl`` / ``dev.jsonl`` / ``test.jsonl`` of one folder). The shipped
``stard-e5`` encoder, whose order the default index gives, was trained on the train questions, so its ranks and
scores are optimistic there. The selector therefore learns from the dev questions only, which the encoder never
saw: for each, the top ``depth`` candidates of the index's default component (what ``ask`` retrieves), labelled
by the question's gold ids. The train part gives only the law and article priors (gold counts; no encoder score
enters them). Model choice, the Platt calibration and the threshold all come from ``folds``-fold cross-fitting
on dev by question, so no dev question is scored by a model fitted on it; the final model is then fitted on all
of dev. The test part is never read here (``bench/answers/bench_selector.py`` reports on it).

Models tried (chosen by out-of-fold hit@1 on dev; ties go to the simpler): an L2-regularised logistic regression
over :data:`answer.select.FEATURES` at a few strengths, and LightGBM with ``rerank.learned``'s small-tree
lambdarank parameters. The threshold of ``chosen``: the one that maximises the mean F1 of the chosen articles
(at most ``k``) against the gold ones on dev, out of fold, among those that leave at most ``max_empty`` of the
questions with nothing chosen.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

DEFAULTS = {"depth": 30, "folds": 5, "seed": 13, "k": 3, "max_empty": 0.25, "l2": (0.3, 1.0, 3.0, 10.0),
            "lightgbm": True, "neighbours": 10, "temperature": 0.05}


CARD = {
    "origin": "legalrag's decisive-article selector: a small model over cheap signals of (question, article) "
              "pairs, trained on the dev part of the frozen STARD split",
    "summary": "Reranks the top 30 articles the default index retrieves for a question and gives each a calibrated "
               "probability that it decides the question (answer.select). Learned from the 131 dev questions of "
               "the frozen STARD split, which the shipped stard-e5 encoder never saw: the encoder's ranks and "
               "scores are optimistic on its 972 training questions, so no feature is computed on them; they give "
               "only the law and article priors (gold counts) and the neighbour memory (what similar training "
               "questions cited). Model choice, Platt calibration and the threshold of `chosen` come from 5-fold "
               "cross-fitting on dev by question; the figures on the 131 test questions come from "
               "bench/answers/bench_selector.py (bench/results/selector-test.json, selector-cost.json).",
    "data": "STARD / LeCoQA questions and gold articles (Su et al., EMNLP Findings 2024; github.com/oneal2000/STARD, "
            "MIT License, Copyright (c) 2024 THUIR; github.com/oneal2000/LeCoQA, MIT License, Copyright (c) 2025 "
            "Weihang Su), the frozen split bench/data/stard-split.json: fitted on the 131 dev questions; the 972 "
            "train questions give the priors and the neighbour memory (their ids, gold ids and stard-e5 vectors); "
            "the 131 test questions are only reported on. Articles: the shipped national-law corpus (statutes are "
            "excluded from copyright by PRC Copyright Law art. 5).",
    "licence": "Released with legalrag under Apache-2.0; the MIT notices of STARD and LeCoQA apply to the questions "
               "the priors and the neighbour memory are derived from (neighbours.jsonl holds question ids and gold "
               "article ids only, no question text).",
}


@dataclass(frozen=True)
class QuestionCandidates:
    """One question's retrieved candidates (best first) and its gold ids."""

    id: str
    question: str
    gold: tuple[str, ...]
    hits: tuple[Any, ...]  # legalrag.types.Hit

    @property
    def labels(self) -> np.ndarray:
        g = set(self.gold)
        return np.array([1.0 if h.id in g else 0.0 for h in self.hits])


def load_part(split: str | Path, part: str, queries: str | Path | None = None):
    """The questions of one part: ``split`` a folder holding ``<part>.jsonl``, or the frozen split's JSON
    (``bench/data/stard-split.json``: query ids per part) with ``queries`` the STARD file those ids are in."""
    from legalrag.errors import InputError
    from legalrag.evaluation.answers.data import load_questions

    split = Path(split)
    if split.is_dir():
        return load_questions(split / f"{part}.jsonl")
    if queries is None:
        raise InputError("a split file of query ids needs the questions: pass --queries (STARD's train.jsonl)",
                         path=str(split))
    try:
        ids = {str(i) for i in json.loads(split.read_text(encoding="utf-8"))[part]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"not a split file with a {part!r} list of query ids ({exc})", path=str(split)) from exc
    out = [q for q in load_questions(queries) if q.id in ids]
    if len(out) != len(ids):
        raise InputError(f"{len(ids) - len(out)} query ids of the {part!r} part are not in {queries}",
                         path=str(split), field=part)
    return out


def retrieve(search: Callable[[str, int], Sequence[Any]], questions: Sequence[Any], depth: int,
             log: Callable[[str], None] = lambda _m: None) -> list[QuestionCandidates]:
    """The top ``depth`` of ``search`` for each question (``search(text, k) -> hits``)."""
    out = []
    for i, q in enumerate(questions):
        out.append(QuestionCandidates(q.id, q.query, tuple(q.gold_ids), tuple(search(q.query, depth))))
        if (i + 1) % 50 == 0:
            log(f"retrieved {i + 1}/{len(questions)}")
    return out


def support_scores(support: Any, cands: Sequence[QuestionCandidates], cache: str | Path | None = None,
                   log: Callable[[str], None] = lambda _m: None) -> list[np.ndarray]:
    """The support pair model's score of every (question, candidate) pair; ``cache``: a JSON file of
    ``qid -> {doc id: score}`` reused when it was made by the same model (its ``support`` key)."""
    from legalrag.io import atomic_write_text

    tag = support_tag(support)
    memo: dict[str, dict[str, float]] = {}
    if cache and Path(cache).exists():
        d = json.loads(Path(cache).read_text(encoding="utf-8"))
        if d.get("support") == tag:
            memo = d.get("scores", {})
    out = []
    for i, c in enumerate(cands):
        have = memo.get(c.id, {})
        todo = [h for h in c.hits if h.id not in have]
        if todo:
            fresh = support.scores([(c.question, h.document) for h in todo])
            have = {**have, **{h.id: float(s) for h, s in zip(todo, fresh)}}
            memo[c.id] = have
        out.append(np.array([have[h.id] for h in c.hits]))
        if (i + 1) % 25 == 0:
            log(f"support scores {i + 1}/{len(cands)}")
    if cache:
        atomic_write_text(cache, json.dumps({"support": tag, "scores": memo}))
    return out


def support_tag(support: Any) -> str:
    """What identifies the support model's scores: its model's name, features and coefficients."""
    from legalrag.io import sha256_text

    model = getattr(support, "model", None)
    desc = {"class": type(support).__name__, "model": repr(model),
            "encoder": type(getattr(support, "encoder", None)).__name__}
    return sha256_text(json.dumps(desc, sort_keys=True, default=str))[:16]


def support_model_digest(model: Any) -> str:
    """A short digest of the support model's parameters (its repr: name, features, coefficients, threshold), kept
    in the selector's spec so a changed support model is noticed (the selector must then be retrained)."""
    from legalrag.io import sha256_text

    return sha256_text(repr(model))[:16]


def matrices(cands: Sequence[QuestionCandidates], sups: Sequence[np.ndarray], priors: Any,
             clause_bm25: Any = None, votes: Sequence[Any] | None = None) -> list[np.ndarray]:
    from legalrag.answer.select import ClauseBM25, feature_matrix

    cb = clause_bm25 or ClauseBM25()
    votes = votes if votes is not None else [None] * len(cands)
    return [feature_matrix(c.question, c.hits, support_scores=s, priors=priors, clause_bm25=cb, votes=v)
            for c, s, v in zip(cands, sups, votes)]


def neighbour_memory(encoder: Any, train: Sequence[Any], k: int, temperature: float, name: str = "stard-e5"):
    """The train questions as a ``rerank.neighbours.NeighbourMemory`` (their vectors under ``encoder``)."""
    from legalrag.answer.select import MAX_QUESTION_CHARS
    from legalrag.rerank.neighbours import NeighbourMemory, NeighbourSettings

    vectors = np.asarray(encoder.encode_queries([q.query[:MAX_QUESTION_CHARS] for q in train]), dtype=np.float32)
    return NeighbourMemory([q.id for q in train], [q.gold_ids for q in train], vectors,
                           NeighbourSettings(k=k, temperature=temperature, expand=0), name)


# -- fitting -----------------------------------------------------------------------------------------------

def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, iterations: int = 50):
    """An L2-regularised logistic regression over standardised columns (Newton steps); a ``LinearScorer``."""
    from legalrag.answer.select import LinearScorer

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale = np.where(scale > 1e-9, scale, 0.0)
    z = (x - mean) / np.where(scale > 0, scale, 1.0)
    z[:, scale == 0] = 0.0
    a = np.column_stack([z, np.ones(len(z))])
    w = np.zeros(a.shape[1])
    reg = np.full(a.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-np.clip(a @ w, -30, 30)))
        grad = a.T @ (p - y) + reg * w
        h = (a * (p * (1 - p))[:, None]).T @ a + np.diag(reg + 1e-9)
        step = np.linalg.solve(h, grad)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return LinearScorer(tuple(float(v) for v in w[:-1]), float(w[-1]), tuple(float(v) for v in mean),
                        tuple(float(v) for v in scale))


def fit_platt(scores: np.ndarray, y: np.ndarray):
    """Platt scaling: a one-feature logistic fit of the labels on the scores, its slope kept >= 0."""
    from legalrag.answer.select import Platt

    s = np.asarray(scores, dtype=np.float64)
    a, b = 1.0, 0.0
    for _ in range(100):
        p = 1 / (1 + np.exp(-np.clip(a * s + b, -30, 30)))
        g = np.array([((p - y) * s).sum(), (p - y).sum()])
        w = p * (1 - p)
        h = np.array([[(w * s * s).sum() + 1e-6, (w * s).sum()], [(w * s).sum(), w.sum() + 1e-6]])
        da, db = np.linalg.solve(h, g)
        a, b = a - da, b - db
        if abs(da) + abs(db) < 1e-9:
            break
    return Platt(max(float(a), 0.0), float(b) if a > 0 else float(np.log((y.mean() + 1e-6) / (1 - y.mean() + 1e-6))))


def fit_booster(xs: Sequence[np.ndarray], ys: Sequence[np.ndarray], seed: int = 13):
    from legalrag._optional import require
    from legalrag.answer.select import FEATURES, BoosterScorer
    from legalrag.rerank.learned import DEFAULT_PARAMS, DEFAULT_ROUNDS

    lgb = require("lightgbm", "dense")
    keep = [i for i, y in enumerate(ys) if y.sum() > 0]
    params = {**DEFAULT_PARAMS, "min_data_in_leaf": 20, "seed": seed}
    data = lgb.Dataset(np.vstack([xs[i] for i in keep]), np.concatenate([ys[i] for i in keep]),
                       group=[len(ys[i]) for i in keep], feature_name=list(FEATURES), free_raw_data=True)
    return BoosterScorer(lgb.train(params, data, num_boost_round=DEFAULT_ROUNDS))


def fit_scorer(kind: str, xs: Sequence[np.ndarray], ys: Sequence[np.ndarray], seed: int = 13):
    if kind == "lightgbm":
        return fit_booster(xs, ys, seed)
    l2 = float(kind.split(":", 1)[1])
    return fit_logistic(np.vstack(xs), np.concatenate(ys), l2)


def folds(n: int, k: int, seed: int) -> list[list[int]]:
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return [sorted(order[i::k]) for i in range(k)]


def out_of_fold(kind: str, xs: Sequence[np.ndarray], ys: Sequence[np.ndarray], k: int, seed: int) -> list[np.ndarray]:
    """Each question's scores from a model fitted on the other folds."""
    out: list[np.ndarray] = [np.zeros(0)] * len(xs)
    for test in folds(len(xs), k, seed):
        held = set(test)
        train = [i for i in range(len(xs)) if i not in held]
        scorer = fit_scorer(kind, [xs[i] for i in train], [ys[i] for i in train], seed)
        for i in test:
            out[i] = scorer.score(xs[i]) if len(xs[i]) else np.zeros(0)
    return out


# -- measures ----------------------------------------------------------------------------------------------

def hits_at(scores: Sequence[np.ndarray], ys: Sequence[np.ndarray], k: int) -> list[float]:
    """Per question: 1 when a gold article is among the ``k`` best-scored candidates (ties: retrieval order)."""
    out = []
    for s, y in zip(scores, ys):
        order = sorted(range(len(s)), key=lambda i: (-s[i], i))[:k]
        out.append(1.0 if any(y[i] > 0 for i in order) else 0.0)
    return out


def retrieval_order(ys: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [-np.arange(len(y), dtype=np.float64) for y in ys]


def chosen_f1(probs: Sequence[np.ndarray], ys: Sequence[np.ndarray], gold_sizes: Sequence[int], threshold: float,
              k: int) -> tuple[float, float]:
    """(mean F1 of the chosen articles against the gold, share of questions with nothing chosen)."""
    f1s, empty = [], 0
    for p, y, g in zip(probs, ys, gold_sizes):
        order = sorted(range(len(p)), key=lambda i: (-p[i], i))
        chosen = [i for i in order if p[i] >= threshold][:k]
        if not chosen:
            empty += 1
            f1s.append(0.0)
            continue
        tp = sum(1 for i in chosen if y[i] > 0)
        f1s.append(2 * tp / (len(chosen) + g) if tp else 0.0)
    return float(np.mean(f1s)) if f1s else 0.0, empty / max(len(probs), 1)


def choose_threshold(probs: Sequence[np.ndarray], ys: Sequence[np.ndarray], gold_sizes: Sequence[int], k: int,
                     max_empty: float) -> dict[str, float]:
    grid = sorted({round(float(v), 3) for p in probs for v in p} | {0.0})
    best = {"threshold": 0.0, "f1": -1.0, "empty": 1.0}
    for t in grid:
        f1, empty = chosen_f1(probs, ys, gold_sizes, t, k)
        if empty <= max_empty and f1 > best["f1"] + 1e-12:
            best = {"threshold": t, "f1": f1, "empty": empty}
    return best


def calibration_table(probs: Sequence[np.ndarray], ys: Sequence[np.ndarray], bins: int = 5) -> list[dict[str, float]]:
    p = np.concatenate([np.asarray(x) for x in probs]) if probs else np.zeros(0)
    y = np.concatenate([np.asarray(x) for x in ys]) if ys else np.zeros(0)
    edges = [0.0, 0.05, 0.15, 0.3, 0.5, 1.0001][:bins + 1]
    out = []
    for lo, hi in zip(edges, edges[1:]):
        m = (p >= lo) & (p < hi)
        if m.any():
            out.append({"from": lo, "to": min(hi, 1.0), "n": int(m.sum()), "mean_p": round(float(p[m].mean()), 4),
                        "gold_share": round(float(y[m].mean()), 4)})
    return out


# -- the recipe --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SelectorFit:
    model: Any  # answer.select.SelectorModel
    figures: Mapping[str, Any]
    seconds: float


def train_selector(split: str | Path, search: Callable[[str, int], Sequence[Any]], support: Any,
                   law_by_id: Callable[[str], str],
                   *, depth: int = DEFAULTS["depth"], n_folds: int = DEFAULTS["folds"], seed: int = DEFAULTS["seed"],
                   k: int = DEFAULTS["k"], max_empty: float = DEFAULTS["max_empty"],
                   l2: Sequence[float] = DEFAULTS["l2"], lightgbm: bool = DEFAULTS["lightgbm"],
                   encoder: Any = None, neighbours: int = DEFAULTS["neighbours"],
                   temperature: float = DEFAULTS["temperature"], encoder_name: str = "stard-e5",
                   queries: str | Path | None = None, cache: str | Path | None = None,
                   log: Callable[[str], None] = lambda _m: None) -> SelectorFit:
    """Fit the selector on the dev part of ``split`` (see the module docstring). ``search(text, k) -> hits``: the
    default index's retrieval; ``law_by_id(doc_id)``: the law of an article (for the train priors);
    ``encoder`` (default: the support model's): the question vectors of the neighbour memory (``neighbours`` = 0
    or no encoder: no memory)."""
    from legalrag.answer.select import Priors, SelectorModel

    t0 = time.perf_counter()
    train, dev = load_part(split, "train", queries), load_part(split, "dev", queries)
    priors = Priors.from_gold([q.gold_ids for q in train], _LawLookup(law_by_id))
    log(f"priors from {len(train)} train questions: {len(priors.law)} laws, {len(priors.article)} articles")
    cands = retrieve(search, dev, depth, log)
    sups = support_scores(support, cands, cache, log)
    encoder = encoder if encoder is not None else getattr(support, "encoder", None)
    memory, votes = None, None
    if neighbours and encoder is not None:
        from legalrag.answer.select import MAX_QUESTION_CHARS

        memory = neighbour_memory(encoder, train, neighbours, temperature, encoder_name)
        qv = np.asarray(encoder.encode_queries([c.question[:MAX_QUESTION_CHARS] for c in cands]), dtype=np.float32)
        votes = [memory.votes(v) for v in qv]
        log(f"neighbour memory: {len(memory)} train questions, k={neighbours}, temperature={temperature}")
    xs = matrices(cands, sups, priors, votes=votes)
    ys = [c.labels for c in cands]
    gold_sizes = [len(set(c.gold)) for c in cands]
    kinds = [f"logistic:{v}" for v in l2] + (["lightgbm"] if lightgbm else [])
    base1, base3 = hits_at(retrieval_order(ys), ys, 1), hits_at(retrieval_order(ys), ys, 3)
    trials: dict[str, dict[str, float]] = {}
    oof: dict[str, list[np.ndarray]] = {}
    for kind in kinds:
        oof[kind] = out_of_fold(kind, xs, ys, n_folds, seed)
        trials[kind] = {"hit@1": round(float(np.mean(hits_at(oof[kind], ys, 1))), 4),
                        "hit@3": round(float(np.mean(hits_at(oof[kind], ys, 3))), 4)}
        log(f"{kind}: dev out-of-fold hit@1 {trials[kind]['hit@1']}, hit@3 {trials[kind]['hit@3']}")
    best = max(kinds, key=lambda kd: (trials[kd]["hit@1"], trials[kd]["hit@3"], -kinds.index(kd)))
    # calibration on out-of-fold scores; the threshold on the calibrated out-of-fold probabilities
    flat_s = np.concatenate(oof[best])
    platt = fit_platt(flat_s, np.concatenate(ys))
    probs = [platt(s) for s in oof[best]]
    chosen = choose_threshold(probs, ys, gold_sizes, k, max_empty)
    scorer = fit_scorer(best, xs, ys, seed)
    figures = {
        "dev_questions": len(dev), "depth": depth, "folds": n_folds, "model": best, "trials": trials,
        "dev_gold_in_candidates": round(float(np.mean([y.sum() > 0 for y in ys])), 4),
        "dev_retrieval_hit@1": round(float(np.mean(base1)), 4), "dev_retrieval_hit@3": round(float(np.mean(base3)), 4),
        "dev_oof_hit@1": trials[best]["hit@1"], "dev_oof_hit@3": trials[best]["hit@3"],
        "threshold": chosen["threshold"], "dev_oof_chosen_f1": round(chosen["f1"], 4),
        "dev_oof_nothing_chosen": round(chosen["empty"], 4), "calibration_dev_oof": calibration_table(probs, ys),
        "train_questions_for_priors": len(train), "neighbour_memory": len(memory) if memory is not None else 0,
    }
    spec = {"trained_on": "dev part of the frozen STARD split (cross-fitted)", "depth": depth, "k": k,
            "support": support_tag(support), "support_model": support_model_digest(support.model),
            "figures": figures}
    model = SelectorModel(scorer, platt, float(chosen["threshold"]), priors, spec, memory)
    return SelectorFit(model, figures, time.perf_counter() - t0)


class _LawLookup(dict):
    """A mapping view of ``law_by_id`` for :meth:`Priors.from_gold` (unknown ids: no law)."""

    def __init__(self, fn: Callable[[str], str]):
        super().__init__()
        self.fn = fn

    def get(self, key: str, default: str = "") -> str:  # type: ignore[override]
        try:
            return self.fn(key) or default
        except KeyError:
            return default


__all__ = ["DEFAULTS", "QuestionCandidates", "SelectorFit", "choose_threshold", "fit_logistic", "fit_platt",
           "hits_at", "out_of_fold", "retrieve", "support_scores", "train_selector"]
