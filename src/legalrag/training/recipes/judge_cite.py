"""The recipe of the shipped ``judge-cite`` citation model (``legalrag train judge-cite``).

The citation pipeline over an index's first stage (judge-e5's dense component as shipped): always-cited rules,
article clusters and co-citation from JuDGE's training citation lists (``data/qrels_file_train``), and the
votes of similar labelled cases searched by the same encoder: the first 200 JuDGE cases by ``text_id`` and the
CAIL2018 training part (``partial``: their lists hold only the charges' own articles, so they vote for the
specific-part articles alone). The pipeline runs over the training cases (each left out of its own vote); the
learned set decision is fitted at the candidate depth whose out-of-fold micro F1 is best, and the threshold of
the similar-cases row is calibrated on the same cases. The shipped model keeps the pipeline up to similar cases
with that threshold (``stage="similar-cases"``), its case memory as int8 codes without the case texts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Literal, Mapping, Sequence

from legalrag.errors import InputError
from legalrag.training.recipes.judge_data import CailSplit, JudgeData, first_stage

GENERAL_PART = 101  # CAIL's article lists hold only articles above the general part (judgment/candidates.py)
DEPTHS = (10, 20, 30)
SHIPPED = {"core_k": 2, "prior_weight": 2.0, "rerank_top": 0}
Memory = Literal["dense", "bm25", "none"]
Stage = Literal["similar-cases", "learned-set"]


def judge_cases(judge: JudgeData):
    """The 200 training and 301 evaluation cases as citation cases (facts, gold articles)."""
    from legalrag.citepredict.data import load_cases, split_dev_eval

    return split_dev_eval(load_cases(judge.data / "data" / "test.json"), len(judge.train_ids))


def cail_citation_cases(cail: CailSplit, part: str = "train") -> list:
    """A CAIL split's training (or hold-out) cases as citation cases whose lists hold the charges' own articles."""
    from legalrag.citepredict.data import Case

    return [Case(c.id, c.facts, frozenset(str(a) for a in c.articles))
            for c in (cail.train if part == "train" else cail.holdout)]


def cite_predictor(judge: JudgeData, index, retriever: str, memory_cases: Sequence, memory: Memory = "dense",
                   overrides: Mapping[str, Any] | None = None, *, partial_cases: Sequence = (), int8: bool = False,
                   set_model=None):
    """The citation pipeline over ``index``'s ``retriever`` with a case memory of ``memory_cases`` (by BM25, by
    the retriever's encoder, or none); ``partial_cases``: cases whose lists hold only the specific-part articles
    (CAIL2018), added to a dense memory; ``int8``: its vectors held and saved as int8 codes."""
    from legalrag.citepredict.cases import CaseMemory
    from legalrag.citepredict.service import build_predictor

    if memory not in ("dense", "bm25", "none"):
        raise InputError(f"memory must be dense, bm25 or none, got {memory!r}")
    first = first_stage(index, retriever, judge.data)
    cases = None
    if memory == "bm25":
        cases = CaseMemory.build(memory_cases)
    elif memory == "dense":
        if getattr(first, "encoder", None) is None:
            raise InputError(f"a dense case memory needs a dense first stage; {retriever!r} has no encoder "
                             "(pass a dense-* component or --memory bm25)")
        cases = CaseMemory.build(list(memory_cases) + list(partial_cases), encoder=first.encoder, max_chars=20_000,
                                 partial=[c.id for c in partial_cases], partial_above=GENERAL_PART, int8=int8)
    return build_predictor(index, train_citations=judge.train_citations, retriever=retriever,
                           overrides=dict(overrides or {}), cases=cases, set_model=set_model)


def prior_of(pred) -> dict[str, float]:
    n = max(len(pred.graph.decision_ids), 1)
    return {p: round(c / n, 5) for p, c in pred.counts.items()}


def fit_set_model(pred, train_cases: Sequence, exclude: Collection[str] = (), depths: Sequence[int] = DEPTHS,
                  progress: bool = True):
    """The pipeline over the training cases (each left out of its own vote), then the set model at the depth whose
    out-of-fold micro F1 is best; returns (model, training results, {depth: cv})."""
    from legalrag.citepredict.evaluate import run_cases
    from legalrag.citepredict.setmodel import SetModel

    results = run_cases(pred, train_cases, progress, desc="training cases")
    gold, ids = [c.gold for c in train_cases], [c.id for c in train_cases]
    fits = {d: SetModel.train(results, gold, ids, prior_of(pred), exclude=exclude, depth=d) for d in depths}
    best = max(depths, key=lambda d: (fits[d].cv["oof_micro_f1"], -d))
    return fits[best], results, {d: m.cv for d, m in fits.items()}


@dataclass(frozen=True)
class CiteRecipe:
    """What the recipe trained: the pipeline (its set model attached), the set model, the training cases'
    results, the cross-validation per depth, and the saved model's threshold (None when nothing was saved)."""

    predictor: Any
    set_model: Any
    train_cases: tuple
    train_results: tuple
    depth_cv: Mapping[int, Mapping]
    saved_threshold: float | None = None


def judge_cite(judge: JudgeData, index, retriever: str, out: str | Path | None, *, cail: CailSplit | None = None,
               memory: Memory = "dense", case_neighbours: int = 10, case_weight: float = 0.9,
               exclude: Collection[str] = (), int8: bool = True, stage: Stage = "similar-cases",
               case_texts: bool = False, progress: bool = True) -> CiteRecipe:
    """Train the citation model as shipped and save it to ``out`` (None: train only, for a benchmark to measure).

    ``judge``: ``load_judge(DIR)``; ``index``/``retriever``: the opened index and its first stage (judge-e5's
    dense component as shipped); ``cail``: ``load_cail_split(...)`` for CAIL cases in the case memory (None:
    JuDGE's alone); ``exclude``: cases whose rows the set model must not learn from (those a trained encoder saw)."""
    from legalrag.citepredict.evaluate import calibrate
    from legalrag.citepredict.model import save_model

    if stage not in ("similar-cases", "learned-set"):
        raise InputError(f"stage must be similar-cases or learned-set, got {stage!r}")
    train, _ = judge_cases(judge)
    over = {**SHIPPED, "candidates": max(DEPTHS), "case_neighbours": case_neighbours, "case_weight": case_weight,
            "retriever": retriever, "max_query_chars": 20_000 if memory == "dense" else 600}
    partial = cail_citation_cases(cail) if cail is not None else []
    pred = cite_predictor(judge, index, retriever, train, memory, over, partial_cases=partial, int8=int8)
    model, results, cv = fit_set_model(pred, train, exclude, progress=progress)
    pred.set_model = model
    threshold = None
    if out is not None:
        if stage == "similar-cases":  # the pipeline up to similar cases, with that row's calibrated cut
            kind, cut = calibrate(results, [c.gold for c in train])["+ similar cases"]
            if kind != "threshold":
                raise InputError(f"the similar-cases row calibrated to a {kind} rule, not a threshold; save the "
                                 "learned set instead (--stage learned-set)")
            config, set_model = pred.config.model_copy(update={"threshold": round(cut, 4)}), None
        else:
            config, set_model = pred.config, model
        save_model(out, pred.rules, pred.graph, config, pred.cases, set_model, case_texts=case_texts)
        threshold = config.threshold
    return CiteRecipe(pred, model, tuple(train), tuple(results), cv, threshold)
