"""A cross-encoder reranker: a transformers sequence-classification model (one logit) reads each
(query, article) pair together. ``legalrag train reranker`` trains one from the retrieval backbone."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

from legalrag._optional import require
from legalrag.errors import InputError
from legalrag.rerank.base import reranked
from legalrag.types import Hit

SETTINGS_FILE = "cross_encoder.json"


def is_cross_encoder_dir(path: str | os.PathLike) -> bool:
    return (Path(path) / SETTINGS_FILE).is_file()


def pair_text(title: str, text: str, max_chars: int) -> str:
    body = text[:max_chars] if max_chars > 0 else text
    return f"{title}\n{body}" if title and not text.startswith(title) else body


class CrossEncoderReranker:
    name = "cross"

    def __init__(self, path: str | os.PathLike, *, batch_size: int = 16, threads: int | None = None):
        self.path = Path(path)
        if not is_cross_encoder_dir(self.path):
            raise InputError(f"not a cross-encoder directory (no {SETTINGS_FILE}); train one with "
                             "`legalrag train reranker`", path=str(self.path))
        self.settings = json.loads((self.path / SETTINGS_FILE).read_text(encoding="utf-8"))
        self.batch_size, self.threads = batch_size, threads
        self.max_chars = int(self.settings.get("max_chars", 300))
        self._model = self._tokenizer = None

    def _load(self):
        if self._model is None:
            torch = require("torch", "st")
            transformers = require("transformers", "st")
            if self.threads:
                torch.set_num_threads(self.threads)
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(str(self.path))
            self._model = transformers.AutoModelForSequenceClassification.from_pretrained(str(self.path)).eval()
        return self._model, self._tokenizer

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        model, tok = self._load()
        return score_pairs(model, tok, self.settings.get("query_prefix", "") + query, texts,
                           max_length=int(self.settings.get("max_length", 256)), batch_size=self.batch_size)

    def rerank(self, query: str, hits: Sequence[Hit], k: int | None = None) -> list[Hit]:
        if not hits:
            return []
        scores = self.score(query, [pair_text(h.document.title, h.document.text, self.max_chars) for h in hits])
        return reranked(hits, scores, self.name, k)


def score_pairs(model, tokenizer, query: str, texts: Sequence[str], *, max_length: int, batch_size: int = 16) -> list[float]:
    """One logit per (query, text) pair, in the order of ``texts``; the text side is truncated, never the query.
    Batches hold texts of similar length (longest first), so short candidates are not padded to a long one's."""
    import torch

    from legalrag.retrieval.vector_cache import batches_by_length

    out = [0.0] * len(texts)
    device = next(model.parameters()).device
    for ids in batches_by_length(texts, batch_size):
        enc = tokenizer([query] * len(ids), [texts[i] for i in ids], truncation="only_second", padding=True,
                        max_length=max_length, return_tensors="pt").to(device)
        with torch.no_grad():
            for i, logit in zip(ids, model(**enc).logits[:, 0].tolist()):
                out[i] = logit
    return out
