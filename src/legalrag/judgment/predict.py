"""Predict the structure of a criminal judgment from its facts: charges, articles, prison months, fine, probation.

Five small LightGBM models (``boosting.py``) trained on labelled cases (facts + gold judgment), each over the
candidate and feature rows of ``candidates.py``, built from rule features (``features.py``) and signals
(``signals.py``):

- **charges**: one row per candidate charge (explicit mentions such as ``指控被告人…犯盗窃罪``, charge keywords,
  charges of similar cases); a binary model scores each, those above a threshold chosen by 5-fold cross-fitting
  on the training cases are kept (always at least one);
- **articles**: one row per candidate Criminal Law article (the citation-prediction pipeline's pool, the
  articles that go with the predicted charges and with the circumstances found, similar cases' articles);
  same selection;
- **prison months** and **fine** (quantile regression at the median of the log amount, which suits the
  benchmark's relative score), the fine behind a yes/no model; the term is clipped to the statutory range of
  the predicted charge's own article (an amended ``第X条之一`` article in the national corpus's wording where the
  charge has one, ``ranges.AMENDED_CHARGES``), or for several charges to the combined range of art. 69;
- **probation** (缓刑) yes/no.

Every prediction (``structure.py``) carries its evidence: the spans, neighbours and table counts behind a
charge or article, the largest feature contributions (LightGBM ``pred_contrib``) behind a number. The saved model is a directory of
JSON and LightGBM text files (``save`` / ``load``), written atomically; nothing is pickled.

Feature selection (``select``, on by default): each model except the charge model (which reads no case-level
group) keeps the case-level feature groups chosen by K-fold cross-validation on the training cases
(``selection.py``); the choice and the scores behind it are recorded in the model's manifest.

Ablations: ``disabled`` names feature groups (``features.GROUPS``) or signals (``explicit``, ``keywords``,
``neighbours``, ``citepred``, ``tables``, ``statutory``) that are switched off in training and prediction.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from legalrag.errors import InputError
from legalrag.judgment.boosting import fit, out_of_fold
from legalrag.judgment.candidates import GENERAL_PART, CaseRows
from legalrag.judgment.charge_decision import add_law_model, choose_charges, fit_law_model, unseen_own_articles
from legalrag.judgment.charge_decision import renamed_notes  # noqa: F401  (the charge names' notes, used here before)
from legalrag.judgment.defendants import defendant_rows
from legalrag.judgment.features import GROUPS, extract_features
from legalrag.judgment.labels import LabelledCase
from legalrag.judgment.model_dir import load_structure, save_structure
from legalrag.judgment.per_defendant import choose_per_defendant, round_fine
from legalrag.judgment.selection import backward_eliminate, column_index, fold_assignments, \
    logloss_cv, nested_check, partial_assignments, partial_weight, penalty_cv, set_f1_cv, set_threshold_cv
from legalrag.judgment.ranges import AMENDED_ARTICLES, AMENDED_CHARGES, combined_range, statutory_range, \
    statutory_ranges
from legalrag.judgment.circumstances import find_circumstances
from legalrag.judgment.inputs import check_language
from legalrag.judgment.structure import Amount, Scored, Structure
from legalrag.judgment.undecided import MIN_DECIDE_CHARS, undecided
from legalrag.types import Document

SIGNALS = ("explicit", "keywords", "neighbours", "citepred", "tables", "statutory", "charge_text")
SELECTED = ("prison", "fine_present", "fine", "probation", "article")  # models whose feature groups are chosen


class StructurePredictor(CaseRows):
    """Trained with :meth:`train`, saved with :meth:`save`, read back with :meth:`load`."""

    def __init__(self, cases: Sequence[LabelledCase], statutes: Sequence[Document], *, cite=None,
                 disabled: Iterable[str] = (), select: bool = True, per_defendant: bool = True, encoder=None,
                 neighbour_vectors=None, digests=None, circumstances=None, lexical=None, lexical_vectors=None):
        unknown = set(disabled) - set(GROUPS) - set(SIGNALS)
        if unknown:
            raise InputError(f"unknown ablation {sorted(unknown)}; choose from {sorted(GROUPS) + list(SIGNALS)}")
        if not cases:
            raise InputError("no labelled cases to learn from; every case was skipped or none was given")
        from legalrag.judgment.charge_text import ChargeText

        super().__init__(cases, cite=cite, disabled=disabled,
                         charge_text=ChargeText(statutes) if "charge_text" not in set(disabled) else None,
                         encoder=encoder, neighbour_vectors=neighbour_vectors, digests=digests,
                         circumstances=circumstances, lexical=lexical, lexical_vectors=lexical_vectors)
        self.statutes = list(statutes)
        self.ranges = statutory_ranges(self.statutes)
        self.texts = {str(d.id): d.text for d in self.statutes}
        self.models: dict[str, Any] = {}
        self.thresholds: dict[str, float] = {}
        self.cv_f1: dict[str, float] = {}  # out-of-fold F1 on the training cases at the chosen threshold
        self.skipped: list[tuple[str, str]] = []
        self.select = select
        self.groups = {g: GROUPS[g] for g in GROUPS if g not in self.disabled}  # the case-level groups offered
        self.model_groups: dict[str, tuple[str, ...]] = {}  # per model, the groups kept (absent: all offered)
        self.selection: dict[str, dict] = {}
        self.per_defendant_enabled = per_defendant
        self.per_defendant: dict[str, dict] = {}  # per kind (prison, fine): chosen or not, and the CV scores

    # -------------------------------------------------------------------------------------- training
    def train(self, progress: bool = False, partial_rows: Iterable[str] = ()) -> "StructurePredictor":
        """Fit the five models. They learn from the cases with full labels; the cases with partial labels
        (CAIL) named in ``partial_rows`` give rows too, to each model whose cross-validated score on the
        complete cases (those cases' folds predicted, the partial ones in every training fold) they do not
        lower by more than ``selection.TOL``, at the largest such weight of ``selection.PARTIAL_WEIGHTS``
        (``self.partial_use``: the weight, 0 for not used). They carry charges and articles the complete cases
        lack, which that score cannot see, so they are kept unless they cost the complete cases; every other
        partial case enters through the neighbours, the count tables and the charge centroids every row reads.
        Probation and the general-part articles are learned from the complete cases only."""
        import numpy as np

        wanted = set(partial_rows)
        complete = [c for c in self.cases.values() if c.complete]
        extra = [c for c in self.cases.values() if c.id in wanted and not c.complete]
        cases = complete + extra
        n_j = len(complete)
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
        has_fine = np.array([int(bool(c.fine_yuan)) for c in cases])
        mask = has_fine == 1
        fines = np.array([math.log1p(c.fine_yuan or 0) for c in cases])
        on_probation = np.array([int(c.probation) for c in cases])
        # probation is known for complete cases only (CAIL has no probation label)
        known = np.array([c.complete for c in cases])
        J = np.arange(len(cases)) < n_j  # the complete cases: feature selection and every score read them only
        n_fined = int(mask[J].sum())
        self._choose("prison", lambda idx, cols, a: penalty_cv(X_num[J][:, idx], prison[J], cols, a), n_j)
        self._choose("fine_present", lambda idx, cols, a: logloss_cv(X_num[J][:, idx], has_fine[J], cols, a), n_j)
        if n_fined >= 10:
            self._choose("fine", lambda idx, cols, a: penalty_cv(X_num[J & mask][:, idx], fines[J & mask], cols, a),
                         n_fined)
        self._choose("probation", lambda idx, cols, a: logloss_cv(X_num[known][:, idx], on_probation[known], cols, a),
                     int(known.sum()))
        self.partial_use, self.partial_cv = {}, {}
        with_p, without_p = partial_assignments(n_j, len(cases) - n_j)

        def decide(kind: str, score) -> tuple[np.ndarray, np.ndarray | None]:
            """(rows, per-case weights) the model of ``kind`` learns from (``selection.partial_weight``)."""
            use = 0.0
            if len(cases) > n_j:
                use, self.partial_cv[kind] = partial_weight(score, J, with_p, without_p)
            self.partial_use[kind] = use
            return (np.ones(len(cases), bool), np.where(J, 1.0, use)) if use else (J, None)

        def sub(w, rows):
            return None if w is None else w[rows]

        rows, w = decide("prison", lambda a, w: penalty_cv(X_num[:, self._idx("prison")], prison, self._cols("prison"),
                                                           a, w))
        self.models["prison"] = self._fit("prison", X_num[rows], prison[rows], "quantile", sub(w, rows))
        rows, w = decide("fine_present", lambda a, w: logloss_cv(X_num[:, self._idx("fine_present")], has_fine,
                                                                 self._cols("fine_present"), a, w))
        self.models["fine_present"] = self._fit("fine_present", X_num[rows], has_fine[rows], "binary", sub(w, rows))
        if n_fined >= 10:
            rows, w = decide("fine", lambda a, w: penalty_cv(X_num[mask][:, self._idx("fine")], fines[mask],
                                                             self._cols("fine"), [np.array(x)[mask].tolist() for x in a],
                                                             sub(w, mask)))
            self.models["fine"] = self._fit("fine", X_num[rows & mask], fines[rows & mask], "quantile",
                                            sub(w, rows & mask))
        self.models["probation"] = self._fit("probation", X_num[known], on_probation[known], "binary")
        self._choose_per_defendant(cases, contexts, X_num, n_j)
        # The article model reads P(fine) and P(probation) (arts. 52/53, 72/73 follow them); training rows get
        # out-of-fold probabilities so the model learns how far to trust the predicted ones.
        fine_oof = out_of_fold(X_num[:, self._idx("fine_present")], has_fine, self._cols("fine_present"))
        prob_oof = self._predict("probation", X_num)  # cases without a probation label: the fitted model
        prob_oof[known] = out_of_fold(X_num[known][:, self._idx("probation")], on_probation[known],
                                      self._cols("probation"))
        for i, (c, ctx) in enumerate(zip(cases, contexts)):
            case_row = self._case_row(ctx)
            probs = {"fine": float(fine_oof[i]), "probation": float(prob_oof[i])}
            for art, e in self._article_candidates(ctx, c.charges).items():
                if not c.complete and int(art) <= GENERAL_PART:
                    continue  # the case's labels say nothing of the general-part articles
                ar_rows.append(self._article_row(ctx, art, e, case_row, probs))
                ar_y.append(int(int(art) in c.articles))
                ar_case.append(i)
        X, Y, G = np.array(ch_rows, dtype=float), np.array(ch_y), np.array(ch_case)
        rows, w = decide("charge", lambda a, w: set_f1_cv(X, Y, G, len(cases), self.CHARGE_COLUMNS, a, sub(w, G)))
        rows, w = rows[G], sub(w, G)
        self.models["charge"] = fit(X[rows], Y[rows], "binary", self.CHARGE_COLUMNS, sub(w, rows))
        self.thresholds["charge"], self.cv_f1["charge"] = set_threshold_cv(
            X[rows], Y[rows], G[rows], len(cases), self.CHARGE_COLUMNS, (with_p if self.partial_use["charge"]
                                                                       else without_p)[0], sub(w, rows))
        X, Y, G = np.array(ar_rows, dtype=float), np.array(ar_y), np.array(ar_case)
        self._choose("article", lambda idx, cols, a: set_f1_cv(X[J[G]][:, idx], Y[J[G]], G[J[G]], n_j, cols, a), n_j)
        rows, w = decide("article", lambda a, w: set_f1_cv(X[:, self._idx("article")], Y, G, len(cases),
                                                           self._cols("article"), a, sub(w, G)))
        rows, w = rows[G], sub(w, G)
        self.models["article"] = self._fit("article", X[rows], Y[rows], "binary", sub(w, rows))
        self.thresholds["article"], self.cv_f1["article"] = set_threshold_cv(
            X[rows][:, self._idx("article")], Y[rows], G[rows], len(cases), self._cols("article"),
            (with_p if self.partial_use["article"] else without_p)[0], sub(w, rows))
        self.n_partial_rows = len(cases) - n_j
        return self

    # ------------------------------------------------------------------------------- several defendants
    def _choose_per_defendant(self, cases, contexts, X_num, n_complete: int) -> None:
        choose_per_defendant(self, cases, contexts, X_num, n_complete)

    def _uses_per_defendant(self, kind: str) -> bool:
        return bool(self.per_defendant.get(kind, {}).get("used"))

    # ----------------------------------------------------------------------------- feature selection
    def _fixed_columns(self, kind: str) -> list[str]:
        """The model's own columns, which come before the case-level groups in its rows."""
        return self.article_columns[: -len(self.columns) or None] if kind == "article" \
            else self.number_columns[: -len(self.columns) or None]

    def _idx(self, kind: str) -> list[int]:
        return column_index(self._fixed_columns(kind), self.groups, self.model_groups.get(kind, tuple(self.groups)))

    def _cols(self, kind: str) -> list[str]:
        full = self.article_columns if kind == "article" else self.number_columns
        return [full[i] for i in self._idx(kind)]

    def _fit(self, kind: str, X, y, objective: str, weight=None):
        return fit(X[:, self._idx(kind)], y, objective, self._cols(kind), weight)

    def _choose(self, kind: str, score, n_cases: int) -> None:
        """Keep the groups chosen by cross-validation for ``kind`` (all offered groups when selection is off)."""
        if not self.select or not self.groups:
            return
        assignments = fold_assignments(n_cases)

        def cv_with(kept, assign) -> float:
            idx = column_index(self._fixed_columns(kind), self.groups, kept)
            full = self.article_columns if kind == "article" else self.number_columns
            return score(idx, [full[i] for i in idx], assign)

        sel = backward_eliminate(list(self.groups), lambda kept: cv_with(kept, assignments))
        check = nested_check(list(self.groups), cv_with, n_cases)
        # Selection is kept only where the nested check (on the training cases) says it generalises.
        self.model_groups[kind] = sel.kept if check.helps else tuple(self.groups)
        self.selection[kind] = {**sel.to_dict(), **check.to_dict()}


    def retrain_charges(self, law, facts: Mapping[str, str] | None = None,
                        progress: bool = False) -> "StructurePredictor":
        """Replace the charge model by one fitted with the charges proposed from their law text (``law``: a
        ``law_candidates.LawCandidates``) as candidates and their rank and cosine as two more columns, on the
        complete cases; the other models are kept. It then decides over every charge the law text proposes,
        seen in training or not. ``facts``: case id -> facts, for a model saved without its cases' texts."""
        booster, threshold, cv = fit_law_model(self, law, facts, progress)
        self.law, self.law_columns = law, True
        self.models["charge"], self.thresholds["charge"], self.cv_f1["charge"] = booster, threshold, cv
        return self

    def add_law_model(self, law, facts: Mapping[str, str] | None = None, progress: bool = False, *,
                      gate: float | None = None, margin: float | None = None,
                      add_gate: float | None = None) -> "StructurePredictor":
        """Keep the charge model and add a second one over the law-text candidates (``charge_decision``), which
        decides only the charges no training case carries."""
        return add_law_model(self, law, facts, progress, gate=gate, margin=margin, add_gate=add_gate)

    # ------------------------------------------------------------------------------------ predicting
    def predict(self, facts: str, case_id: str | None = None, charge_reader=None) -> Structure:
        """The structure of the judgment for ``facts``. With ``charge_reader`` (a ``charge_llm.ChargeReader``),
        a low-confidence charge is replaced by the listed charges the LLM names (the model's own choice and the
        reply stay in the evidence and the notes)."""
        import numpy as np

        if not self.models:
            raise InputError("the structure predictor is not trained; call train() or load a model directory")
        if not isinstance(facts, str) or not facts.strip():
            raise InputError("the case facts are empty", field="facts")
        check_language(facts)
        notes: list[str] = list(extract_features(facts).notes)
        ctx = self.context(facts, case_id)
        chosen, ranked, extra, low = choose_charges(self, ctx, facts, notes, charge_reader)
        if len(facts.strip()) < MIN_DECIDE_CHARS:
            return undecided(facts, ranked, tuple(chosen) + extra, ctx, notes)
        charges = [c.name for c in chosen]
        # numbers
        X = np.array([self._number_row(ctx, charges)])
        people = defendant_rows(facts, ctx.defendants)
        X_def = np.array([self._number_row(ctx, charges, f) for _, f in people])
        per_prison = self._uses_per_defendant("prison") and len(people) > 1
        raws = [float(v) for v in np.expm1(self._predict("prison", X_def if per_prison else X))]
        prison_raw = raws[0]
        each = [max(1, int(round(r))) for r in raws]
        prison_ev = self._contributions("prison", X_def[:1] if self._uses_per_defendant("prison") else X)
        rng = self._range_for(charges) or (self.predicted_range(ctx) if len(charges) == 1 else None)
        if rng and self._on("statutory"):
            lo, hi = rng[1]
            clipped = [min(max(m, lo), hi) for m in each]
            prison_ev["statutory_range"] = {"article": rng[0], "months": [lo, hi], "clipped": clipped != each}
            each = clipped
        months = sum(set(each))  # what the evaluator reads from one clause per defendant
        prison_ev["neighbours"] = [{"id": n.id, "weight": round(n.weight, 3), "months": self.cases[n.id].prison_months}
                                   for n in ctx.neighbours[:5]]
        p_fine = float(self._predict("fine_present", X)[0])
        fine_value, fine_raw = None, None
        fines_each: list[int | None] = [None] * len(each)
        if p_fine >= 0.5 and "fine" in self.models:
            per_fine = self._uses_per_defendant("fine") and len(people) > 1
            fine_raws = [float(v) for v in np.expm1(self._predict("fine", X_def if per_fine else X))]
            fine_raw = fine_raws[0]
            fines_each = [round_fine(v) for v in fine_raws] if per_fine else [round_fine(fine_raw)] * len(each)
            fine_value = sum(set(fines_each))
        fine_ev = self._contributions("fine" if "fine" in self.models else "fine_present",
                                      X_def[:1] if self._uses_per_defendant("fine") else X)
        fine_ev["neighbours"] = [{"id": n.id, "fine": self.cases[n.id].fine_yuan} for n in ctx.neighbours[:5]]
        p_prob = float(self._predict("probation", X)[0])
        probation = Amount(int(p_prob >= 0.5), p_prob, p_prob, self._contributions("probation", X))
        # articles (after charges and numbers: the article model reads the predicted charges)
        acands = self._article_candidates(ctx, charges)
        articles: list[Scored] = []
        if acands:
            case_row = self._case_row(ctx)
            names = list(acands)
            probs = self._predict("article", np.array([self._article_row(ctx, a, acands[a], case_row,
                                                                         {"fine": p_fine, "probation": p_prob})
                                                       for a in names]))
            order = sorted(range(len(names)), key=lambda i: -probs[i])
            keep = [i for i in order if probs[i] >= self.thresholds["article"]] or order[:1]
            articles = [Scored(names[i], float(probs[i]), acands[names[i]]) for i in sorted(keep, key=lambda i: int(names[i]))]
        else:
            low = True
            notes.append("no candidate article: none predicted")
        articles += self._unseen_own_articles(chosen, {a.name for a in articles})
        sentences = ()
        if per_prison:
            sentences = tuple({"name": n, "months": m, "fine_yuan": f, "features": feats}
                              for (n, feats), m, f in zip(people, each, fines_each))
            prison_ev["defendants"] = [{"name": n, "months": m, "raw": round(r, 2)}
                                       for (n, _), m, r in zip(people, each, raws)]
        names = tuple(ctx.defendants) or tuple(m.text[3:] for m in ctx.features.matches if m.name == "defendant")
        return Structure(tuple(chosen) + extra, tuple(articles), Amount(months, prison_raw, None, prison_ev),
                         Amount(fine_value, fine_raw, p_fine, fine_ev), probation, names,
                         ctx.features, tuple(notes), low, sentences, circumstances=tuple(find_circumstances(facts)))

    def _unseen_own_articles(self, chosen: Sequence[Scored], have: set[str]) -> list[Scored]:
        return unseen_own_articles(self, chosen, have)

    def _own_article(self, charge: str) -> tuple[str, str] | None:
        """(article, text) of the article that defines ``charge``: an amended article (``第X条之一``) from the
        national corpus's wording when the charge is one (``ranges.AMENDED_CHARGES``), else the specific-part
        article the labelled cases cite most often with the charge, where the statute corpus states its range."""
        if charge in AMENDED_CHARGES:
            art = AMENDED_CHARGES[charge]
            return art, AMENDED_ARTICLES[art]
        row = self.full.charge_articles.pairs.get(charge, {})
        specific = [(n, a) for a, n in row.items() if int(a) > GENERAL_PART and a in self.ranges]
        if not specific:
            return None
        art = max(specific)[1]
        return art, self.texts[art]

    def _range_for(self, charges: Sequence[str]) -> tuple[str, tuple[int, int]] | None:
        """The statutory range keyed by the predicted charges' own articles: one charge, its article's range;
        several, the combined range of art. 69 (``ranges.combined_range``). None when a charge's article is
        unknown."""
        own = [self._own_article(c) for c in dict.fromkeys(charges)]
        if not own or any(o is None for o in own):
            return None
        texts = [t for _, t in own]
        rng = statutory_range(texts[0]) if len(own) == 1 else combined_range(texts)
        return ("+".join(a for a, _ in own), rng) if rng else None

    def _predict(self, kind: str, X):
        return self.models[kind].predict(X[:, self._idx(kind)])

    def _contributions(self, kind: str, X, top: int = 5) -> dict[str, Any]:
        Xk = X[:, self._idx(kind)]
        contrib = self.models[kind].predict(Xk, pred_contrib=True)[0]
        names = self._cols(kind)
        pairs = sorted(zip(names, contrib[:-1], Xk[0]), key=lambda t: -abs(t[1]))[:top]
        return {"model": kind, "base": round(float(contrib[-1]), 4),
                "top_features": [{"feature": n, "value": round(float(v), 4), "contribution": round(float(c), 4)}
                                 for n, c, v in pairs if c != 0]}

    # ------------------------------------------------------------------------------------- persistence
    def save(self, path: str | Path, extra: Mapping[str, Any] | None = None, *, case_texts: bool = True) -> None:
        """Write the model directory (``model_dir.save_structure``)."""
        save_structure(self, path, extra, case_texts=case_texts)

    @classmethod
    def load(cls, path: str | Path, statutes: Sequence[Document], encoder=None) -> "StructurePredictor":
        """Read a model directory (``model_dir.load_structure``); a model with a law-text charge model
        (``charge_law``) proposes the catalogue's charges with its encoder."""
        model = load_structure(cls, path, statutes, encoder)
        if "charge_law" in model.models and model.law is None:
            if encoder is None:
                raise InputError("this structure model proposes charges from their law text with its encoder; load "
                                 "it with the encoder its manifest names", path=str(path))
            from legalrag.judgment.law_candidates import LawCandidates

            model.law = LawCandidates(encoder, known=model.charge_counts)
        return model
