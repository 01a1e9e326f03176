"""`legalrag eval cite` as one library call: load, split, calibrate, evaluate, optionally save the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from legalrag.citepredict.data import load_cases, split_dev_eval
from legalrag.citepredict.evaluate import CiteReport, evaluate
from legalrag.citepredict.service import build_predictor
from legalrag.errors import InputError
from legalrag.llm.base import LLM


def run_eval(index: Any, cases_path: str | Path, *, train_citations: str | Path | None = None,
             model_dir: str | Path | None = None, rules_path: str | Path | None = None, dev: int = 0,
             limit: int | None = None, retriever: str | None = None, llm: LLM | None = None, reranker: Any = None,
             save_model: str | Path | None = None, progress: bool = False,
             overrides: Mapping[str, Any] | None = None, case_memory: str | Path | None = None) -> CiteReport:
    """``case_memory``: ``"dev"`` (the development cases, each left out of its own vote) or a JSONL file of
    labelled cases; None keeps the model directory's memory, if any."""
    cases = load_cases(cases_path)
    dev_cases, eval_cases = split_dev_eval(cases, dev)
    if not eval_cases:
        raise InputError(f"-o dev={dev} leaves no evaluation cases ({len(cases)} in all)", path=str(cases_path))
    if limit is not None:
        eval_cases = eval_cases[:limit]
    memory = None
    if case_memory is not None:
        from legalrag.citepredict.cases import CaseMemory

        if str(case_memory) == "dev":
            if not dev_cases:
                raise InputError("--case-memory dev needs development cases; pass -o dev=N")
            memory = CaseMemory.build(dev_cases)
        else:
            memory = CaseMemory.build(load_cases(case_memory))
    predictor = build_predictor(index, train_citations=train_citations, model_dir=model_dir,
                                rules_path=rules_path, retriever=retriever, overrides=overrides, llm=llm,
                                reranker=reranker, cases=memory)
    rep, _ = evaluate(predictor, eval_cases, dev_cases, progress=progress)
    if save_model is not None:
        from legalrag.citepredict.model import save_model as save

        final = rep.calibration.get("+ verification") or rep.calibration.get("+ co-citation")
        config = predictor.config
        if dev_cases and final and final[0] == "threshold":
            config = config.model_copy(update={"threshold": float(final[1])})
        save(save_model, predictor.rules, predictor.graph, config, predictor.cases)
    return rep
