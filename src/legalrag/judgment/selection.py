"""Which case-level feature groups each structure model reads, chosen by K-fold cross-validation on the
training cases only.

With 200 labelled cases, a model offered every feature group over-fits (the article model especially: in the
ablations on held-out cases, removing the drug, people or citation-pipeline columns *raised* statute F1). So
``train judge-structure`` chooses, per model, the groups to keep by greedy backward elimination: starting from all
groups, it drops the group whose removal most improves the cross-validated score, and stops when no removal
improves it by more than ``tol``. Folds are fixed (case index modulo K, plus rotated repeats), so the choice
is deterministic. The evaluated cases are never seen.

Scores (higher is better; each the out-of-fold analogue of what the benchmark or the next stage reads):

- ``article``: the benchmark's F1 over cases (averaged P and R) at the best cross-fitted threshold;
- ``prison``, ``fine``: the benchmark's penalty score ``1 - |p - t| / max(p, t)`` on the predicted amounts;
- ``fine_present``, ``probation``: negative log loss (their probabilities feed the article model).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from legalrag.judgment.boosting import FOLDS, best_threshold, fit
from legalrag.judgment.metrics import relative_score

REPEATS = 2
TOL = 0.002


@dataclass(frozen=True)
class GroupSelection:
    """The groups one model keeps, the cross-validated score of every subset tried, and the final score."""

    kept: tuple[str, ...]
    score: float
    all_score: float
    trace: tuple[tuple[tuple[str, ...], float], ...] = field(default=())

    def to_dict(self) -> dict:
        return {"kept": list(self.kept), "cv_score": round(self.score, 5), "cv_score_all_groups": round(self.all_score, 5),
                "tried": [{"dropped": list(d), "cv_score": round(s, 5)} for d, s in self.trace]}


def fold_assignments(n_cases: int, folds: int = FOLDS, repeats: int = REPEATS) -> list[list[int]]:
    """Per repeat, each case's fold: repeat 0 is ``i % folds`` (the folds the rest of training uses); later
    repeats walk the cases with a stride coprime to ``n_cases`` so different cases share a fold."""
    out = []
    for r in range(repeats):
        stride = _coprime_stride(n_cases, 1 + 6 * r)
        out.append([((i * stride) % n_cases) % folds for i in range(n_cases)])
    return out


def _coprime_stride(n: int, start: int) -> int:
    s = max(1, start)
    while math.gcd(s, max(n, 1)) != 1:
        s += 1
    return s


def backward_eliminate(groups: Sequence[str], score: Callable[[frozenset], float], *, tol: float = TOL) -> GroupSelection:
    """Greedy backward elimination over ``groups``; ``score(kept)`` is the cross-validated score of a subset.
    Ties go to the earlier group in ``groups`` (deterministic); the empty subset is allowed."""
    kept = list(groups)
    cache: dict[frozenset, float] = {}

    def s(subset) -> float:
        key = frozenset(subset)
        if key not in cache:
            cache[key] = score(key)
        return cache[key]

    all_score = current = s(kept)
    trace = [((), all_score)]
    while kept:
        trials = [(g, s([k for k in kept if k != g])) for g in kept]
        for g, sc in trials:
            trace.append((tuple(x for x in groups if x not in kept or x == g), sc))
        g, best = max(trials, key=lambda t: t[1])  # max keeps the first of equal scores
        if best <= current + tol:
            break
        kept.remove(g)
        current = best
    return GroupSelection(tuple(kept), current, all_score, tuple(trace))


# ------------------------------------------------------------------------------------------------ scores

# An assignment gives each case a fold: folds >= 0 are predicted in turn by a model fitted on the other
# folds and the TRAIN_ONLY cases; EXCLUDED cases take no part (the outer fold of a nested check).
TRAIN_ONLY, EXCLUDED = -2, -1


def _oof(X, y, objective: str, columns, assignment: Sequence[int], groups_of_rows=None, weight=None):
    """Out-of-fold predictions (NaN for rows never predicted); ``groups_of_rows`` maps rows to cases (rows of
    one case share its fold); ``weight``: the training weight of each row (None: all 1)."""
    import numpy as np

    fold = np.array(assignment)[groups_of_rows] if groups_of_rows is not None else np.array(assignment)
    out = np.full(len(y), np.nan)
    for f in sorted(x for x in set(assignment) if x >= 0):
        test = fold == f
        train = (fold != f) & (fold != EXCLUDED)
        if test.sum() == 0 or train.sum() == 0:
            continue
        out[test] = fit(X[train], y[train], objective, columns,
                        None if weight is None else weight[train]).predict(X[test])
    return out


def penalty_cv(X, log_y, columns, assignments, weight=None) -> float:
    """Mean benchmark penalty score of out-of-fold median regressions of a log amount."""
    import numpy as np

    scores = []
    truth = np.expm1(log_y)
    for a in assignments:
        pred = np.maximum(np.expm1(_oof(X, log_y, "quantile", columns, a, weight=weight)), 0.0)
        for p, t in zip(pred, truth):
            if np.isnan(p):
                continue
            scores.append(relative_score(p, t))
    return float(np.mean(scores))


def logloss_cv(X, y, columns, assignments, weight=None) -> float:
    """Negative mean log loss of out-of-fold binary probabilities."""
    import numpy as np

    losses = []
    for a in assignments:
        p = _oof(X, y, "binary", columns, a, weight=weight)
        seen = ~np.isnan(p)
        p, t = np.clip(p[seen], 1e-6, 1 - 1e-6), y[seen]
        losses.extend(-(t * np.log(p) + (1 - t) * np.log(1 - p)))
    return -float(np.mean(losses))


def set_f1_cv(X, Y, G, n_cases: int, columns, assignments, weight=None) -> float:
    """The benchmark's set F1 of the candidate rows kept at the best threshold, out of fold (rows of a case
    share its fold), averaged over the repeats."""
    import numpy as np

    out = []
    for a in assignments:
        probs = _oof(X, Y, "binary", columns, a, groups_of_rows=G, weight=weight)
        tested = [c for c in range(n_cases) if a[c] >= 0]
        index = {c: k for k, c in enumerate(tested)}
        rows = np.array([r for r in range(len(Y)) if G[r] in index], dtype=int)
        out.append(best_threshold(probs[rows], Y[rows], np.array([index[G[r]] for r in rows]), len(tested))[1])
    return sum(out) / len(out)


def set_threshold_cv(X, Y, G, n_cases: int, columns, assignment: Sequence[int], weight=None) -> tuple[float, float]:
    """(threshold, F1): the selection threshold maximising the benchmark's set F1 out of fold over the cases
    whose fold is >= 0 (TRAIN_ONLY cases only ever train), and that F1. With ``i % FOLDS`` for every case it
    is the plain cross-fitted threshold."""
    import numpy as np

    probs = _oof(X, Y, "binary", columns, assignment, groups_of_rows=G, weight=weight)
    tested = [c for c in range(n_cases) if assignment[c] >= 0]
    index = {c: k for k, c in enumerate(tested)}
    rows = np.array([r for r in range(len(Y)) if G[r] in index], dtype=int)
    return best_threshold(probs[rows], Y[rows], np.array([index[G[r]] for r in rows], dtype=int), len(tested))


# The weights a partial-label (CAIL) row may carry, tried largest first: thousands of short CAIL facts at full
# weight can swamp the 200 JuDGE cases a model is scored on; a smaller weight keeps their charges and articles
# in the trees without setting every split.
PARTIAL_WEIGHTS = (1.0, 0.3, 0.1)


def partial_weight(score, complete, with_partial, without_partial) -> tuple[float, dict]:
    """(weight, scores): the largest of ``PARTIAL_WEIGHTS`` at which the partial-label cases (``complete`` is
    False) do not lower the complete cases' cross-validated score by more than ``TOL``, else 0; and every score
    tried. ``score(assignments, per-case weights or None)``; the assignments are ``partial_assignments``'s."""
    import numpy as np

    floor = score(without_partial, None)
    tried = {}
    for w in PARTIAL_WEIGHTS:
        tried[str(w)] = round(score(with_partial, np.where(complete, 1.0, w)), 5)
        if tried[str(w)] >= floor - TOL:
            return w, {"with_partial": tried, "complete_only": round(floor, 5)}
    return 0.0, {"with_partial": tried, "complete_only": round(floor, 5)}


