"""LLMs from the names a user gives: ``--model`` (a bundled model or a GGUF file), ``--endpoint`` /
``--endpoint-model`` (an OpenAI-compatible server), a trained ``--policy``; the local model server's client.
Every model built here goes through the call cache unless asked not to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from legalrag.errors import InputError
from legalrag.llm.base import LLM
from legalrag.settings import Settings
from legalrag.wiring.base import current_settings


def make_llm(model: str | None = None, endpoint: str | None = None, endpoint_model: str | None = None,
             cache: bool | str | Path = True, *, threads: int | None = None, n_ctx: int | None = None,
             settings: Settings | None = None) -> LLM:
    """``endpoint`` (with ``endpoint_model``) selects a remote OpenAI-compatible server; otherwise the embedded
    model ``model`` (default: Qwen2.5-Coder-1.5B-Instruct; ``qwen2.5-coder-0.5b`` or a GGUF path). Calls go
    through ``CachedLLM`` (the SQLite call cache; ``cache`` may name its database file) unless ``cache`` is
    False. Arguments not given come from the saved settings (``llm.*``, ``runtime.threads``, ``paths.*``):
    a ``model`` given selects the embedded model even when an endpoint is saved."""
    s = current_settings(settings)
    if endpoint:
        endpoint_model = endpoint_model or s.llm.endpoint_model
    elif model is None and s.llm.endpoint:
        endpoint, endpoint_model = s.llm.endpoint, endpoint_model or s.llm.endpoint_model
    elif model is None:
        model = s.llm.model
    threads = threads or s.threads
    if endpoint:
        if not endpoint_model:
            raise InputError("--endpoint needs --endpoint-model NAME (the model name the server expects)")
        from legalrag.llm.openai_compat import OpenAICompatLLM

        llm: LLM = OpenAICompatLLM(base_url=endpoint, model=endpoint_model)
    else:
        if endpoint_model:
            raise InputError("--endpoint-model is only used with --endpoint URL")
        from legalrag.llm.embedded import EmbeddedLLM

        options: dict[str, Any] = {"models_dir": s.models_dir}
        if threads:
            options["n_threads"] = threads
        if n_ctx:
            options["n_ctx"] = n_ctx
        llm = EmbeddedLLM(canonical_model(model), **options) if model else EmbeddedLLM(**options)
    return _cached(llm, cache, s)

def _cached(llm: LLM, cache: bool | str | Path, s: Settings) -> LLM:
    if not cache:
        return llm
    from legalrag.llm.cache import CachedLLM

    return CachedLLM(llm, path=s.llm_cache if cache is True else cache)

def served_model_id(model: str | Path) -> str:
    """The id a local model server (``legalrag llm serve --model``) lists for ``model``: a bundled model's id,
    or ``gguf:NAME:SIZE`` for a GGUF file (as :class:`legalrag.llm.embedded.EmbeddedLLM` names it)."""
    name = canonical_model(str(model))
    from legalrag.llm.models import BUNDLED

    if name in BUNDLED:
        return name
    p = Path(name).expanduser()
    return f"gguf:{p.name}:{p.stat().st_size}" if p.is_file() else name

def canonical_model(model: str) -> str:
    """A bundled model's id for its user-facing name (``qwen2.5-coder-1.5b`` -> ``qwen2.5-1.5b``); anything
    else (an id, a GGUF path) unchanged."""
    from legalrag.llm.models import canonical_name

    return str(canonical_name(model))

def make_policy_llm(policy: str | Path, model: str | None = None, *, cache: bool | str | Path = True,
                    threads: int | None = None, settings: Settings | None = None) -> LLM:
    """The embedded model with a trained policy's LoRA adapter (``legalrag train policy --out DIR``) applied
    by llama.cpp. ``model`` defaults to the policy's base; a policy trained on another base is refused."""
    from legalrag.training.policy.store import base_identity, check_base, read_policy

    s = current_settings(settings)
    meta = read_policy(policy)
    model = canonical_model(model) if model else meta["base"]["name"]
    check_base(meta, model, base_identity(model)["id"], policy)
    from legalrag.llm.embedded import EmbeddedLLM

    threads = threads or s.threads
    options: dict[str, Any] = {"n_threads": threads} if threads else {}
    llm: LLM = EmbeddedLLM(model, lora=Path(policy) / "adapter.gguf", models_dir=s.models_dir, **options)
    return _cached(llm, cache, s)

def local_server_client(info: Any, read_timeout: float) -> LLM:
    """The client of a local legalrag model server (``legalrag llm start``): no key, no retries."""
    from legalrag.llm.openai_compat import OpenAICompatLLM

    return OpenAICompatLLM(info.url, info.model, api_key_env=None, timeout=read_timeout, max_retries=0)


def label_route(llm: LLM, route: str, note: str = "") -> LLM:
    """``llm`` with ``route`` (where answers come from) and ``fallback_note`` set unless it has its own."""
    try:
        if getattr(llm, "route", None) is None:
            llm.route = route
        if note:
            llm.fallback_note = note
    except AttributeError:  # a frozen or slotted test double
        pass
    return llm
