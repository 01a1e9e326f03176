"""Whether an article supports a claim, judged against the article's best-matching clause: one calibrated model.

One model judges every (text, article) pair of legalrag: the citation marks of answers, ``legalrag check``,
``POST /citations/check``, MCP and the OpenAI route, and the decisive-article selector (which calls
:meth:`SupportScorer.scores` with (question, article) pairs). The composition root builds it once per process
(``wiring.make_support_scorer``, over the shipped ``stard-e5`` encoder) and passes it to each of them. Code below
the root never looks a model up: a caller that passes no scorer gets the lexical model (``SupportScorer()``, no
encoder), as each function taking one says.

The features of a pair are the lexical ones of :mod:`legalrag.citecheck.support_features` (the claim against
each clause of the article, split by :func:`legalrag.clauses.clauses`) and ``cosine``: the encoder's query vector
of the claim against its passage vector of the article (the shipped ``stard-e5``, the vectors the dense index
holds; :func:`passage`).

Two models are in the model file (``data/citations/support_model.json``, recipe ``legalrag train support-model``):
``lexical`` (a logistic model over the lexical features, fitted on the train part of the frozen STARD split) and
``full`` (the default: a logistic model over ``lexical``'s logit and ``cosine``, fitted on the dev part, whose
questions the encoder never saw). Each carries the threshold at which a pair is taken as supported. The lexical
model is the fast option of ``legalrag check -o support=lexical`` and what a library call without a scorer uses.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from legalrag.citecheck.support_features import (B, DATA, DF_PATH, K1, LEXICAL_FEATURES, MAX_ARTICLE_CHARS,
                                                 MAX_CLAIM_CHARS, MIN_CLAIM_BIGRAMS, RUN_CHARS, BigramIdf, Match,
                                                 bigrams, lexical_features, longest_run, match)
from legalrag.clauses import quote
from legalrag.errors import InputError

MODEL_PATH = DATA / "support_model.json"
FULL_FEATURES = ("lexical_logit", "cosine")
PASSAGE_CHARS = 512  # what the encoder reads of an article: as retrieval.dense.passage_text (the same vectors)


@dataclass(frozen=True)
class SupportModel:
    """A logistic model: ``p = sigmoid(intercept + sum(coef[f] * (x[f] - mean[f]) / scale[f]))``; supported when
    ``p >= threshold``. ``base``: a model whose logit is this one's feature ``lexical_logit`` (stacking)."""

    name: str
    features: tuple[str, ...]
    coefficients: Mapping[str, float]
    intercept: float
    threshold: float
    mean: Mapping[str, float] = field(default_factory=dict)
    scale: Mapping[str, float] = field(default_factory=dict)
    base: "SupportModel | None" = None

    def logit(self, x: Mapping[str, float]) -> float:
        if self.base is not None and "lexical_logit" not in x:
            x = {**x, "lexical_logit": self.base.logit(x)}
        z = self.intercept
        for f in self.features:
            z += self.coefficients[f] * (x[f] - self.mean.get(f, 0.0)) / (self.scale.get(f, 1.0) or 1.0)
        return max(min(z, 50.0), -50.0)

    def probability(self, x: Mapping[str, float]) -> float:
        return 1 / (1 + math.exp(-self.logit(x)))

    @property
    def needs_cosine(self) -> bool:
        return "cosine" in self.features or (self.base is not None and self.base.needs_cosine)

    @classmethod
    def from_dict(cls, name: str, d: Mapping[str, Any], models: Mapping[str, Any] | None = None) -> "SupportModel":
        base = None
        if d.get("base"):
            if not models or d["base"] not in models:
                raise InputError(f"support model {name!r} stacks on {d['base']!r}, which the file does not have",
                                 field="support_model")
            base = cls.from_dict(d["base"], models[d["base"]], models)
        return cls(name, tuple(d["features"]), dict(d["coefficients"]), float(d["intercept"]),
                   float(d["threshold"]), dict(d.get("mean") or {}), dict(d.get("scale") or {}), base)

    @classmethod
    def load(cls, name: str = "full", path: str | Path | None = None) -> "SupportModel":
        models = _load_models(str(path or MODEL_PATH))
        if name not in models:
            raise InputError(f"no support model {name!r} in {path or MODEL_PATH}; it has {sorted(models)}")
        return cls.from_dict(name, models[name], models)


@lru_cache(maxsize=4)
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


@dataclass(frozen=True)
class Judgement:
    """The model's judgement of one (claim, article) pair: the probability, whether it reaches the threshold, the
    clause it names (the supporting clause when supported, else the best-matching one) quoted verbatim from the
    article with its exceptions (``clause_start``/``clause_end``: offsets in the article text), and in plain words
    why it is not taken as support (``reason``; "" when supported)."""

    probability: float
    supported: bool
    threshold: float
    clause: str = ""
    clause_start: int = -1
    clause_end: int = -1
    paragraph: int = 0
    reason: str = ""
    note: str = ""  # e.g. that a long claim was judged on its first characters


