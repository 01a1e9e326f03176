"""An opened index, a citation model and (optionally) an LLM and a reranker into a predictor, for the CLI and
the benchmark (which build the LLM and reranker through ``legalrag.wiring``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from legalrag.citepredict.cases import CaseMemory
from legalrag.citepredict.model import load_case_memory, load_set_model, resolve_parts
from legalrag.citepredict.pipeline import CitationPredictor, CiteResult
from legalrag.llm.base import LLM
from legalrag.rerank.base import Reranker


def build_predictor(index: Any, *, train_citations: str | Path | None = None,
                    model_dir: str | Path | None = None, rules_path: str | Path | None = None,
                    retriever: str | None = None, overrides: Mapping[str, Any] | None = None,
                    llm: LLM | None = None, reranker: Reranker | None = None,
                    cases: CaseMemory | None = None, set_model=None) -> CitationPredictor:
    """Load or learn the citation model for ``index`` (an opened index, or the directory of a lexical one);
    the model directory defaults to ``INDEX/citepred``. ``reranker`` reranks the top ``rerank_top``
    candidates; ``cases`` (a similar-case memory) and ``set_model`` replace the ones saved in the model
    directory, if any. The retriever is ``retriever``, else the one the model was calibrated with, else the
    index's default; a dense case memory searches with that retriever's encoder."""
    if isinstance(index, (str, Path)):
        from legalrag.retrieval.index import open_index

        index = open_index(index)
    if model_dir is None and train_citations is None:
        model_dir = default_model_dir(index)
    elif model_dir is not None:
        model_dir = model_path(model_dir)
    rules, graph, config = resolve_parts(train_citations=train_citations, model_dir=model_dir, rules_path=rules_path,
                                         overrides=overrides)
    if index.manifest.get("lang") in ("zh", "en") and not (overrides or {}).get("language"):
        config = config.model_copy(update={"language": index.manifest["lang"]})
    if config.rerank_top <= 0:
        reranker = None
    first = index.retriever(retriever or config.retriever)
    if cases is None and model_dir is not None:
        cases = load_case_memory(model_dir, getattr(first, "encoder", None))
    if set_model is None and model_dir is not None:
        set_model = load_set_model(model_dir)
    return CitationPredictor(index.documents, first, rules, graph, config=config, llm=llm,
                             reranker=reranker, cases=cases, set_model=set_model)


def model_path(model_dir: str | Path) -> Path:
    """A citation model directory, or the name of one that ships with legalrag (checked against its card)."""
    from legalrag.shipped import model_dir as resolve

    return resolve(model_dir, "citation-model")


def default_model_dir(index: Any) -> Path | None:
    """``INDEX/citepred`` when it exists; else a shipped citation model calibrated on a component this index has
    (``judge-cite`` on an index built with ``--encoder judge-e5``), its files checked; else None."""
    if (index.path / "citepred").is_dir():
        return index.path / "citepred"
    import json

    from legalrag.shipped import checked, shipped_models

    components = set(index.manifest.get("components", {}))
    for m in shipped_models():
        if m.kind == "citation-model":
            config = json.loads((m.path / "config.json").read_text(encoding="utf-8")) \
                if (m.path / "config.json").is_file() else {}
            if config.get("retriever") in components:
                return checked(m.name, "citation-model").path
    return None


def result_to_dict(result: CiteResult) -> dict[str, Any]:
    return {
        "provisions": [{"id": c.provision, "title": c.title, "score": c.score, "resolved": c.resolved,
                        "provenance": [{"stage": v.stage, "score": v.score, "detail": v.detail}
                                       for v in c.provenance]} for c in result.predictions],
        "unresolved": list(result.unresolved_corrections),
        "analysis": None if result.analysis is None else {"issues": list(result.analysis.issues),
                                                          "codes": list(result.analysis.codes),
                                                          "keywords": list(result.analysis.keywords)},
        "filtered_codes": list(result.filtered_codes),
        "candidates": list(result.ranking[:10]),
        "llm_calls": result.llm_calls,
        "seconds": round(result.seconds, 3),
    }
