"""The citation-prediction signal of the structure predictor: the pipeline read back from a model directory or
built from training citation sets (:func:`build_cite`), or trained on the structure model's own labelled cases
with a dense first stage, similar cases and a set decision answered out of fold (:func:`train_cite`)."""

from __future__ import annotations

from pathlib import Path
from typing import Collection, Sequence

from legalrag.judgment.signals import DENSE_CHARS
from legalrag.types import Document
def build_cite(statutes: Sequence[Document], *, train_citations: str | Path | None = None,
               model_dir: str | Path | None = None, encoder=None, articles_dir: str | Path | None = None):
    """The citation-prediction pipeline over ``statutes`` (no LLM), from training citation sets (retrieval, rules,
    co-citation; no case memory: the structure model votes with its own neighbours) or a saved model (with the
    memory and set decision it holds; a dense first stage is read from ``articles_dir`` with ``encoder``)."""
    from legalrag.citepredict.model import load_case_memory, load_set_model, resolve_parts
    from legalrag.citepredict.pipeline import CitationPredictor
    from legalrag.retrieval.bm25 import BM25Retriever
    from legalrag.retrieval.tokenize import tokenizer_for

    rules, graph, config = resolve_parts(train_citations=train_citations, model_dir=model_dir,
                                         overrides={"core_k": 2, "prior_weight": 2.0, "use_cases": False}
                                         if model_dir is None else None)
    if articles_dir is not None and Path(articles_dir).is_dir():
        retriever = _articles(Path(articles_dir), statutes, encoder)
    else:
        retriever = BM25Retriever.from_documents(list(statutes), tokenizer_for("zh"))
    cases = load_case_memory(model_dir, encoder) if model_dir is not None else None
    set_model = load_set_model(model_dir) if model_dir is not None else None
    return CitationPredictor(statutes, retriever, rules, graph, config=config, cases=cases, set_model=set_model)


def _articles(directory: Path, statutes: Sequence[Document], encoder):
    """The saved dense first stage when it holds exactly these statutes' ids; otherwise (a model used with another
    statute corpus) the statutes encoded afresh by the same encoder, at the saved passage length."""
    import numpy as np

    from legalrag.retrieval.dense import DenseRetriever

    ids = {str(i) for i in np.load(directory / "ids.npy", allow_pickle=False)}
    if ids == {d.id for d in statutes}:
        return DenseRetriever.load(directory, list(statutes), encoder)
    max_chars = int(DenseRetriever.read_meta(directory).get("max_chars", 512))
    return DenseRetriever.build(list(statutes), encoder, max_chars=max_chars)


def train_cite(statutes: Sequence[Document], cases, *, train_citations: str | Path, retriever=None, encoder=None,
               exclude: Collection[str] = (), depth: int | None = 20, progress: bool = False):
    """A :class:`~legalrag.citepredict.crossfit.FoldedCite` over the labelled ``cases`` (``LabelledCase``: their
    judgments' articles are the gold): the first stage is ``retriever`` (e.g. a dense component of an index; BM25
    over ``statutes`` when None), the similar cases are searched by ``encoder`` (BM25 when None), and the set
    decision is cross-fitted (``exclude``: cases whose rows it must not learn from, such as those the encoder
    was trained on)."""
    from legalrag.citepredict.cases import CaseMemory
    from legalrag.citepredict.crossfit import FoldedCite
    from legalrag.citepredict.data import Case
    from legalrag.citepredict.model import resolve_parts
    from legalrag.citepredict.pipeline import CitationPredictor
    from legalrag.retrieval.bm25 import BM25Retriever
    from legalrag.retrieval.tokenize import tokenizer_for

    labelled = [Case(c.id, c.facts.strip(), frozenset(str(a) for a in c.articles)) for c in cases if c.articles]
    rules, graph, config = resolve_parts(train_citations=train_citations, overrides={
        "core_k": 2, "prior_weight": 2.0, "candidates": max(depth or 30, 30), "rerank_top": 0,
        # an encoder reads the whole facts (it truncates them itself); BM25 the first 600 characters
        "max_query_chars": DENSE_CHARS if encoder is not None else 600})
    memory = CaseMemory.build(labelled, encoder=encoder, max_chars=DENSE_CHARS if encoder is not None else 1500)
    first = retriever if retriever is not None else BM25Retriever.from_documents(list(statutes), tokenizer_for("zh"))
    predictor = CitationPredictor(statutes, first, rules, graph, config=config, cases=memory)
    return FoldedCite.train(predictor, labelled, exclude=exclude, depth=depth, progress=progress)
