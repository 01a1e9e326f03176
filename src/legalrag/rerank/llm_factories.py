"""Factories that ``retrieval.pipeline.build_pipeline`` calls for ``--rerank llm-listwise|llm-pointwise|llm-yesno``.

Each is called as ``factory(index, llm=None, **options)``; without ``llm`` the default backend is used
(``agents.backend.make_llm``: the embedded model behind the call cache). The reranking language follows the
index language.
"""

from __future__ import annotations

from typing import Any

from legalrag.llm.base import LLM


def _llm(llm: LLM | None, options: dict[str, Any]) -> LLM:
    if llm is not None:
        return llm
    from legalrag.agents.backend import make_llm

    return make_llm(options.pop("model", None), options.pop("endpoint", None), options.pop("endpoint_model", None))


def _lang(index: Any) -> str:
    lang = getattr(index, "manifest", {}).get("lang", "zh") if index is not None else "zh"
    return lang if lang in ("zh", "en") else "zh"


def listwise(index: Any, llm: LLM | None = None, **options: Any):
    from legalrag.rerank.llm_listwise import LLMListwiseReranker

    llm = _llm(llm, options)
    return LLMListwiseReranker(llm, **{"lang": _lang(index), **options})


def pointwise(index: Any, llm: LLM | None = None, **options: Any):
    from legalrag.rerank.llm_pointwise import LLMPointwiseReranker

    llm = _llm(llm, options)
    return LLMPointwiseReranker(llm, **{"prompts": (_lang(index),), **options})


def yesno(index: Any, llm: LLM | None = None, **options: Any):
    from legalrag.rerank.llm_pointwise import LLMYesNoReranker

    llm = _llm(llm, options)
    return LLMYesNoReranker(llm, **{"prompts": (_lang(index),), **options})
