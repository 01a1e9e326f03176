"""Evaluate citation prediction stage by stage: precision, recall and F1 (micro and macro) after each stage.

With development cases, each row's selection rule is calibrated on them (top-k for the ranked rows, a score
threshold for the pooled rows) and then applied unchanged to the evaluation cases. Without them the
configured ``core_k`` and ``threshold`` are used.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Collection, Mapping, Sequence

from legalrag.citepredict.data import Case
from legalrag.citepredict.pipeline import CitationPredictor, CiteResult
from legalrag.citepredict.select import calibrate_threshold, calibrate_top_k, select
from legalrag.evaluation.metrics import macro_prf, micro_prf

ROWS = (("retrieval top-k", "ranking"), ("+ rerank", "reranked"), ("+ always-add", "always-add"),
        ("+ clusters", "clusters"), ("+ co-citation", "co-citation"), ("+ similar cases", "similar-cases"),
        ("+ learned set", "learned-set"), ("+ verification", "verification"))
# rows whose decision a set model makes (its own cross-fitted rule, cut at 0.5): never recalibrated on dev
SET_ROWS = ("+ learned set", "+ verification")


@dataclass(frozen=True)
class StageRow:
    stage: str
    rule: str  # "top-3" or "score >= 0.35"
    precision: float
    recall: float
    f1: float
    macro_precision: float
    macro_recall: float
    macro_f1: float
    mean_size: float


@dataclass(frozen=True)
class CiteReport:
    rows: tuple[StageRow, ...]
    n_cases: int
    n_dev: int
    llm_calls_per_case: float
    seconds_per_case: float
    calibration: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"n_cases": self.n_cases, "n_dev": self.n_dev, "llm_calls_per_case": self.llm_calls_per_case,
                "seconds_per_case": self.seconds_per_case, "calibration": dict(self.calibration),
                "stages": [asdict(r) for r in self.rows]}


def run_cases(predictor: CitationPredictor, cases: Sequence[Case], progress: bool = False,
              desc: str = "cite") -> list[CiteResult]:
    it: Any = cases
    if progress:
        from tqdm import tqdm

        it = tqdm(cases, desc=desc, unit="case")
    return [predictor.predict(c.facts) for c in it]


def _stage_sets(results: Sequence[CiteResult], source: str, rule: tuple[str, float]) -> list[set[str]]:
    kind, value = rule
    if kind == "top":
        return [set(getattr(r, source)[: int(value)]) for r in results]
    return [select(r.pools[source], value) for r in results]


def calibrate(results: Sequence[CiteResult], gold: Sequence[Collection[str]], max_k: int = 10,
              set_model: bool = False) -> dict[str, tuple[str, float]]:
    """The best selection rule per row on development results; with ``set_model`` the rows it decides keep its
    cut (0.5)."""
    rules: dict[str, tuple[str, float]] = {}
    for row, source in ROWS:
        if set_model and row in SET_ROWS:
            rules[row] = ("threshold", 0.5)
            continue
        if source in ("ranking", "reranked"):
            k, _ = calibrate_top_k([getattr(r, source) for r in results], gold, max_k=max_k)
            rules[row] = ("top", float(k))
        else:
            t, _ = calibrate_threshold([r.pools[source] for r in results], gold)
            rules[row] = ("threshold", t)
    return rules


def report(results: Sequence[CiteResult], gold: Sequence[Collection[str]], rules: Mapping[str, tuple[str, float]],
           n_dev: int = 0, seconds: float | None = None) -> CiteReport:
    rows = []
    for row, source in ROWS:
        rule = rules[row]
        sets = _stage_sets(results, source, rule)
        mi, ma = micro_prf(sets, gold), macro_prf(sets, gold)
        label = f"top-{int(rule[1])}" if rule[0] == "top" else f"score >= {rule[1]:.3g}"
        rows.append(StageRow(row, label, round(mi["precision"], 4), round(mi["recall"], 4), round(mi["f1"], 4),
                             round(ma["precision"], 4), round(ma["recall"], 4), round(ma["f1"], 4),
                             round(sum(len(s) for s in sets) / max(len(sets), 1), 2)))
    n = max(len(results), 1)
    secs = seconds if seconds is not None else sum(r.seconds for r in results)
    return CiteReport(tuple(rows), len(results), n_dev, round(sum(r.llm_calls for r in results) / n, 2),
                      round(secs / n, 3), {k: list(v) for k, v in rules.items()})


def stage_sets(results: Sequence[CiteResult], rules: Mapping[str, tuple[str, float]]) -> dict[str, list[set[str]]]:
    """Row -> the predicted set of each case after that row, under the row's selection rule."""
    return {row: _stage_sets(results, source, rules[row]) for row, source in ROWS}


def compare_stages(a: Sequence[CiteResult], b: Sequence[CiteResult], gold: Sequence[Collection[str]],
                   rules: Mapping[str, tuple[str, float]], trials: int = 10_000) -> dict[str, dict[str, float]]:
    """Row by row, whether run ``a`` (e.g. with the LLM) differs from ``b`` on the same cases: the mean per-case
    F1 difference (macro F1 of a minus b) and its two-sided paired randomization p-value."""
    from legalrag.evaluation.compare import paired_randomization_test, sign_flips
    from legalrag.evaluation.metrics import set_prf

    if not len(a) == len(b) == len(gold):
        raise ValueError(f"runs of {len(a)} and {len(b)} cases with {len(gold)} gold sets: they must match")
    signs = sign_flips(len(gold), trials)
    sets_a, sets_b = stage_sets(a, rules), stage_sets(b, rules)
    out = {}
    for row, _ in ROWS:
        fa = [set_prf(p, g)[2] for p, g in zip(sets_a[row], gold)]
        fb = [set_prf(p, g)[2] for p, g in zip(sets_b[row], gold)]
        diff = (sum(fa) - sum(fb)) / max(len(gold), 1)
        out[row] = {"macro_f1_diff": round(diff, 4), "p": paired_randomization_test(fa, fb, signs=signs)}
    return out


def evaluate(predictor: CitationPredictor, cases: Sequence[Case], dev_cases: Sequence[Case] = (),
             progress: bool = False, rules: Mapping[str, tuple[str, float]] | None = None
             ) -> tuple[CiteReport, list[CiteResult]]:
    """Run the pipeline over ``cases`` and report every stage; calibrate on ``dev_cases`` when given."""
    if rules is None:
        if dev_cases:
            dev = run_cases(predictor, dev_cases, progress, desc="cite (dev)")
            rules = calibrate(dev, [c.gold for c in dev_cases], set_model=predictor.set_model is not None)
        else:
            cfg = predictor.config
            rules = {row: (("top", float(cfg.core_k)) if src in ("ranking", "reranked") else ("threshold", cfg.threshold))
                     for row, src in ROWS}
    start = time.perf_counter()
    results = run_cases(predictor, cases, progress, desc="cite")
    rep = report(results, [c.gold for c in cases], rules, n_dev=len(dev_cases), seconds=time.perf_counter() - start)
    return rep, results
