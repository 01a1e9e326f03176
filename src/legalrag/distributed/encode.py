"""Corpus encoding over Ray workers, through the vector cache.

Workers encode only the texts the driver's vector cache lacks and send the vectors back; the driver stores
them in the cache. An index build that follows (on one process) then reads every vector from the cache, so
the index is the one the single-process build writes. An interrupted run resumes: finished batches are cached.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from legalrag.distributed.cluster import BatchReport, once_per_process, run_batches
from legalrag.io import sha256_text

def _encode_batch(texts: Sequence[str], make_encoder: Callable[[], Any]) -> np.ndarray:
    enc = once_per_process(make_encoder)  # the model loads once per worker, not once per batch
    return np.asarray(enc.encode_documents(list(texts)), dtype=np.float32)


def _batches(texts: Sequence[str], batch_size: int) -> list[list[str]]:
    return [list(texts[i:i + batch_size]) for i in range(0, len(texts), batch_size)]


def encode_parallel(texts: Sequence[str], make_encoder: Callable[[], Any], *, workers: int | None = None,
                    address: str | None = None, batch_size: int = 256, max_retries: int = 3,
                    progress: bool = False) -> tuple[np.ndarray, BatchReport]:
    """Encode ``texts`` as passages on Ray workers; ``make_encoder()`` builds the encoder in each worker."""
    texts = list(texts)
    parts, report = run_batches(_encode_batch, _batches(texts, batch_size), make_encoder, workers=workers,
                                address=address, max_retries=max_retries, progress=progress, desc="encode (ray)")
    if not parts:
        return np.zeros((0, 0), dtype=np.float32), report
    return np.concatenate(parts).astype(np.float32, copy=False), report


def prefill_vector_cache(texts: Sequence[str], make_encoder: Callable[[], Any], cache: Any, *,
                         workers: int | None = None, address: str | None = None, batch_size: int = 256,
                         max_retries: int = 3, progress: bool = False) -> dict[str, Any]:
    """Encode the texts ``cache`` (a ``retrieval.vector_cache.VectorCache``) does not hold yet, on Ray workers,
    and store them there as passage vectors. Returns counts and the fan-out report."""
    shas = [sha256_text(t if t.strip() else " ") for t in texts]
    known = cache.get("passage", shas)
    todo: dict[str, str] = {}
    for sha, text in zip(shas, texts):
        if sha not in known and sha not in todo:
            todo[sha] = text if text.strip() else " "  # as BaseEncoder does before caching
    report = BatchReport()
    if todo:
        items = list(todo.items())
        vectors, report = encode_parallel([t for _, t in items], make_encoder, workers=workers, address=address,
                                          batch_size=batch_size, max_retries=max_retries, progress=progress)
        if vectors.shape[1] != cache.dimension:
            raise ValueError(f"workers returned {vectors.shape[1]}-d vectors, the cache holds {cache.dimension}-d")
        for start in range(0, len(items), 1000):
            cache.put("passage", [s for s, _ in items[start:start + 1000]], vectors[start:start + 1000])
    return {"texts": len(texts), "cached": len(set(shas)) - len(todo), "encoded": len(todo), **report.to_dict()}
