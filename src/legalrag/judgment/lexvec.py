"""Lexical case vectors: the facts' character 2- and 3-grams, weighted by 1+log(tf) x idf, hashed with random
signs into a few hundred dimensions and L2-normalised (the hashing trick: inner products of the hashed vectors
approximate those of the full n-gram vectors).

Why: similar cases among thousands of labelled cases need a vector per case, and encoding 4,000 CAIL facts
with judge-e5 costs over an hour on two shared CPU cores, while these cost a millisecond per case and need no
weights. A hashed vector keeps no text (a few hundred sums of thousands of n-grams cannot be read back), so a
shipped model can hold one per case as it holds the encoder's. The idf table (the n-grams found in at least
``min_df`` cases, with their idf) is fitted on the labelled cases and saved beside the vectors.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections import Counter
from pathlib import Path
from typing import Iterable, Mapping, Sequence

DIMENSION = 384
NGRAMS = (2, 3)
MAX_CHARS = 1500
_STRIP = re.compile(r"[\s0-9０-９a-zA-Z，。；：、（）()“”\"',.;:×Ｘ]+")


def _grams(text: str) -> Counter:
    t = _STRIP.sub("|", text[:MAX_CHARS])
    out: Counter = Counter()
    for piece in t.split("|"):
        for n in NGRAMS:
            for i in range(len(piece) - n + 1):
                out[piece[i:i + n]] += 1
    return out


def _slot(gram: str) -> tuple[int, float]:
    h = zlib.crc32(gram.encode("utf-8"))
    return h % DIMENSION, (1.0 if (h >> 16) & 1 else -1.0)


class LexicalVectors:
    """``encode_queries(texts)`` -> float32 array (n, DIMENSION), as an encoder's; ``model_id`` names the setting
    and the idf table's digest, so a model saved with one table is never read with another."""

    def __init__(self, idf: Mapping[str, float], default_idf: float):
        import hashlib

        self.idf, self.default_idf = dict(idf), float(default_idf)
        digest = hashlib.sha256(json.dumps([sorted(self.idf.items()), self.default_idf]).encode()).hexdigest()[:12]
        self.model_id = f"lexical-ngram-hash{DIMENSION}-{digest}"
        self.dimension = DIMENSION

    @classmethod
    def fit(cls, texts: Iterable[str], min_df: int = 20) -> "LexicalVectors":
        df: Counter = Counter()
        n = 0
        for t in texts:
            df.update(set(_grams(t)))
            n += 1
        idf = {g: round(math.log((1 + n) / (1 + k)) + 1, 3) for g, k in df.items() if k >= min_df}
        return cls(idf, round(math.log((1 + n) / (1 + min_df)) + 1, 3))

    def vector(self, text: str):
        import numpy as np

        v = np.zeros(DIMENSION, dtype=np.float64)
        for g, tf in _grams(text).items():
            j, sign = _slot(g)
            v[j] += sign * (1 + math.log(tf)) * self.idf.get(g, self.default_idf)
        norm = np.linalg.norm(v)
        return (v / norm if norm else v).astype(np.float32)

    def encode_queries(self, texts: Sequence[str]):
        import numpy as np

        return np.stack([self.vector(t) for t in texts]) if texts else np.zeros((0, DIMENSION), np.float32)

    encode_passages = encode_queries

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"dimension": DIMENSION, "ngrams": list(NGRAMS), "max_chars": MAX_CHARS,
                                          "default_idf": self.default_idf, "idf": self.idf}, ensure_ascii=False,
                                         sort_keys=True), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "LexicalVectors":
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        if d.get("dimension") != DIMENSION or tuple(d.get("ngrams", ())) != NGRAMS:
            raise ValueError(f"{path}: lexical vectors of another setting ({d.get('dimension')}, {d.get('ngrams')})")
        return cls(d["idf"], d["default_idf"])
