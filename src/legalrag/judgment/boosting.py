"""The LightGBM side of the structure predictor: one parameter set for its five models, fitting, out-of-fold
probabilities, and the selection threshold chosen by cross-fitting on the training cases."""

from __future__ import annotations

from typing import Sequence

PARAMS = {"num_leaves": 8, "min_data_in_leaf": 5, "learning_rate": 0.05, "feature_fraction": 0.9,
          "verbose": -1, "seed": 7, "deterministic": True, "num_threads": 1, "force_col_wise": True}
ROUNDS = 150
FOLDS = 5


def lightgbm():
    from legalrag._optional import require

    return require("lightgbm", "dense")  # the dense extra carries lightgbm (also used by the learned ranker)


def fit(X, y, objective: str, columns: Sequence[str], weight=None):
    """A booster of ``PARAMS`` for ``ROUNDS`` rounds; ``weight``: one per row (None: all 1)."""
    lgb = lightgbm()
    params = dict(PARAMS, objective=objective)
    if objective == "quantile":
        params["alpha"] = 0.5
    if objective == "binary" and len(set(y.tolist())) < 2:
        params["objective"] = "regression"  # one class only: a constant model, still a valid booster
    ds = lgb.Dataset(X, label=y, weight=weight, feature_name=[_safe(c) for c in columns], free_raw_data=False)
    return lgb.train(params, ds, num_boost_round=ROUNDS)


def out_of_fold(X, y, columns, folds: int = FOLDS):
    """Each row's probability from a binary model fitted without its fold."""
    import numpy as np

    out = np.zeros(len(y))
    fold_of = np.arange(len(y)) % folds
    for f in range(folds):
        test = fold_of == f
        out[test] = fit(X[~test], y[~test], "binary", columns).predict(X[test])
    return out


def cross_fit_threshold(X, Y, G, n_cases: int, columns, folds: int = FOLDS) -> tuple[float, float]:
    """(threshold, F1): the selection threshold that maximises the benchmark's F1 (averaged P and R) out of
    fold, and that F1."""
    import numpy as np

    probs = np.zeros(len(Y))
    fold_of = np.arange(n_cases) % folds
    for f in range(folds):
        test = fold_of[G] == f
        if test.sum() == 0 or (~test).sum() == 0:
            continue
        model = fit(X[~test], Y[~test], "binary", columns)
        probs[test] = model.predict(X[test])
    return best_threshold(probs, Y, G, n_cases)


def best_threshold(probs, Y, G, n_cases: int) -> tuple[float, float]:
    """(threshold, F1) maximising the benchmark's F1 of the rows kept per case (at least the best one)."""
    import numpy as np

    best, best_f1 = 0.5, -1.0
    rows_of = [np.where(G == case)[0] for case in range(n_cases)]
    for t in list(np.arange(0.1, 0.96, 0.05)) + [1.01]:  # 1.01: keep the best candidate only
        ps, rs = [], []
        for rows in rows_of:
            gold_n = int(Y[rows].sum()) if len(rows) else 0
            chosen = rows[probs[rows] >= t]
            if len(chosen) == 0 and len(rows):
                chosen = rows[[int(np.argmax(probs[rows]))]]
            hit = int(Y[chosen].sum()) if len(chosen) else 0
            ps.append(hit / len(chosen) if len(chosen) else 0.0)
            rs.append(hit / gold_n if gold_n else 0.0)
        p, r = sum(ps) / n_cases, sum(rs) / n_cases
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        if f1 > best_f1 + 1e-9:
            best, best_f1 = float(t), f1
    return best, best_f1


def _safe(name: str) -> str:
    """LightGBM feature names must be ASCII-safe in its text format: Chinese names are kept as escapes."""
    return name.encode("unicode_escape").decode("ascii").replace("\\", "u_") if not name.isascii() else name
