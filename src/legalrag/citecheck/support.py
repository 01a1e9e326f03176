"""Whether an article supports a claim, judged against the article's best-matching clause: one calibrated model.

One model judges every (text, article) pair of legalrag: the citation marks of answers, ``legalrag check``,
``POST /citations/check``, MCP and the OpenAI route, and the decisive-article selector (which calls
:meth:`SupportScorer.scores` with (question, article) pairs). The composition root builds it once
(``wiring.make_support_scorer``) and registers its encoder here (:func:`register_encoder`), so a caller that
passes no scorer gets that same model (:func:`default_scorer`), never a second one.

A claim usually rests on one clause of an article, not on the whole article. The article is split by
:func:`legalrag.clauses.clauses` and the claim is matched against each clause; the features of the pair are:

- ``cosine``: the encoder's query vector of the claim against its passage vector of the article (the shipped
  ``stard-e5``, the vectors the dense index holds; :func:`passage`);
- ``clause_idf``: the idf-weighted share of the claim's character bigrams found in the best-matching clause
  (the clause that maximises it; the same clause is the one the judgement names);
- ``clause_cover`` / ``clause_own``: the plain share of the claim's bigrams in that clause, and of the clause's in
  the claim; ``pair_idf``: the idf-weighted share found in the best two clauses together;
- ``clause_run``: the longest run of characters the claim and the clause share, over 12 (capped at 1), and
  ``run_share``: that run over the claim's length (a quote is one long run);
- ``article_idf`` / ``article_own``: the idf-weighted share of the claim's bigrams anywhere in the article, and the
  share of the article's bigrams found in the claim; ``title_idf``: the same share in the article's title;
- ``claim_size``: the claim's length (``log(1 + bigrams) / log(400)``, capped at 1);
- ``own_idf`` / ``own_cover`` / ``own_run``: the other side: the clause whose words the claim restates most (the
  idf-weighted and the plain share of that clause's bigrams found in the claim, and the longest shared run), which
  is what a long claim (a conclusion) that rests on one clause shows.

Two models are in the model file (``data/citations/support_model.json``, recipe ``legalrag train support-model``):
``lexical`` (a logistic model over the lexical features, fitted on the train part of the frozen STARD split) and
``full`` (the default: a logistic model over ``lexical``'s logit and ``cosine``, fitted on the dev part, whose
questions the encoder never saw). Each carries the threshold at which a pair is taken as supported. The lexical
model is the fast option of ``legalrag check -o support=lexical``, no default of any path.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from legalrag.clauses import Clause, clauses, quote
from legalrag.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data" / "citations"
MODEL_PATH = DATA / "support_model.json"
DF_PATH = DATA / "bigram_df.json.gz"
LEXICAL_FEATURES = ("clause_idf", "clause_cover", "clause_own", "pair_idf", "clause_run", "article_idf",
                    "article_own", "title_idf", "claim_size", "own_idf", "own_cover", "own_run", "run_share")
FULL_FEATURES = ("lexical_logit", "cosine")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+|[A-Za-z]+|[0-9]+")
K1, B = 1.2, 0.75
MAX_ARTICLE_CHARS = 3000  # longer articles are cut for the lexical features
MAX_CLAIM_CHARS = 1000  # a longer claim is judged on its first 1,000 characters (the judgement says so)
MIN_CLAIM_BIGRAMS = 2  # fewer than this: too short to check
PASSAGE_CHARS = 512  # what the encoder reads of an article: as retrieval.dense.passage_text (the same vectors)
RUN_CHARS = 12


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
    """The older whole-article scores of a pair, kept for comparison (``bench/citecheck/``): ``claim_cover``,
    ``article_cover`` and ``bm25``, each the best over the whole article and each of its paragraphs."""
    article = article[:MAX_ARTICLE_CHARS]
    units = [article] + [p for p in re.split(r"\n\s*\n|\n", article) if p.strip() and p.strip() != article.strip()]
    rows = [_whole(claim, u, idf) for u in units]
    return {k: max(r[k] for r in rows) for k in rows[0]}


def _whole(claim: str, article: str, idf: BigramIdf) -> dict[str, float]:
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


def longest_run(a: str, b: str) -> int:
    """The length of the longest common substring of ``a`` and ``b``."""
    if not a or not b:
        return 0
    best, prev = 0, [0] * (len(b) + 1)
    for ca in a:
        cur = [0] * (len(b) + 1)
        for j, cb in enumerate(b, 1):
            if ca == cb:
                cur[j] = prev[j - 1] + 1
                if cur[j] > best:
                    best = cur[j]
        prev = cur
    return best


@dataclass(frozen=True)
class Match:
    """A claim against an article: the lexical features and the best-matching clause (None: the article has no
    text to match)."""

    features: Mapping[str, float]
    clause: Clause | None
    article_text: str


def match(claim: str, article_text: str, title: str, idf: BigramIdf) -> Match:
    """The lexical features of a pair (module docstring) and the clause they name."""
    claim = claim[:MAX_CLAIM_CHARS]
    text = article_text[:MAX_ARTICLE_CHARS]
    cb = set(bigrams(claim))
    weight = {b: idf.idf(b) for b in cb}
    total = sum(weight.values()) or 1.0
    parts = clauses(text) or ([Clause(1, text, 0, len(text))] if text.strip() else [])
    zero = dict.fromkeys(LEXICAL_FEATURES, 0.0)
    zero["claim_size"] = min(math.log1p(len(cb)) / math.log(400), 1.0)
    if not cb or not parts:
        return Match(zero, parts[0] if parts else None, text)
    scored = []
    own_best = (0.0, 0.0, parts[0])
    for c in parts:
        kb = set(bigrams(c.text))
        shared = cb & kb
        scored.append((sum(weight[b] for b in shared) / total, len(shared), kb, c))
        if kb:
            kw = {b: idf.idf(b) for b in kb}
            own = sum(kw[b] for b in shared) / (sum(kw.values()) or 1.0)
            if own > own_best[0]:
                own_best = (own, len(shared) / len(kb), c)
    scored.sort(key=lambda s: (-s[0], -s[1], s[3].start))
    idf_share, n_shared, kb, best = scored[0]
    two = cb & (kb | (scored[1][2] if len(scored) > 1 else set()))
    ab = set(bigrams(text))
    shared_a = cb & ab
    tb = set(bigrams(title or ""))
    x = {"clause_idf": idf_share, "clause_cover": n_shared / len(cb), "clause_own": n_shared / max(len(kb), 1),
         "pair_idf": sum(weight[b] for b in two) / total,
         "clause_run": min(longest_run(claim, best.text) / RUN_CHARS, 1.0),
         "article_idf": sum(weight[b] for b in shared_a) / total,
         "article_own": len(shared_a) / max(len(ab), 1),
         "title_idf": sum(weight[b] for b in cb & tb) / total, "claim_size": zero["claim_size"],
         "own_idf": own_best[0], "own_cover": own_best[1],
         "own_run": min(longest_run(claim, own_best[2].text) / RUN_CHARS, 1.0),
         "run_share": longest_run(claim, best.text) / max(len(claim), 1)}
    return Match(x, best, text)


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


_ENCODER: list[Callable[[], Any]] = []
_DEFAULT: list[SupportScorer] = []


def register_encoder(build: Callable[[], Any]) -> None:
    """The composition root's builder of the support model's encoder (``wiring`` registers it when imported), so
    :func:`default_scorer` is the same model for every caller that passes none."""
    _ENCODER[:] = [build]
    _DEFAULT.clear()


def default_scorer() -> SupportScorer:
    """The one support model (``full``, with the registered encoder), built once per process."""
    if not _DEFAULT:
        if not _ENCODER:
            # a library caller that built its collaborators without the composition root (create_app, engine_for
            # over an index): load the root, which registers the encoder, rather than mark with a second model
            import importlib

            importlib.import_module("legalrag.wiring")
        if not _ENCODER:
            raise InputError("no support scorer was given and none is registered: pass one built by "
                             "legalrag.wiring.make_support_scorer() (importing legalrag.wiring registers it)",
                             field="scorer")
        _DEFAULT.append(SupportScorer(_ENCODER[0](), SupportModel.load("full")))
    return _DEFAULT[0]


__all__ = ["BigramIdf", "FULL_FEATURES", "Judgement", "LEXICAL_FEATURES", "Match", "SupportModel", "SupportScorer",
           "bigrams", "default_scorer", "lexical_features", "longest_run", "match", "passage", "register_encoder",
           "why_not"]
