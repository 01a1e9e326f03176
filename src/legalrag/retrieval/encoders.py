"""The Encoder protocol for dense retrieval (implementations live beside it, with lazy imports)."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np


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
