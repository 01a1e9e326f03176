"""Whether an article supports a claim: a calibrated logistic model over a few scores of the pair.

Features of a (claim, article) pair:

- ``cosine``: the cosine of the encoder's query vector of the claim and its passage vector of the article (the
  shipped ``stard-e5``; any object with ``encode_queries`` / ``encode_documents`` returning normalised rows);
- ``claim_cover``: the share of the claim's character bigrams that occur in the article;
- ``article_cover``: the share of the article's character bigrams that occur in the claim;
  (these and ``bm25`` take the best of the whole article and each of its paragraphs)
- ``bm25``: a BM25 score of the article for the claim's bigrams (idf from the statute corpus's bigram document
  frequencies, shipped as ``data/citations/bigram_df.json.gz``), divided by its maximum for that claim so it
  lies in [0, 1].

``SupportModel`` holds the coefficients, intercept and threshold chosen on labelled pairs (the ``full`` model
uses all four features; the ``lexical`` model, used when no encoder is given, the last three). Both are fitted
and their threshold chosen by ``bench/citecheck/support_calibrate.py``; the figures and the data are in the model file
(``data/citations/support_model.json``) and in ``data/citations/README.md``.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from legalrag.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data" / "citations"
MODEL_PATH = DATA / "support_model.json"
DF_PATH = DATA / "bigram_df.json.gz"
FULL_FEATURES = ("cosine", "claim_cover", "article_cover", "bm25")
LEXICAL_FEATURES = ("claim_cover", "article_cover", "bm25")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+|[A-Za-z]+|[0-9]+")
K1, B = 1.2, 0.75
MAX_ARTICLE_CHARS = 1000  # longer articles are cut for the lexical scores
PASSAGE_CHARS = 512  # what the encoder reads of an article: as retrieval.dense.passage_text (the same vectors)


def bigrams(text: str) -> list[str]:
    """Character bigrams of Chinese runs, and whole Latin words and numbers."""
    out: list[str] = []
    for run in _CJK_RUN.findall(text or ""):
        if run[0] < "\u4e00":
            out.append(run.casefold())
        elif len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i:i + 2] for i in range(len(run) - 1))
    return out


@dataclass(frozen=True)
class BigramIdf:
    """Document frequencies of bigrams over a statute corpus; bigrams under ``min_df`` count as ``min_df / 2``."""

    df: Mapping[str, int]
    n_docs: int
    min_df: int
    avg_len: float

    @classmethod
    def load(cls, path: str | Path | None = None) -> "BigramIdf":
        return _load_idf(str(path or DF_PATH))

    def idf(self, term: str) -> float:
        n = self.df.get(term, self.min_df / 2)
        return math.log(1 + (self.n_docs - n + 0.5) / (n + 0.5))


@lru_cache(maxsize=2)
def _load_idf(path: str) -> BigramIdf:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            d = json.load(f)
        return BigramIdf(d["df"], int(d["n_docs"]), int(d["min_df"]), float(d["avg_len"]))
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"cannot read the bigram table {path}: {exc}; restore it with `git checkout -- "
                         "src/legalrag/data/citations` or reinstall legalrag", field="bigram_df") from exc


def lexical_features(claim: str, article: str, idf: BigramIdf) -> dict[str, float]:
    """``claim_cover``, ``article_cover`` and ``bm25`` of one pair (see the module docstring): each the best over
    the whole article and each of its paragraphs (款), since a claim usually rests on one paragraph."""
    article = article[:MAX_ARTICLE_CHARS]
    units = [article] + [p for p in re.split(r"\n\s*\n|\n", article) if p.strip() and p.strip() != article.strip()]
    rows = [_lexical(claim, u, idf) for u in units]
    return {k: max(r[k] for r in rows) for k in rows[0]}


def _lexical(claim: str, article: str, idf: BigramIdf) -> dict[str, float]:
    cb, ab = bigrams(claim), bigrams(article)
    cs, as_ = set(cb), set(ab)
    if not cs or not as_:
        return {"claim_cover": 0.0, "article_cover": 0.0, "bm25": 0.0}
    shared = cs & as_
    tf: dict[str, int] = {}
    for b in ab:
        tf[b] = tf.get(b, 0) + 1
    norm = K1 * (1 - B + B * len(ab) / idf.avg_len)
    score = sum(idf.idf(b) * tf[b] * (K1 + 1) / (tf[b] + norm) for b in shared)
    best = sum(idf.idf(b) * (K1 + 1) / (1 + K1 * (1 - B + B * len(cb) / idf.avg_len)) for b in cs)
    return {"claim_cover": len(shared) / len(cs), "article_cover": len(shared) / len(as_),
            "bm25": min(score / best, 1.0) if best > 0 else 0.0}


@dataclass(frozen=True)
class SupportModel:
    """A logistic model: ``p = sigmoid(intercept + sum(coef[f] * x[f]))``; supported when ``p >= threshold``."""

    name: str
    features: tuple[str, ...]
    coefficients: Mapping[str, float]
    intercept: float
    threshold: float
    mean: Mapping[str, float] = field(default_factory=dict)  # features are standardised before the dot product
    scale: Mapping[str, float] = field(default_factory=dict)

    def probability(self, x: Mapping[str, float]) -> float:
        z = self.intercept
        for f in self.features:
            v = (x[f] - self.mean.get(f, 0.0)) / (self.scale.get(f, 1.0) or 1.0)
            z += self.coefficients[f] * v
        return 1 / (1 + math.exp(-max(min(z, 50.0), -50.0)))

    @classmethod
    def from_dict(cls, name: str, d: Mapping[str, Any]) -> "SupportModel":
        return cls(name, tuple(d["features"]), dict(d["coefficients"]), float(d["intercept"]),
                   float(d["threshold"]), dict(d.get("mean") or {}), dict(d.get("scale") or {}))

    @classmethod
    def load(cls, name: str = "full", path: str | Path | None = None) -> "SupportModel":
        models = _load_models(str(path or MODEL_PATH))
        if name not in models:
            raise InputError(f"no support model {name!r} in {path or MODEL_PATH}; it has {sorted(models)}")
        return cls.from_dict(name, models[name])


@lru_cache(maxsize=2)
def _load_models(path: str) -> dict[str, Any]:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))["models"]
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"cannot read the support model {path}: {exc}; restore it with `git checkout -- "
                         "src/legalrag/data/citations` or reinstall legalrag", field="support_model") from exc


def passage(doc: Any) -> str:
    """An article as the dense index encodes it (``retrieval.dense.passage_text`` with its default 512
    characters), so the vectors of an index build's cache are reused."""
    text = f"{doc.title}\n{doc.text}" if doc.title and not doc.text.startswith(doc.title) else doc.text
    return text[:PASSAGE_CHARS]


