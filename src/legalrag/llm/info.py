"""What ``legalrag llm info`` reports: bundled model files, their digests, the runtime and the call cache."""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path
from typing import Any

from legalrag.llm.cache import CallCache, default_cache_path
from legalrag.llm.models import BUNDLED, model_status, models_dir


def llm_info(cache: str | os.PathLike | None = None, models: str | os.PathLike | None = None) -> dict[str, Any]:
    """A JSON-able summary; never assembles a model or hashes a file. ``cache``: the call-cache file,
    ``models``: the folder models are assembled in (defaults under ``legalrag.io.cache_dir()``)."""
    try:
        runtime = importlib.metadata.version("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        runtime = None
    path = Path(cache) if cache is not None else default_cache_path()
    call_cache: dict[str, Any] = {"path": str(path), "exists": path.exists()}
    if path.exists():
        store = CallCache(path)
        call_cache.update(store.stats())
        store.close()
    return {"models_dir": str(models_dir(models)), "models": [model_status(name, models) for name in BUNDLED],
            "runtime": runtime, "call_cache": call_cache}