class SupportScorer:
    """Judges (claim, article) pairs with a :class:`SupportModel`; ``encoder`` gives the ``cosine`` feature.
    An article is a :class:`legalrag.types.Document` (its title and text) or a plain text.

    The model is ``full`` with an encoder, else ``lexical``; pass ``model`` to choose. Tables load on first use.
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

    def warm_up(self) -> "SupportScorer":
        """Load the tables and the encoder now (a server does this at start, so its first check is not slow)."""
        self.judge([("盗窃公私财物数额较大", "盗窃公私财物，数额较大的，处三年以下有期徒刑。")])
        return self

    def matches(self, pairs: Sequence[tuple[str, Any]], *, cosine: bool | None = None) -> list[Match]:
        """Each pair's features and best-matching clause (``cosine``: whether to compute the encoder's cosine;
        default: when the model uses it and an encoder is there)."""
        arts = [(a, "", a) if isinstance(a, str) else (a.text, a.title or "", passage(a)) for _, a in pairs]
        out = [match(c or "", t, title, self.idf) for (c, _), (t, title, _) in zip(pairs, arts)]
        use_cosine = cosine if cosine is not None else self.model.needs_cosine
        if self.encoder is not None and pairs and use_cosine:
            import numpy as np

            claims = sorted({(c or "")[:MAX_CLAIM_CHARS] for c, _ in pairs})
            passages = sorted({p for _, _, p in arts})
            q = np.asarray(self.encoder.encode_queries(claims), dtype="float32")
            d = np.asarray(self.encoder.encode_documents(passages), dtype="float32")
            qi = {c: i for i, c in enumerate(claims)}
            di = {p: i for i, p in enumerate(passages)}
            out = [Match({**m.features, "cosine": float(q[qi[(c or "")[:MAX_CLAIM_CHARS]]] @ d[di[p]])}, m.clause,
                         m.article_text) for m, (c, _), (_, _, p) in zip(out, pairs, arts)]
        return out

    def features(self, pairs: Sequence[tuple[str, Any]], *, cosine: bool | None = None) -> list[dict[str, float]]:
        """The feature values of each pair (see :meth:`matches`)."""
        return [dict(m.features) for m in self.matches(pairs, cosine=cosine)]

    def scores(self, pairs: Sequence[tuple[str, Any]]) -> list[float]:
        """The probability that each article supports its text (a claim, or a question for the selector)."""
        return [self.model.probability(m.features) for m in self.matches(pairs)]

    def judge(self, pairs: Sequence[tuple[str, Any]]) -> list[Judgement]:
        """Each pair's :class:`Judgement`: probability, mark and the clause that supports it (or matches best)."""
        model = self.model
        out = []
        for (claim, _), m in zip(pairs, self.matches(pairs)):
            p = model.probability(m.features)
            ok = p >= model.threshold
            note = (f"the claim has {len(claim):,} characters; it was judged on its first {MAX_CLAIM_CHARS:,}"
                    if len(claim or "") > MAX_CLAIM_CHARS else "")
            q = quote(m.article_text, m.clause) if m.clause is not None else None
            out.append(Judgement(round(p, 4), ok, model.threshold, q.text if q else "", q.start if q else -1,
                                 q.end if q else -1, q.paragraph if q else 0, "" if ok else why_not(m, p, model),
                                 note))
        return out


def why_not(m: Match, p: float, model: SupportModel) -> str:
    """In plain words, why a pair is not taken as support."""
    x = m.features
    if len(bigrams(m.article_text)) == 0:
        return "the article has no text to compare the claim with"
    if x["claim_size"] < math.log1p(MIN_CLAIM_BIGRAMS) / math.log(400) - 1e-9:
        return "the claim has too few words to check against the article"
    if x["clause_idf"] < 0.25:
        return (f"no clause of the article says what the claim says: the closest shares only "
                f"{x['clause_idf']:.0%} of the claim's key words")
    if "cosine" in x and x["cosine"] < 0.5:
        return "the closest clause shares words with the claim, but the article is about something else"
    return (f"the closest clause is related, but it does not state the claim closely enough to be taken as its "
            f"support (support {p:.2f}, needs {model.threshold:.2f})")


__all__ = ["B", "BigramIdf", "DF_PATH", "FULL_FEATURES", "Judgement", "K1", "LEXICAL_FEATURES",
           "MAX_ARTICLE_CHARS", "MAX_CLAIM_CHARS", "MIN_CLAIM_BIGRAMS", "MODEL_PATH", "Match", "PASSAGE_CHARS",
           "RUN_CHARS", "SupportModel", "SupportScorer", "bigrams", "lexical_features", "longest_run", "match",
           "passage", "why_not"]