class SupportScorer:
    """Scores (claim, article) pairs with a :class:`SupportModel`; ``encoder`` gives the ``cosine`` feature.
    An article is a :class:`legalrag.types.Document` (its title and text are encoded) or a plain text.

    Without an encoder the ``lexical`` model is used. ``warm_up`` is not needed: the tables load on first use.
    """

    def __init__(self, encoder: Any = None, model: SupportModel | None = None, idf: BigramIdf | None = None):
        self.encoder = encoder
        self._model = model
        self._idf = idf

    @property
    def model(self) -> SupportModel:
        if self._model is None:
            self._model = SupportModel.load("full" if self.encoder is not None else "lexical")
        return self._model

    @property
    def idf(self) -> BigramIdf:
        if self._idf is None:
            self._idf = BigramIdf.load()
        return self._idf

    @property
    def threshold(self) -> float:
        return self.model.threshold

    def features(self, pairs: Sequence[tuple[str, Any]], *, cosine: bool | None = None) -> list[dict[str, float]]:
        """The feature values of each (claim, article) pair (``cosine``: whether to compute the encoder's
        cosine; default: when the model uses it)."""
        texts = [(c, a if isinstance(a, str) else a.text, a if isinstance(a, str) else passage(a)) for c, a in pairs]
        rows = [lexical_features(c, a, self.idf) for c, a, _ in texts]
        use_cosine = cosine if cosine is not None else "cosine" in self.model.features
        if self.encoder is not None and pairs and use_cosine:
            import numpy as np

            claims = sorted({c for c, _, _ in texts})
            articles = sorted({p for _, _, p in texts})
            q = np.asarray(self.encoder.encode_queries(claims), dtype="float32")
            d = np.asarray(self.encoder.encode_documents(articles), dtype="float32")
            qi = {c: i for i, c in enumerate(claims)}
            di = {a: i for i, a in enumerate(articles)}
            for row, (c, _, p) in zip(rows, texts):
                row["cosine"] = float(q[qi[c]] @ d[di[p]])
        return rows

    def scores(self, pairs: Sequence[tuple[str, Any]]) -> list[float]:
        """The probability that each article supports its claim."""
        return [self.model.probability(x) for x in self.features(pairs)]


__all__ = ["BigramIdf", "FULL_FEATURES", "LEXICAL_FEATURES", "SupportModel", "SupportScorer", "bigrams",
           "lexical_features"]
