"""The learned set decision: which of a case's candidate provisions are cited, as one multi-label decision.

A LightGBM binary model scores every candidate of a pipeline result (the retrieval hits, and whatever the
rules, the co-citation graph and the similar cases added) from what the pipeline knows about it: its
retrieval rank and score, the rule and co-citation scores, the similar cases' vote, how often training
decisions cite it. The set is then chosen by one rule, picked by cross-validation on the training cases:
every candidate whose probability reaches a threshold, or the top ``round(sum of probabilities)`` (a learned
set size). At least one provision is always kept.

**Cross-fitting.** The rule is chosen on out-of-fold probabilities: each training case is scored by a model
fitted without its fold. Cases in ``exclude`` (e.g. those the retriever's encoder was trained on, whose
retrieval scores are better than any new case's would be) give no training rows at all, so the model never
learns to trust scores it could not see on a new case. ``trained_on`` records the case ids whose rows it
learned from.

The decision is expressed as a score in [0, 1] whose cut is 0.5 (``DECISION_CUT``), so that the pipeline and
the evaluation treat it as one more pool. Saved as ``setmodel/``: ``model.lgb.txt`` (LightGBM text) and
``spec.json`` (columns, rule, threshold, the ids trained on, the CV figures); no pickle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

import numpy as np

from legalrag.errors import InputError

DECISION_CUT = 0.5
FOLDS = 5
PARAMS = {"objective": "binary", "num_leaves": 8, "min_data_in_leaf": 10, "learning_rate": 0.05,
          "feature_fraction": 0.9, "verbose": -1, "seed": 7, "deterministic": True, "num_threads": 1,
          "force_col_wise": True}
ROUNDS = 150
COLUMNS = ["ret_rank", "ret_norm", "ret_gap", "core", "always", "cluster", "cocite", "vote", "pooled", "prior",
           "article", "general", "top_score"]
GRID = [round(t, 2) for t in np.arange(0.1, 0.91, 0.05)]


def _lgb():
    from legalrag._optional import require

    return require("lightgbm", "dense")


def candidate_rows(result: Any, prior: Mapping[str, float], depth: int | None = None
                   ) -> tuple[list[str], np.ndarray]:
    """(provisions, feature rows) of one pipeline result (a ``CiteResult``): the top ``depth`` retrieval
    candidates and every provision a later stage pooled."""
    hits = list(result.sources)[: depth or None]
    pools = result.pools
    cands = [h.id for h in hits]
    for stage in ("always-add", "clusters", "co-citation", "case-votes", "similar-cases"):
        cands += [p for p in pools.get(stage, {}) if p not in cands]
    rank = {h.id: i for i, h in enumerate(hits, 1)}
    scores = {h.id: h.score for h in hits}
    lo, hi = (min(scores.values()), max(scores.values())) if scores else (0.0, 0.0)
    core = pools.get("rerank", pools.get("retrieval", {}))
    rows = []
    for p in cands:
        s = scores.get(p)
        general = float(int(p) <= 101) if p.isdigit() else -1.0
        rows.append([float(rank.get(p, len(hits) + 1)), ((s - lo) / (hi - lo) if hi > lo else 1.0) if s is not None
                     else -1.0, (hi - s) if s is not None else -1.0, float(p in core),
                     float(pools.get("always-add", {}).get(p, 0.0)), float(pools.get("clusters", {}).get(p, 0.0)),
                     float(pools.get("co-citation", {}).get(p, 0.0)), float(pools.get("case-votes", {}).get(p, 0.0)),
                     float(pools.get("similar-cases", {}).get(p, 0.0)), float(prior.get(p, 0.0)),
                     float(int(p)) if p.isdigit() and prior.get(p, 0.0) >= 0.01 else -1.0, general, hi])
    return cands, np.array(rows, dtype=float).reshape(len(cands), len(COLUMNS))


def decide(probs: np.ndarray, rule: str, threshold: float) -> np.ndarray:
    """Decision scores in [0, 1], >= 0.5 exactly for the chosen candidates (monotone in the probabilities)."""
    probs = np.asarray(probs, dtype=float)
    if len(probs) == 0:
        return probs
    if rule == "size":
        k = max(1, int(round(float(probs.sum()))))
        chosen = np.zeros(len(probs), dtype=bool)
        chosen[np.argsort(-probs, kind="stable")[:k]] = True
    else:
        chosen = probs >= threshold
        chosen[int(np.argmax(probs))] = True
    return np.where(chosen, DECISION_CUT + DECISION_CUT * probs, DECISION_CUT * probs * 0.999)


def micro_f1(chosen: Sequence[Collection[str]], gold: Sequence[Collection[str]]) -> float:
    tp = sum(len(set(c) & set(g)) for c, g in zip(chosen, gold))
    n_pred, n_gold = sum(len(c) for c in chosen), sum(len(g) for g in gold)
    return 2 * tp / (n_pred + n_gold) if n_pred + n_gold else 0.0


def fold_of(ids: Sequence[str], folds: int = FOLDS) -> dict[str, int]:
    """Cases in sorted id order, dealt round-robin into folds."""
    return {cid: i % folds for i, cid in enumerate(sorted(ids))}


def cross_fit(case_ids: Sequence[str], rows: Sequence[np.ndarray], labels: Sequence[np.ndarray],
              fit: Callable[[np.ndarray, np.ndarray], Any], folds: int = FOLDS) -> list[np.ndarray]:
    """Out-of-fold probabilities: case ``i``'s rows scored by a model ``fit`` on the other folds' rows only."""
    assign = fold_of(case_ids, folds)
    out: list[np.ndarray] = [np.zeros(len(r)) for r in rows]
    for f in range(folds):
        test = [i for i, c in enumerate(case_ids) if assign[c] == f]
        train = [i for i, c in enumerate(case_ids) if assign[c] != f]
        if not test or not train:
            continue
        model = fit(np.vstack([rows[i] for i in train]), np.concatenate([labels[i] for i in train]))
        for i in test:
            if len(rows[i]):
                out[i] = model.predict(rows[i])
    return out


def fit_booster(X: np.ndarray, y: np.ndarray):
    lgb = _lgb()
    params = dict(PARAMS)
    if len(set(y.tolist())) < 2:
        params["objective"] = "regression"  # one class only: a constant model, still a valid booster
    return lgb.train(params, lgb.Dataset(X, label=y, feature_name=COLUMNS, free_raw_data=False),
                     num_boost_round=ROUNDS)


@dataclass
class SetModel:
    booster: Any
    rule: str = "threshold"  # "threshold" | "size"
    threshold: float = 0.5
    depth: int | None = None  # retrieval candidates read (None: all the pipeline retrieved)
    prior: dict[str, float] = field(default_factory=dict)  # provision -> share of training decisions citing it
    trained_on: tuple[str, ...] = ()
    cv: dict[str, Any] = field(default_factory=dict)

    def decision(self, result: Any) -> dict[str, float]:
        """Provision -> decision score (>= 0.5: in the set) for one pipeline result."""
        cands, X = candidate_rows(result, self.prior, self.depth)
        if not cands:
            return {}
        return {p: round(float(s), 6) for p, s in zip(cands, decide(self.booster.predict(X), self.rule,
                                                                      self.threshold))}

    @classmethod
    def train(cls, results: Sequence[Any], gold: Sequence[Collection[str]], case_ids: Sequence[str],
              prior: Mapping[str, float], *, exclude: Collection[str] = (), depth: int | None = None,
              fit: Callable[[np.ndarray, np.ndarray], Any] = fit_booster, folds: int = FOLDS) -> "SetModel":
        """Fit on the results of labelled cases (the pipeline run on them, each case left out of its own
        similar-case vote); ``exclude``: case ids that give no rows (see the module docstring)."""
        keep = [i for i, c in enumerate(case_ids) if c not in set(exclude)]
        if len(keep) < folds:
            raise InputError(f"the set model needs at least {folds} training cases outside the excluded ones; "
                             f"{len(keep)} left")
        ids = [case_ids[i] for i in keep]
        cands, rows, labels = [], [], []
        for i in keep:
            c, X = candidate_rows(results[i], prior, depth)
            cands.append(c)
            rows.append(X)
            labels.append(np.array([int(p in gold[i]) for p in c]))
        oof = cross_fit(ids, rows, labels, fit, folds)
        gold_kept = [gold[i] for i in keep]
        scores = {}
        for rule, grid in (("threshold", GRID), ("size", [0.0])):
            for t in grid:
                sets = [{p for p, s in zip(c, decide(pr, rule, t)) if s >= DECISION_CUT} for c, pr in zip(cands, oof)]
                scores[(rule, t)] = micro_f1(sets, gold_kept)
        (rule, t), best = max(scores.items(), key=lambda kv: (kv[1], kv[0][0] == "threshold", kv[0][1]))
        reach = sum(len(set(c) & set(g)) for c, g in zip(cands, gold_kept)) / max(sum(len(g) for g in gold_kept), 1)
        cv = {"folds": folds, "cases": len(ids), "excluded": len(case_ids) - len(ids), "oof_micro_f1": round(best, 4),
              "oof_micro_f1_size_rule": round(scores[("size", 0.0)], 4),
              "oof_micro_f1_best_threshold": round(max(v for k, v in scores.items() if k[0] == "threshold"), 4),
              "candidate_recall": round(reach, 4)}
        booster = fit(np.vstack(rows), np.concatenate(labels))
        return cls(booster, rule, float(t), depth, dict(prior), tuple(ids), cv)

    def save(self, path: str | Path) -> None:
        p = Path(path)
        p.mkdir(parents=True, exist_ok=True)
        self.booster.save_model(str(p / "model.lgb.txt"))
        spec = {"columns": COLUMNS, "rule": self.rule, "threshold": self.threshold, "depth": self.depth,
                "prior": self.prior, "trained_on": list(self.trained_on), "cv": self.cv, "rounds": ROUNDS,
                "params": PARAMS}
        (p / "spec.json").write_text(json.dumps(spec, ensure_ascii=False, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "SetModel":
        p = Path(path)
        try:
            spec = json.loads((p / "spec.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError("not a set model directory (spec.json missing)", path=str(p)) from None
        if spec.get("columns") != COLUMNS:
            raise InputError("the set model was trained with other feature columns; retrain it", path=str(p))
        booster = _lgb().Booster(model_file=str(p / "model.lgb.txt"))
        return cls(booster, spec["rule"], float(spec["threshold"]), spec.get("depth"), spec.get("prior", {}),
                   tuple(spec.get("trained_on", ())), spec.get("cv", {}))
