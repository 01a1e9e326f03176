"""Citation prediction as a signal for another model trained on the same labelled cases (the judgment structure
predictor), without leaking a case's own labels into its features.

:class:`FoldedCite` wraps a predictor that has a similar-case memory and a learned set decision, both learned from
the same labelled cases as the downstream model. For a new case it answers as the predictor does. For one of the
labelled cases it answers out of fold: its similar cases never include itself (the memory skips a case's own
facts), and its set decision comes from a set model fitted without the case's fold. The downstream model thus
learns how far to trust the citation pool on cases like the new ones it will see.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Collection, Mapping, Sequence

from legalrag.citepredict.data import Case
from legalrag.citepredict.pipeline import CitationPredictor, CiteResult
from legalrag.citepredict.setmodel import FOLDS, SetModel, fold_of


class FoldedCite:
    """``predict(facts)`` for new cases, ``predict_case(facts, case_id)`` for labelled ones (out of fold)."""

    def __init__(self, predictor: CitationPredictor, fold_models: Mapping[int, SetModel], fold_of_case: Mapping[str, int]):
        self.predictor = predictor
        self.fold_models = dict(fold_models)
        self.fold_of_case = dict(fold_of_case)

    # the parts a model directory saves (``citepred.model.save_model``)
    @property
    def rules(self):
        return self.predictor.rules

    @property
    def graph(self):
        return self.predictor.graph

    @property
    def config(self):
        return self.predictor.config

    @property
    def cases(self):
        return self.predictor.cases

    @property
    def set_model(self):
        return self.predictor.set_model

    def predict(self, facts: str) -> CiteResult:
        return self.predictor.predict(facts)

    def predict_case(self, facts: str, case_id: str | None = None) -> CiteResult:
        fold = self.fold_of_case.get(case_id) if case_id is not None else None
        if fold is None or fold not in self.fold_models:
            return self.predict(facts)
        full, self.predictor.set_model = self.predictor.set_model, None
        try:
            res = self.predictor.predict(facts)
        finally:
            self.predictor.set_model = full
        decision = self.fold_models[fold].decision(res)
        pools = {**res.pools, "learned-set": decision}
        return replace(res, pools=pools)

    @classmethod
    def train(cls, predictor: CitationPredictor, cases: Sequence[Case], *, exclude: Collection[str] = (),
              depth: int | None = None, progress: bool = False, folds: int = FOLDS) -> "FoldedCite":
        """Run ``predictor`` (whose memory holds ``cases``) over the cases, fit the full set model and one per
        fold (without that fold's cases; ``exclude`` as in :meth:`SetModel.train`), and attach the full one."""
        from legalrag.citepredict.evaluate import run_cases

        predictor.set_model = None
        results = run_cases(predictor, cases, progress, desc="citation pool (training cases)")
        gold, ids = [c.gold for c in cases], [c.id for c in cases]
        n = max(len(predictor.graph.decision_ids), 1)
        prior = {p: round(c / n, 5) for p, c in predictor.counts.items()}
        assign = fold_of(ids, folds)
        fold_models = {}
        for f in range(folds):
            keep = [i for i, c in enumerate(ids) if assign[c] != f]
            fold_models[f] = SetModel.train([results[i] for i in keep], [gold[i] for i in keep],
                                            [ids[i] for i in keep], prior, exclude=exclude, depth=depth)
        predictor.set_model = SetModel.train(results, gold, ids, prior, exclude=exclude, depth=depth)
        return cls(predictor, fold_models, assign)

    def describe(self) -> dict[str, Any]:
        sm = self.predictor.set_model
        return {"folds": len(self.fold_models), "rule": sm.rule if sm else None,
                "threshold": sm.threshold if sm else None, "cv": sm.cv if sm else None}
