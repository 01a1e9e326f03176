"""Predict the structure of a criminal judgment from its facts: charges, articles, prison months, fine, probation.

Five small LightGBM models trained on labelled cases (facts + gold judgment), each over rule features
(``features.py``) and signals (``signals.py``):

- **charges**: one row per candidate charge (explicit mentions such as ``指控被告人…犯盗窃罪``, charge keywords,
  charges of similar cases); a binary model scores each, those above a threshold chosen by 5-fold cross-fitting
  on the training cases are kept (always at least one);
- **articles**: one row per candidate Criminal Law article (the citation-prediction pipeline's pool, the
  articles that go with the predicted charges and with the circumstances found, similar cases' articles);
  same selection;
- **prison months** and **fine** (quantile regression at the median of the log amount, which suits the
  benchmark's relative score), the fine behind a yes/no model; the term is clipped to the statutory range of
  the charge's article where the statute corpus states one;
- **probation** (缓刑) yes/no.

Every prediction carries its evidence: the spans, neighbours and table counts behind a charge or article, the
largest feature contributions (LightGBM ``pred_contrib``) behind a number. The saved model is a directory of
JSON and LightGBM text files (``save`` / ``load``), written atomically; nothing is pickled.

Ablations: ``disabled`` names feature groups (``features.GROUPS``) or signals (``explicit``, ``keywords``,
``neighbours``, ``citepred``, ``tables``, ``statutory``) that are switched off in training and prediction.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from legalrag.errors import InputError
from legalrag.judgment.features import GROUPS, FactFeatures, extract_features
from legalrag.judgment.labels import LabelledCase
from legalrag.judgment.signals import (CoTable, Neighbour, NeighbourIndex, charge_mentions, keyword_hits, share,
                                       statutory_ranges, vote)
from legalrag.types import Document

FORMAT = 1
SIGNALS = ("explicit", "keywords", "neighbours", "citepred", "tables", "statutory")
K_NEIGHBOURS = 10
GENERAL_PART = 101  # articles 1-101 are the general part; a charge's own article is above it
_PARAMS = {"num_leaves": 8, "min_data_in_leaf": 5, "learning_rate": 0.05, "feature_fraction": 0.9,
           "verbose": -1, "seed": 7, "deterministic": True, "num_threads": 1, "force_col_wise": True}
ROUNDS = 150
FOLDS = 5


@dataclass
class _Tables:
    charge_counts: Counter
    article_counts: Counter
    charge_articles: CoTable
    circ_articles: CoTable
    n: int
    ids: list


def _lgb():
    from legalrag._optional import require

    return require("lightgbm", "dense")  # the dense extra carries lightgbm (also used by the learned ranker)


# ----------------------------------------------------------------------------------------- predictions

@dataclass(frozen=True)
class Scored:
    """One predicted charge or article, its probability and why."""

    name: str
    prob: float
    evidence: Mapping[str, Any] = field(default_factory=dict)
    listed: bool = True  # False: a charge named in the facts but not in the charge list (kept, flagged)

    def to_dict(self) -> dict:
        return {"name": self.name, "prob": round(self.prob, 4), "listed": self.listed, "evidence": dict(self.evidence)}


@dataclass(frozen=True)
class Amount:
    """A predicted number (months or yuan) with the model's largest feature contributions and the neighbours'."""

    value: int | None
    raw: float | None = None
    prob: float | None = None  # for the fine: P(a fine is imposed)
    evidence: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"value": self.value, "raw": None if self.raw is None else round(self.raw, 2),
                "prob": None if self.prob is None else round(self.prob, 4), "evidence": dict(self.evidence)}


@dataclass(frozen=True)
class Structure:
    """The predicted decision for one case."""

    charges: tuple[Scored, ...]
    articles: tuple[Scored, ...]
    prison: Amount
    fine: Amount
    probation: Amount  # value 1 / 0
    defendants: tuple[str, ...]
    features: FactFeatures
    notes: tuple[str, ...] = ()
    low_confidence: bool = False

    @property
    def charge_names(self) -> list[str]:
        return [c.name for c in self.charges]

    @property
    def article_numbers(self) -> list[int]:
        return sorted(int(a.name) for a in self.articles)

    def to_dict(self) -> dict:
        return {"charges": [c.to_dict() for c in self.charges], "articles": [a.to_dict() for a in self.articles],
                "prison_months": self.prison.to_dict(), "fine_yuan": self.fine.to_dict(),
                "probation": self.probation.to_dict(), "defendants": list(self.defendants),
                "features": self.features.to_dict(), "notes": list(self.notes),
                "low_confidence": self.low_confidence}


# ----------------------------------------------------------------------------------------------- model

@dataclass
class _Context:
    """What every predictor of one case reads: features, neighbours and the citation pipeline's pool."""

    id: str | None
    facts: str
    features: FactFeatures
    neighbours: list[Neighbour]
    cite_pool: dict[str, float]


