"""Which LLM the agent and reranker commands talk to: the embedded model, or an OpenAI-compatible endpoint,
behind the on-disk call cache so that reruns of an evaluation are cheap."""

from __future__ import annotations

from legalrag.errors import InputError
from legalrag.llm.base import LLM


def make_llm(model: str | None = None, endpoint: str | None = None, endpoint_model: str | None = None,
             cache: bool = True) -> LLM:
    """``endpoint`` (with ``endpoint_model``) selects a remote OpenAI-compatible server; otherwise the embedded
    model ``model`` (default: the 1.5B). Calls go through ``CachedLLM`` unless ``cache`` is False."""
    if endpoint:
        if not endpoint_model:
            raise InputError("--endpoint needs --endpoint-model NAME (the model name the server expects)")
        from legalrag.llm.openai_compat import OpenAICompatLLM

        llm: LLM = OpenAICompatLLM(base_url=endpoint, model=endpoint_model)
    else:
        if endpoint_model:
            raise InputError("--endpoint-model is only used with --endpoint URL")
        from legalrag.llm.embedded import EmbeddedLLM

        llm = EmbeddedLLM(model) if model else EmbeddedLLM()
    if cache:
        try:
            from legalrag.llm.cache import CachedLLM
        except ImportError:  # an install without the cache module: run uncached rather than fail
            return llm
        llm = CachedLLM(llm)
    return llm
