"""Rerankers from ``--rerank NAME`` (``Root.build_pipeline`` puts one after an index's retriever)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from legalrag.errors import InputError
from legalrag.llm.base import LLM
from legalrag.wiring.llms import make_llm

LLM_RERANKERS = ("llm-listwise", "llm-pointwise", "llm-yesno")

RERANKERS = ("learned", "cross:DIR") + LLM_RERANKERS


def index_language(index: Any) -> str:
    lang = getattr(index, "manifest", {}).get("lang", "zh") if index is not None else "zh"
    return lang if lang in ("zh", "en") else "zh"

def make_reranker(name: str, index: Any = None, *, llm: LLM | None = None, **options: Any):
    """``learned`` (the LightGBM ranker trained for ``index``) or ``llm-listwise`` | ``llm-pointwise`` |
    ``llm-yesno`` over ``llm`` (default: :func:`make_llm` with ``model``/``endpoint``/``endpoint_model`` from
    ``options``). The LLM rerankers prompt in the index's language."""
    model, endpoint, endpoint_model = (options.pop(k, None) for k in ("model", "endpoint", "endpoint_model"))
    if name == "learned":
        from legalrag.rerank.learned import cross_encoder_path, from_index

        if index is None:
            raise InputError("the learned reranker needs the index it was trained for")
        cross_dir = cross_encoder_path(index)
        cross = make_reranker(f"cross:{cross_dir}", threads=options.get("threads")) if cross_dir else None
        return from_index(index, cross)
    if name == "cross" or name.startswith("cross:"):  # a `legalrag train reranker` directory (default INDEX/cross)
        from legalrag.rerank.cross import CrossEncoderReranker

        if name == "cross" and index is None:
            raise InputError("--rerank cross needs an index holding a cross/ model, or use cross:DIR")
        return CrossEncoderReranker(name[6:] if name != "cross" else Path(index.path) / "cross",
                                    threads=options.get("threads"))
    if name in LLM_RERANKERS:
        llm = llm if llm is not None else make_llm(model, endpoint, endpoint_model)
        lang = index_language(index)
        if name == "llm-listwise":
            from legalrag.rerank.llm_listwise import LLMListwiseReranker

            return LLMListwiseReranker(llm, **{"lang": lang, **options})
        from legalrag.rerank.llm_pointwise import LLMPointwiseReranker, LLMYesNoReranker

        cls = LLMPointwiseReranker if name == "llm-pointwise" else LLMYesNoReranker
        return cls(llm, **{"prompts": (lang,), **options})
    raise InputError(f"unknown reranker {name!r}; known: {', '.join(RERANKERS)}")
