"""An on-disk cache of embedding vectors keyed by (model id, role, sha256 of the text).

One SQLite file per model under ``legalrag.io.cache_dir()/vectors`` holds raw float32 blobs (no pickle). Each
encoded batch is committed as soon as it is done, so an interrupted encoding run resumes where it stopped and
re-indexing a changed corpus encodes only the new or changed texts. Several processes may share the cache
(SQLite WAL mode).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from legalrag.io import cache_dir, open_cache_db, sha256_text

Role = str  # "query" or "passage"


def model_slug(model_id: str) -> str:
    """A file-name-safe form of a model id: ``openai:text-embedding-3-small`` -> ``openai-text-embedding-3-small``."""
    slug = re.sub(r"[^0-9A-Za-z._-]+", "-", model_id).strip("-.").lower()
    return slug or "model"


class VectorCache:
    """Vectors of one model, stored in ``<root>/<model-slug>.sqlite``."""

    def __init__(self, model_id: str, dimension: int, root: str | Path | None = None):
        self.model_id = model_id
        self.dimension = int(dimension)
        self.root = Path(root) if root is not None else cache_dir() / "vectors"
        self.root.mkdir(parents=True, exist_ok=True)
        self.path = self.root / f"{model_slug(model_id)}.sqlite"
        # one connection shared by the threads of a server (each streamed request runs in its own), serialised
        self._db = open_cache_db(self.path, "CREATE TABLE IF NOT EXISTS vectors (model TEXT, role TEXT, sha TEXT, "
                                 "dim INTEGER, vec BLOB, PRIMARY KEY (model, role, sha))", "vector cache",
                                 check_same_thread=False)
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def get(self, role: Role, shas: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``shas`` (missing ones are absent from the result)."""
        found: dict[str, np.ndarray] = {}
        shas = list(dict.fromkeys(shas))
        with self._lock:
            return self._get(role, shas, found)

    def _get(self, role: Role, shas: list[str], found: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        for start in range(0, len(shas), 500):
            chunk = shas[start:start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT sha, dim, vec FROM vectors WHERE model=? AND role=? AND sha IN ({marks})",
                [self.model_id, role, *chunk])
            for sha, dim, blob in rows:
                if dim == self.dimension:
                    found[sha] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, role: Role, shas: Sequence[str], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?)",
                [(self.model_id, role, s, int(v.shape[0]), v.tobytes()) for s, v in zip(shas, vectors)])
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM vectors WHERE model=?", [self.model_id]).fetchone()[0]


def batches_by_length(texts: Sequence[str], batch_size: int) -> list[list[int]]:
    """Positions of ``texts`` in batches of similar length, longest first. A transformer pads a batch to its
    longest text, so batches in corpus order pad most short articles to a long one's length (2.4x slower on
    STARD's articles); the first batches are the slowest, so a progress bar's estimate errs long."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]


def encode_cached(encode: Callable[[Sequence[str]], np.ndarray], texts: Sequence[str], *, cache: VectorCache | None,
                  role: Role, batch_size: int = 64, progress: bool = False, desc: str = "encode") -> np.ndarray:
    """Encode ``texts`` with ``encode`` (one batch at a time), reading and filling ``cache`` when given.

    Returns a float32 (n, dimension) array in the order of ``texts``. Duplicate texts are encoded once.
    """
    texts = list(texts)
    dim = cache.dimension if cache is not None else None
    shas = [sha256_text(t) for t in texts]
    known = cache.get(role, shas) if cache is not None else {}
    todo: dict[str, str] = {}
    for sha, text in zip(shas, texts):
        if sha not in known and sha not in todo:
            todo[sha] = text
    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), desc=desc, unit="text")
    items = list(todo.items())
    for ids in batches_by_length([t for _, t in items], batch_size):
        chunk = [items[i] for i in ids]
        vecs = np.asarray(encode([t for _, t in chunk]), dtype=np.float32)
        if vecs.shape[0] != len(chunk):
            raise ValueError(f"encoder returned {vecs.shape[0]} vectors for {len(chunk)} texts")
        if dim is None:
            dim = vecs.shape[1]
        if cache is not None:
            cache.put(role, [s for s, _ in chunk], vecs)
        for (sha, _), v in zip(chunk, vecs):
            known[sha] = v
        if bar is not None:
            bar.update(len(chunk))
    if bar is not None:
        bar.close()
    if not texts:
        return np.zeros((0, dim or 0), dtype=np.float32)
    return np.stack([known[s] for s in shas]).astype(np.float32, copy=False)
