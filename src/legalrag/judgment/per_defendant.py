"""Several defendants: per-defendant prison and fine models, chosen over the case-level ones only where they
score better out of fold on the training cases, and the sentence arithmetic that scoring shares with
prediction (terms capped and rounded as courts state them, the benchmark's relative penalty score)."""

from __future__ import annotations

from legalrag.judgment.boosting import fit
from legalrag.judgment.defendants import defendant_rows, local_features
from legalrag.judgment.extract import LIFE_MONTHS
from legalrag.judgment.metrics import relative_score
from legalrag.judgment.selection import EXCLUDED, TOL, TRAIN_ONLY, fold_assignments


def choose_per_defendant(p, cases, contexts, X_num, n_complete: int) -> None:
    """Per-defendant prison and fine models (one row per sentenced defendant, ``defendants.py``), used in
    place of the case-level ones where they score better out of fold on the training cases, each scored as
    the evaluator reads a result (the distinct per-defendant terms summed). Only the ``n_complete`` complete
    cases (first in ``cases``) are scored; the partial-label ones after them train in every fold, at the
    case-level model's weight, where that model learns from them (``p.partial_use``), else take no part."""
    import numpy as np

    rows, months, fines, case_of = [], [], [], []
    for i, (c, ctx) in enumerate(zip(cases, contexts)):
        named = [d[0] for d in c.defendants]
        sentences = c.defendants or ((ctx.defendants[0] if ctx.defendants else "", c.prison_months, c.fine_yuan),)
        for name, m, f in sentences:
            feats = local_features(c.facts, name, named) if c.defendants else defendant_rows(c.facts, [name] if name else [])[0][1]
            rows.append(p._number_row(ctx, c.charges, feats))
            months.append(regression_months(m))
            fines.append(f or 0)
            case_of.append(i)
    X, case_of = np.array(rows, dtype=float), np.array(case_of)
    months, fines = np.array(months, dtype=float), np.array(fines, dtype=float)
    tests = [np.array([p._number_row(ctx, c.charges, f) for _, f in defendant_rows(c.facts, ctx.defendants)],
                      dtype=float) for c, ctx in zip(cases, contexts)]
    for kind in ("prison", "fine"):
        if kind not in p.models or not p.per_defendant_enabled:
            continue
        truth = np.array([c.prison_capped if kind == "prison" else float(c.fine_yuan or 0) for c in cases])
        target = np.ones(len(cases), bool) if kind == "prison" else truth > 0
        usable = ~np.isnan(months) if kind == "prison" else fines > 0
        labels = np.log1p(np.nan_to_num(months) if kind == "prison" else fines)
        idx, cols = p._idx(kind), p._cols(kind)
        per_scores, case_scores = [], []
        w_partial = float(getattr(p, "partial_use", {}).get(kind) or 0.0)  # the case-level model's weight
        partial = TRAIN_ONLY_IF[w_partial > 0]
        weight = np.where(case_of < n_complete, 1.0, w_partial)
        for a in fold_assignments(n_complete):
            fold = np.array(list(a) + [partial] * (len(cases) - n_complete))
            for f in sorted(set(a)):
                test = [i for i in range(len(cases)) if fold[i] == f and target[i]]
                tr = (fold[case_of] != f) & (fold[case_of] != EXCLUDED) & usable
                pd_model = fit(X[tr][:, idx], labels[tr], "quantile", cols, weight[tr])
                train_cases = (fold != f) & (fold != EXCLUDED) & target
                case_y = np.log1p(truth[train_cases])
                case_model = fit(X_num[train_cases][:, idx], case_y, "quantile", cols)
                for i in test:
                    per = [rounded(kind, v) for v in np.expm1(pd_model.predict(tests[i][:, idx]))]
                    one = rounded(kind, float(np.expm1(case_model.predict(X_num[i:i + 1, idx])[0])))
                    per_scores.append(relative_score(sum(set(per)), truth[i]))
                    case_scores.append(relative_score(one, truth[i]))
        per_mean, case_mean = float(np.mean(per_scores)), float(np.mean(case_scores))
        used = per_mean > case_mean + TOL
        p.per_defendant[kind] = {"used": used, "cv_per_defendant": round(per_mean, 5),
                                    "cv_case_level": round(case_mean, 5), "rows": int(usable.sum())}
        if used:
            rows = usable & (case_of < n_complete) if partial == EXCLUDED else usable
            p.models[kind] = fit(X[rows][:, idx], labels[rows], "quantile", cols, weight[rows])


TRAIN_ONLY_IF = {True: TRAIN_ONLY, False: EXCLUDED}  # the partial cases train, or take no part


def regression_months(months: int | None) -> float:
    """Months for regression: life and death count as 240; NaN where the clause states no term."""
    if months is None:
        return float("nan")
    return float(LIFE_MONTHS if months >= LIFE_MONTHS else months)


def rounded(kind: str, value: float) -> int:
    return max(1, int(round(value))) if kind == "prison" else round_fine(value)


def round_fine(yuan: float) -> int:
    """Courts fine in round sums: to the nearest thousand (at least one thousand)."""
    return int(max(1000, round(yuan / 1000.0) * 1000))