class StructurePredictor:
    """Trained with :meth:`train`, saved with :meth:`save`, read back with :meth:`load`."""

    def __init__(self, cases: Sequence[LabelledCase], statutes: Sequence[Document], *, cite=None,
                 disabled: Iterable[str] = ()):
        unknown = set(disabled) - set(GROUPS) - set(SIGNALS)
        if unknown:
            raise InputError(f"unknown ablation {sorted(unknown)}; choose from {sorted(GROUPS) + list(SIGNALS)}")
        if not cases:
            raise InputError("no labelled cases to learn from; every case was skipped or none was given")
        self.cases = {c.id: c for c in cases}
        self.statutes = list(statutes)
        self.cite = cite  # a citepred CitationPredictor (or None: no citation-pipeline signal)
        self.disabled = frozenset(disabled)
        self.columns = [c for g, cols in GROUPS.items() if g not in self.disabled for c in cols]
        self.neighbours = NeighbourIndex(list(self.cases), [c.facts for c in cases])
        self.ranges = statutory_ranges(self.statutes)
        self._circ_of = {c.id: self._circ_keys(extract_features(c.facts)) for c in cases}
        self.full = self._build_tables(cases)
        # Training rows read tables counted without their own fold: a leave-one-out count would reveal the
        # row's own label to the model (the count drops by one exactly when the label is positive).
        self.fold_of = {cid: i % FOLDS for i, cid in enumerate(self.cases)}
        self.fold_tables = {f: self._build_tables([c for c in cases if self.fold_of[c.id] != f])
                            for f in range(FOLDS)}
        self.charge_counts = self.full.charge_counts
        self.models: dict[str, Any] = {}
        self.thresholds: dict[str, float] = {}
        self.skipped: list[tuple[str, str]] = []

    def _build_tables(self, cases: Sequence[LabelledCase]) -> "_Tables":
        t = _Tables(Counter(ch for c in cases for ch in c.charges), Counter(str(a) for c in cases for a in c.articles),
                    CoTable(), CoTable(), len(cases), [c.id for c in cases])
        for c in cases:
            t.charge_articles.add(c.charges, map(str, c.articles))
            t.circ_articles.add(self._circ_of[c.id], map(str, c.articles))
        return t

    def _tables(self, case_id: str | None) -> "_Tables":
        return self.fold_tables[self.fold_of[case_id]] if case_id in self.cases else self.full

    # -------------------------------------------------------------------------------------- context
    def _on(self, signal: str) -> bool:
        return signal not in self.disabled

    def _circ_keys(self, f: FactFeatures) -> list[str]:
        keys = [n for n in f.circumstances]
        if f.values.get("defendants", 1) > 1:
            keys.append("多名被告人")
        if "amount_max" in f.values:
            keys.append("有金额")
        if "drug_grams" in f.values:
            keys.append("有毒品")
        return keys

    def context(self, facts: str, case_id: str | None = None) -> _Context:
        feats = extract_features(facts)
        nbs = self.neighbours.search(facts, K_NEIGHBOURS, exclude=[case_id] if case_id else ()) \
            if self._on("neighbours") else []
        pool: dict[str, float] = {}
        if self.cite is not None and self._on("citepred"):
            res = self.cite.predict(facts)
            stage = "co-citation" if "co-citation" in res.pools else (list(res.pools)[-1] if res.pools else None)
            pool = dict(res.pools.get(stage, {})) if stage else {}
            for p in res.predictions:
                pool.setdefault(p.provision, p.score)
        return _Context(case_id, facts, feats, nbs, pool)

    def _case_row(self, ctx: _Context) -> list[float]:
        v = ctx.features.values
        row = [float(v.get(c, 0.0)) for c in self.columns]
        return row

    # ------------------------------------------------------------------------------------ charges
    def _charge_candidates(self, ctx: _Context) -> dict[str, dict[str, Any]]:
        cands: dict[str, dict[str, Any]] = {}
        if self._on("explicit"):
            mentions = [m for m in charge_mentions(ctx.facts) if m.name]
            for i, m in enumerate(mentions):
                e = cands.setdefault(m.name, {})
                e.setdefault("mentions", []).append({"text": m.written, "span": [m.start, m.end]})
                if i == 0:
                    e["first_mention"] = True
        if self._on("keywords"):
            for name, pos in keyword_hits(ctx.facts).items():
                cands.setdefault(name, {})["keyword_positions"] = pos[:5]
                cands[name]["keyword_count"] = len(pos)
        if ctx.neighbours:
            votes = vote(ctx.neighbours, {i: self.cases[i].charges for i in self.cases})
            for name, s in votes.items():
                cands.setdefault(name, {})["vote"] = round(s, 4)
            top = self.cases[ctx.neighbours[0].id].charges
            for name in top:
                cands.setdefault(name, {})["top_neighbour"] = ctx.neighbours[0].id
        return cands

    def _charge_row(self, ctx: _Context, name: str, e: Mapping[str, Any]) -> list[float]:
        t = self._tables(ctx.id)
        n = max(len(ctx.facts), 1)
        kp = e.get("keyword_positions") or []
        return [float(len(e.get("mentions", []))), float(bool(e.get("first_mention"))),
                float(e.get("keyword_count", 0)), (kp[0] / n) if kp else 1.0, float(e.get("vote", 0.0)),
                float("top_neighbour" in e), share(t.charge_counts, t.n, name),
                float(len(name))]

    CHARGE_COLUMNS = ["mentions", "first_mention", "keyword_count", "keyword_first_pos", "vote", "top_neighbour",
                      "prior", "name_len"]

    # ----------------------------------------------------------------------------------- articles
    def _article_candidates(self, ctx: _Context, charges: Sequence[str]) -> dict[str, dict[str, Any]]:
        cands: dict[str, dict[str, Any]] = {}
        for p, s in ctx.cite_pool.items():
            if p.isdigit():
                cands.setdefault(p, {})["citepred"] = round(float(s), 4)
        t = self._tables(ctx.id)
        circ = self._circ_keys(ctx.features)
        if self._on("tables"):
            for ch in charges:
                for a in t.charge_articles.items_for(ch):
                    p = t.charge_articles.prob(ch, a)
                    if p > 0:
                        e = cands.setdefault(a, {})
                        if p > e.get("charge_p", 0):
                            e["charge_p"], e["charge"] = round(p, 4), ch
            for k in circ:
                for a in t.circ_articles.items_for(k):
                    p = t.circ_articles.prob(k, a, min_count=3)
                    if p >= 0.2:
                        e = cands.setdefault(a, {})
                        if p > e.get("circ_p", 0):
                            e["circ_p"], e["circumstance"] = round(p, 4), k
        if ctx.neighbours:
            votes = vote(ctx.neighbours, {i: [str(a) for a in self.cases[i].articles] for i in self.cases})
            for a, s in votes.items():
                cands.setdefault(a, {})["vote"] = round(s, 4)
        return cands

    def _article_row(self, ctx: _Context, art: str, e: Mapping[str, Any], case_row: list[float],
                     probs: Mapping[str, float]) -> list[float]:
        t = self._tables(ctx.id)
        frequent = self.full.article_counts.get(art, 0) >= 8
        return [float(e.get("citepred", 0.0)), float(e.get("charge_p", 0.0)), float(e.get("circ_p", 0.0)),
                float(e.get("vote", 0.0)), share(t.article_counts, t.n, art),
                float(int(art)) if frequent else -1.0, float(int(art) > GENERAL_PART),
                probs["fine"], probs["probation"]] + case_row

    @property
    def article_columns(self) -> list[str]:
        return ["citepred", "charge_p", "circ_p", "vote", "prior", "article", "specific", "p_fine",
                "p_probation"] + self.columns

    # ------------------------------------------------------------------------------ numbers (case level)
    def _neighbour_stats(self, ctx: _Context) -> dict[str, float]:
        nbs = ctx.neighbours
        total = sum(n.weight for n in nbs) or 1.0
        cases = [self.cases[n.id] for n in nbs]
        logs = [math.log1p(c.prison_capped) for c in cases]
        fines = [(n.weight, math.log1p(c.fine_yuan)) for n, c in zip(nbs, cases) if c.fine_yuan]
        return {
            "prison_wmean": sum(n.weight * x for n, x in zip(nbs, logs)) / total if nbs else 0.0,
            "prison_median": sorted(logs)[len(logs) // 2] if logs else 0.0,
            "prison_top1": logs[0] if logs else 0.0,
            "fine_share": sum(n.weight for n, c in zip(nbs, cases) if c.fine_yuan) / total if nbs else 0.0,
            "fine_wmean": sum(w * x for w, x in fines) / (sum(w for w, _ in fines) or 1.0) if fines else 0.0,
            "probation_share": sum(n.weight for n, c in zip(nbs, cases) if c.probation) / total if nbs else 0.0,
        }

    def _charge_stats(self, charges: Sequence[str], own_id: str | None) -> dict[str, float]:
        allowed = set(self._tables(own_id).ids)
        same = [c for c in self.cases.values() if c.id in allowed and charges and charges[0] in c.charges]
        pool = same or [c for c in self.cases.values() if c.id in allowed]
        logs = sorted(math.log1p(c.prison_capped) for c in pool)
        fines = [math.log1p(c.fine_yuan) for c in pool if c.fine_yuan]
        return {"charge_prison_median": logs[len(logs) // 2] if logs else 0.0,
                "charge_fine_share": sum(1 for c in pool if c.fine_yuan) / len(pool) if pool else 0.0,
                "charge_fine_mean": sum(fines) / len(fines) if fines else 0.0,
                "charge_probation_share": sum(c.probation for c in pool) / len(pool) if pool else 0.0,
                "charge_cases": float(len(same)), "n_charges": float(len(charges))}

    NB_COLUMNS = ["prison_wmean", "prison_median", "prison_top1", "fine_share", "fine_wmean", "probation_share"]
    CH_COLUMNS = ["charge_prison_median", "charge_fine_share", "charge_fine_mean", "charge_probation_share",
                  "charge_cases", "n_charges"]

    @property
    def number_columns(self) -> list[str]:
        return ["nb_" + c for c in self.NB_COLUMNS] + self.CH_COLUMNS + self.columns

    def _number_row(self, ctx: _Context, charges: Sequence[str]) -> list[float]:
        nb = self._neighbour_stats(ctx)
        ch = self._charge_stats(charges, ctx.id)
        return [nb[c] for c in self.NB_COLUMNS] + [ch[c] for c in self.CH_COLUMNS] + self._case_row(ctx)

    # -------------------------------------------------------------------------------------- training
    def train(self, progress: bool = False) -> "StructurePredictor":
        import numpy as np

        cases = list(self.cases.values())
        it = cases
        if progress:
            from tqdm import tqdm

            it = tqdm(cases, desc="training features", unit="case")
        ch_rows, ch_y, ch_case = [], [], []
        ar_rows, ar_y, ar_case = [], [], []
        num_rows, contexts = [], []
        for i, c in enumerate(it):
            ctx = self.context(c.facts, c.id)
            contexts.append(ctx)
            for name, e in self._charge_candidates(ctx).items():
                ch_rows.append(self._charge_row(ctx, name, e))
                ch_y.append(int(name in c.charges))
                ch_case.append(i)
            num_rows.append(self._number_row(ctx, c.charges))
        X_num = np.array(num_rows, dtype=float)
        prison = np.array([math.log1p(c.prison_capped) for c in cases])
        self.models["prison"] = self._fit(X_num, prison, "quantile", self.number_columns)
        has_fine = np.array([int(bool(c.fine_yuan)) for c in cases])
        self.models["fine_present"] = self._fit(X_num, has_fine, "binary", self.number_columns)
        mask = has_fine == 1
        if mask.sum() >= 10:
            fines = np.array([math.log1p(c.fine_yuan or 0) for c in cases])
            self.models["fine"] = self._fit(X_num[mask], fines[mask], "quantile", self.number_columns)
        on_probation = np.array([int(c.probation) for c in cases])
        self.models["probation"] = self._fit(X_num, on_probation, "binary", self.number_columns)
        # The article model reads P(fine) and P(probation) (arts. 52/53, 72/73 follow them); training rows get
        # out-of-fold probabilities so the model learns how far to trust the predicted ones.
        fine_oof = self._out_of_fold(X_num, has_fine, self.number_columns)
        prob_oof = self._out_of_fold(X_num, on_probation, self.number_columns)
        for i, (c, ctx) in enumerate(zip(cases, contexts)):
            case_row = self._case_row(ctx)
            probs = {"fine": float(fine_oof[i]), "probation": float(prob_oof[i])}
            for art, e in self._article_candidates(ctx, c.charges).items():
                ar_rows.append(self._article_row(ctx, art, e, case_row, probs))
                ar_y.append(int(int(art) in c.articles))
                ar_case.append(i)
        for kind, rows, y, idx, cols in (("charge", ch_rows, ch_y, ch_case, self.CHARGE_COLUMNS),
                                         ("article", ar_rows, ar_y, ar_case, self.article_columns)):
            X, Y, G = np.array(rows, dtype=float), np.array(y), np.array(idx)
            self.models[kind] = self._fit(X, Y, "binary", cols)
            self.thresholds[kind] = self._cross_fit_threshold(X, Y, G, len(cases), cols)
        return self

    def _out_of_fold(self, X, y, columns, folds: int = FOLDS):
        import numpy as np

        out = np.zeros(len(y))
        fold_of = np.arange(len(y)) % folds
        for f in range(folds):
            test = fold_of == f
            out[test] = self._fit(X[~test], y[~test], "binary", columns).predict(X[test])
        return out

    @staticmethod
    def _fit(X, y, objective: str, columns: Sequence[str]):
        lgb = _lgb()
        params = dict(_PARAMS, objective=objective)
        if objective == "quantile":
            params["alpha"] = 0.5
        if objective == "binary" and len(set(y.tolist())) < 2:
            params["objective"] = "regression"  # one class only: a constant model, still a valid booster
        ds = lgb.Dataset(X, label=y, feature_name=[_safe(c) for c in columns], free_raw_data=False)
        return lgb.train(params, ds, num_boost_round=ROUNDS)

    def _cross_fit_threshold(self, X, Y, G, n_cases: int, columns, folds: int = FOLDS) -> float:
        """The selection threshold that maximises the benchmark's F1 (averaged P and R) out of fold."""
        import numpy as np

        probs = np.zeros(len(Y))
        fold_of = np.arange(n_cases) % folds
        for f in range(folds):
            test = fold_of[G] == f
            if test.sum() == 0 or (~test).sum() == 0:
                continue
            model = self._fit(X[~test], Y[~test], "binary", columns)
            probs[test] = model.predict(X[test])
        best, best_f1 = 0.5, -1.0
        for t in list(np.arange(0.1, 0.96, 0.05)) + [1.01]:  # 1.01: keep the best candidate only
            ps, rs = [], []
            for case in range(n_cases):
                rows = np.where(G == case)[0]
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
        return best

    # ------------------------------------------------------------------------------------ predicting
    def predict(self, facts: str, case_id: str | None = None) -> Structure:
        import numpy as np

        if not self.models:
            raise InputError("the structure predictor is not trained; call train() or load a model directory")
        if not isinstance(facts, str) or not facts.strip():
            raise InputError("the case facts are empty", field="facts")
        notes: list[str] = list(extract_features(facts).notes)
        ctx = self.context(facts, case_id)
        low = False
        # charges
        cands = self._charge_candidates(ctx)
        chosen: list[Scored] = []
        if cands:
            names = list(cands)
            probs = self.models["charge"].predict(np.array([self._charge_row(ctx, n, cands[n]) for n in names]))
            order = sorted(range(len(names)), key=lambda i: -probs[i])
            keep = [i for i in order if probs[i] >= self.thresholds["charge"]] or order[:1]
            chosen = [Scored(names[i], float(probs[i]), cands[names[i]]) for i in keep]
            best = cands[names[order[0]]]
            if not best.get("mentions") and not best.get("keyword_positions"):
                low = True
                notes.append(f"low confidence in the charge: {names[order[0]]} rests on similar cases only "
                             "(the facts neither name it nor describe its conduct in known words)")
            elif probs[order[0]] < 0.5:
                low = True
                notes.append(f"low confidence in the charge: best candidate {names[order[0]]} at p={probs[order[0]]:.2f}")
        else:
            top = self.charge_counts.most_common(1)[0][0]
            chosen = [Scored(top, share(self.full.charge_counts, self.full.n, top), {"rule": "most frequent charge in "
                      "the labelled cases (no candidate found in the facts)"})]
            low = True
            notes.append("no recognisable charge in the facts: the most frequent training charge is given, low confidence")
        unlisted = {m.written: m for m in charge_mentions(facts) if not m.name}
        for written, m in unlisted.items():
            notes.append(f"charge {written!r} named in the facts is not in the charge list: kept and flagged")
        extra = tuple(Scored(w, 0.0, {"mentions": [{"text": m.written, "span": [m.start, m.end]}],
                                      "flag": "not in the charge list"}, listed=False) for w, m in unlisted.items())
        charges = [c.name for c in chosen]
        # numbers
        X = np.array([self._number_row(ctx, charges)])
        prison_raw = float(np.expm1(self.models["prison"].predict(X)[0]))
        months = max(1, int(round(prison_raw)))
        prison_ev = self._contributions("prison", X)
        rng = self._range_for(charges)
        if rng and self._on("statutory"):
            lo, hi = rng[1]
            clipped = min(max(months, lo), hi)
            prison_ev["statutory_range"] = {"article": rng[0], "months": [lo, hi], "clipped": clipped != months}
            months = clipped
        prison_ev["neighbours"] = [{"id": n.id, "weight": round(n.weight, 3), "months": self.cases[n.id].prison_months}
                                   for n in ctx.neighbours[:5]]
        p_fine = float(self.models["fine_present"].predict(X)[0])
        fine_value, fine_raw = None, None
        if p_fine >= 0.5 and "fine" in self.models:
            fine_raw = float(np.expm1(self.models["fine"].predict(X)[0]))
            fine_value = _round_fine(fine_raw)
        fine_ev = self._contributions("fine" if "fine" in self.models else "fine_present", X)
        fine_ev["neighbours"] = [{"id": n.id, "fine": self.cases[n.id].fine_yuan} for n in ctx.neighbours[:5]]
        p_prob = float(self.models["probation"].predict(X)[0])
        probation = Amount(int(p_prob >= 0.5), p_prob, p_prob, self._contributions("probation", X))
        # articles (after charges and numbers: the article model reads the predicted charges)
        acands = self._article_candidates(ctx, charges)
        articles: list[Scored] = []
        if acands:
            case_row = self._case_row(ctx)
            names = list(acands)
            probs = self.models["article"].predict(np.array([self._article_row(ctx, a, acands[a], case_row,
                                                                                    {"fine": p_fine, "probation": p_prob})
                                                             for a in names]))
            order = sorted(range(len(names)), key=lambda i: -probs[i])
            keep = [i for i in order if probs[i] >= self.thresholds["article"]] or order[:1]
            articles = [Scored(names[i], float(probs[i]), acands[names[i]]) for i in sorted(keep, key=lambda i: int(names[i]))]
        else:
            low = True
            notes.append("no candidate article: none predicted")
        return Structure(tuple(chosen) + extra, tuple(articles), Amount(months, prison_raw, None, prison_ev),
                         Amount(fine_value, fine_raw, p_fine, fine_ev), probation,
                         tuple(m.text[3:] for m in ctx.features.matches if m.name == "defendant"),
                         ctx.features, tuple(notes), low)

    def _range_for(self, charges: Sequence[str]) -> tuple[str, tuple[int, int]] | None:
        """The statutory range of the single predicted charge's own article (the most co-cited one)."""
        if len(charges) != 1:
            return None
        row = self.full.charge_articles.pairs.get(charges[0], {})
        specific = [(n, a) for a, n in row.items() if int(a) > GENERAL_PART and a in self.ranges]
        if not specific:
            return None
        art = max(specific)[1]
        return art, self.ranges[art]

    def _contributions(self, kind: str, X, top: int = 5) -> dict[str, Any]:
        contrib = self.models[kind].predict(X, pred_contrib=True)[0]
        names = self.number_columns
        pairs = sorted(zip(names, contrib[:-1], X[0]), key=lambda t: -abs(t[1]))[:top]
        return {"model": kind, "base": round(float(contrib[-1]), 4),
                "top_features": [{"feature": n, "value": round(float(v), 4), "contribution": round(float(c), 4)}
                                 for n, c, v in pairs if c != 0]}

    # ------------------------------------------------------------------------------------- persistence
    def save(self, path: str | Path, extra: Mapping[str, Any] | None = None) -> None:
        from legalrag.io import atomic_dir

        with atomic_dir(path) as tmp:
            manifest = {"format": FORMAT, "n_cases": len(self.cases), "disabled": sorted(self.disabled),
                        "columns": self.columns, "thresholds": self.thresholds, "rounds": ROUNDS,
                        "params": _PARAMS, "skipped": self.skipped, "uses_citepred": self.cite is not None,
                        **(extra or {})}
            (tmp / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2), encoding="utf-8")
            with (tmp / "cases.jsonl").open("w", encoding="utf-8") as fh:
                for c in self.cases.values():
                    fh.write(json.dumps({**c.to_dict(), "facts": c.facts}, ensure_ascii=False) + "\n")
            for kind, model in self.models.items():
                model.save_model(str(tmp / f"{kind}.lgb.txt"))
            if self.cite is not None:
                from legalrag.citepred.model import save_model

                save_model(tmp / "citepred", self.cite.rules, self.cite.graph, self.cite.config, None)

    @classmethod
    def load(cls, path: str | Path, statutes: Sequence[Document]) -> "StructurePredictor":
        p = Path(path)
        man_path = p / "manifest.json"
        if not man_path.exists():
            raise InputError("not a judgment structure model (manifest.json missing); train one with "
                             "`legalrag judgment train`", path=str(p))
        man = json.loads(man_path.read_text(encoding="utf-8"))
        if man.get("format") != FORMAT:
            raise InputError(f"model format {man.get('format')} is not {FORMAT}; retrain it", path=str(man_path))
        cases = []
        from legalrag.io import read_jsonl

        for _, r in read_jsonl(p / "cases.jsonl"):
            cases.append(LabelledCase(r["id"], r["facts"], tuple(r["charges"]), tuple(r["articles"]),
                                      r["prison_months"], r["fine_yuan"], r["probation"]))
        cite = None
        if man.get("uses_citepred") and (p / "citepred").is_dir():
            cite = build_cite(statutes, model_dir=p / "citepred")
        self = cls(cases, statutes, cite=cite, disabled=man.get("disabled", ()))
        lgb = _lgb()
        for f in p.glob("*.lgb.txt"):
            self.models[f.name[: -len(".lgb.txt")]] = lgb.Booster(model_file=str(f))
        self.thresholds = {k: float(v) for k, v in man["thresholds"].items()}
        self.skipped = [tuple(s) for s in man.get("skipped", [])]
        return self


def _safe(name: str) -> str:
    """LightGBM feature names must be ASCII-safe in its text format: Chinese names are kept as escapes."""
    return name.encode("unicode_escape").decode("ascii").replace("\\", "u_") if not name.isascii() else name


def _round_fine(yuan: float) -> int:
    """Courts fine in round sums: to the nearest thousand (at least one thousand)."""
    return int(max(1000, round(yuan / 1000.0) * 1000))


def build_cite(statutes: Sequence[Document], *, train_citations: str | Path | None = None,
               model_dir: str | Path | None = None):
    """The citation-prediction pipeline (retrieval, rules, co-citation; no LLM, no case memory: the structure
    model votes with its own neighbours) over ``statutes``, from training citation sets or a saved model."""
    from legalrag.citepred.model import resolve_parts
    from legalrag.citepred.pipeline import CitationPredictor
    from legalrag.retrieval.bm25 import BM25Retriever
    from legalrag.retrieval.tokenize import tokenizer_for

    rules, graph, config = resolve_parts(train_citations=train_citations, model_dir=model_dir,
                                         overrides={"core_k": 2, "prior_weight": 2.0, "use_cases": False}
                                         if model_dir is None else None)
    retriever = BM25Retriever.from_documents(list(statutes), tokenizer_for("zh"))
    return CitationPredictor(statutes, retriever, rules, graph, config=config)