def partial_assignments(n_complete: int, n_partial: int, folds: int = FOLDS) -> tuple[list[list[int]], list[list[int]]]:
    """Fold assignments over the complete cases (first) and the partial-label ones (after them): (the partial
    cases in every training fold, the partial cases left out). Only the complete cases are ever scored."""
    base = fold_assignments(n_complete, folds)
    return [a + [TRAIN_ONLY] * n_partial for a in base], [a + [EXCLUDED] * n_partial for a in base]


@dataclass(frozen=True)
class NestedCheck:
    """Whether selecting groups beats keeping them all on cases the selection never saw (outer folds)."""

    selected: float
    all_groups: float
    tol: float = TOL

    @property
    def helps(self) -> bool:
        """The same margin as an elimination step: a gain within ``tol`` is noise, and all groups stay."""
        return self.selected > self.all_groups + self.tol

    def to_dict(self) -> dict:
        return {"outer_score_selected": round(self.selected, 5), "outer_score_all_groups": round(self.all_groups, 5),
                "selection_used": self.helps}


def nested_check(groups: Sequence[str], score: Callable[[frozenset, list[list[int]]], float], n_cases: int,
                 folds: int = FOLDS, *, tol: float = TOL) -> NestedCheck:
    """Run the whole selection inside each outer fold's training cases, then score the groups it chose and all
    groups on the outer fold (models fitted on the other cases): an estimate, on the training cases only, of
    whether selection generalises or just fits the noise of its own cross-validation.
    ``score(kept, assignments)`` is the cross-validated score of a subset under the given fold assignments."""
    sel_scores, all_scores = [], []
    for o in range(folds):
        inner = [i for i in range(n_cases) if i % folds != o]
        inner_assign = []
        for a in fold_assignments(len(inner), folds):
            full = [EXCLUDED] * n_cases
            for k, i in enumerate(inner):
                full[i] = a[k]
            inner_assign.append(full)
        chosen = backward_eliminate(groups, lambda kept: score(kept, inner_assign), tol=tol).kept
        outer = [[0 if i % folds == o else TRAIN_ONLY for i in range(n_cases)]]
        sel_scores.append(score(frozenset(chosen), outer))
        all_scores.append(score(frozenset(groups), outer))
    return NestedCheck(sum(sel_scores) / folds, sum(all_scores) / folds, tol)


def column_index(fixed: Sequence[str], group_columns: Mapping[str, Sequence[str]], kept) -> list[int]:
    """Positions, in a row of ``fixed`` columns followed by every group's columns in order, of the fixed
    columns and those of the ``kept`` groups."""
    idx = list(range(len(fixed)))
    pos = len(fixed)
    for g, cols in group_columns.items():
        if g in kept:
            idx.extend(range(pos, pos + len(cols)))
        pos += len(cols)
    return idx
