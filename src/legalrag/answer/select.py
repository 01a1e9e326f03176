"""The decisive-article selector: rerank the retrieved candidates and say which articles decide the question.

``ArticleSelector.select(question, hits, k=3)`` scores every candidate (the top 30 of the default index, say)
with a small trained model over cheap signals of the (question, article) pair, turns each score into a calibrated
probability that the article decides the question (a Platt curve fitted on held-out folds), and returns all
candidates best first (``ranked``) and at most ``k`` of them whose probability reaches the threshold chosen on
held-out questions (``chosen``, which may be empty: the law in hand does not settle the question).

Signals of a candidate (:data:`FEATURES`): its retrieval rank and score (relative to the first); the support pair
model's probability that the article supports the question (``citecheck.support``; its gap to the best
candidate's and its rank); how much of the article's title and law name the question shares; the best BM25 of
the question against any one clause of the article (``clauses.split_clauses``; character bigrams, the shipped
statute idf), raw and relative; how often the article and its law are gold in the training questions (smoothed
log counts, kept in the model file); co-retrieval: how many other candidates come from the same law; and what
similar training questions cited (``rerank.neighbours.NeighbourMemory``: the training questions' vectors under
the shipped encoder and their gold ids, kept in the model folder; the question is encoded once).

Without a model file (``ArticleSelector()``) the selector keeps the retrieval order, chooses the first ``k``
and gives each hit a rank-only probability (``RANK_ONLY``, not calibrated). The shipped model lives in
``data/models/selector/`` (``legalrag train selector`` reproduces it); :func:`load_selector` checks every file
against the SHA-256 its card lists, and refuses a missing or altered file with its path and the fix.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from legalrag.errors import InputError, ModelError
from legalrag.types import Hit

SELECTOR_NAME = "selector"  # the shipped model's name (data/models/selector)
SELECTOR_KIND = "selector"
SPEC_FILE = "selector.json"
CARD_FILE = "legalrag_model.json"
FORMAT = "legalrag-selector"
MAX_QUESTION_CHARS = 500  # a longer paste is scored on its first 500 characters (the signals saturate, and
# the support model reads a long text slowly: about 0.9 s for 1,000 characters on two cores)
MAX_ARTICLE_CHARS = 2000
RESTORE = ("restore it with `git checkout -- src/legalrag/data/models/selector` in a clone of legalrag, or "
           "`pip install --force-reinstall --no-deps legalrag`; or retrain it with `legalrag train selector`")

FEATURES = (
    "rank", "log_rank", "score_rel", "n_sources",
    "support", "support_gap", "support_rank",
    "title_overlap", "law_overlap", "names_law",
    "clause_bm25", "clause_bm25_gap", "clause_cover",
    "article_prior", "law_prior",
    "co_law", "co_law_weighted", "log_len",
    "nb_vote", "nb_sim", "nb_sim_gap", "nb_count", "nb_top_sim",
)
NEIGHBOUR_ROWS, NEIGHBOUR_VECTORS = "neighbours.jsonl", "neighbours.npy"
_LAW_SUFFIX = re.compile(r"第[零〇一二三四五六七八九十百千两\d]+条(?:之[一二三四五六七八九十\d]+)?$")
_PUNCT = set("《》，。、；：？！,.;:?!()（）“”\"' \t\r\n")
K1, B = 1.2, 0.75


@dataclass(frozen=True)
class Decisive:
    """One candidate article, reranked."""

    hit: Hit  # the retrieved hit (document has id, title, text)
    probability: float  # calibrated P(this article decides the question)
    rank: int  # its 0-based rank in the retrieval order


@dataclass(frozen=True)
class ArticleSelection:
    ranked: tuple[Decisive, ...]  # all candidates, best first
    chosen: tuple[Decisive, ...]  # at most k: those with probability >= threshold (may be empty)
    threshold: float
    seconds: float


# -- the signals -------------------------------------------------------------------------------------------

def law_of(doc: Any) -> str:
    """The law an article belongs to: its ``law`` metadata, else its title without the article number."""
    law = str((getattr(doc, "metadata", None) or {}).get("law", "") or "")
    if law:
        return law
    return _LAW_SUFFIX.sub("", str(getattr(doc, "title", "") or "")).strip()


def short_law_name(law: str) -> str:
    return law.removeprefix("中华人民共和国").strip("《》 ")


def _bigram_set(text: str) -> set[str]:
    t = "".join(ch for ch in text if ch not in _PUNCT)
    return {t[i:i + 2] for i in range(len(t) - 1)} or ({t} if t else set())


def _share(of: set[str], within: set[str]) -> float:
    return len(of & within) / len(of) if of else 0.0


@dataclass(frozen=True)
class Priors:
    """How often each article and each law is gold in the training questions (smoothed log counts)."""

    article: Mapping[str, int] = field(default_factory=dict)
    law: Mapping[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.law.values())

    def article_prior(self, doc_id: str, own: int = 0) -> float:
        return math.log1p(max(0, self.article.get(doc_id, 0) - own))

    def law_prior(self, law: str, own: int = 0) -> float:
        """log P(law) with add-one smoothing over the laws seen (an unseen law gets the smallest value)."""
        count = max(0, self.law.get(law, 0) - own)
        return math.log((count + 1) / (max(self.total - own, 0) + len(self.law) + 1))

    def to_dict(self) -> dict[str, Any]:
        return {"article": dict(self.article), "law": dict(self.law)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Priors":
        return cls({str(k): int(v) for k, v in (d.get("article") or {}).items()},
                   {str(k): int(v) for k, v in (d.get("law") or {}).items()})

    @classmethod
    def from_gold(cls, gold: Sequence[Sequence[str]], law_by_id: Mapping[str, str]) -> "Priors":
        article: dict[str, int] = {}
        law: dict[str, int] = {}
        for ids in gold:
            for g in ids:
                article[g] = article.get(g, 0) + 1
                name = law_by_id.get(g, "")
                if name:
                    law[name] = law.get(name, 0) + 1
        return cls(article, law)


class ClauseBM25:
    """BM25 of a question's character bigrams against one clause, with the shipped statute idf
    (``citecheck.support.BigramIdf``); :meth:`best` is the best clause of an article, normalised by the score a
    clause holding every bigram of the question once would get, so it lies in [0, 1]."""

    def __init__(self, idf: Any = None):
        self._idf = idf

    @property
    def idf(self) -> Any:
        if self._idf is None:
            from legalrag.citecheck.support import BigramIdf

            self._idf = BigramIdf.load()
        return self._idf

    def best(self, question: str, article: str) -> tuple[float, float]:
        """(best normalised BM25, best share of the question's bigrams) over the article's clauses."""
        from legalrag.citecheck.support import bigrams
        from legalrag.clauses import split_clauses

        qb = set(bigrams(question))
        if not qb:
            return 0.0, 0.0
        idf = self.idf
        weights = {b: idf.idf(b) for b in qb}
        ideal = sum(weights.values()) or 1.0
        best_score = best_cover = 0.0
        units = [c for _, c in split_clauses(article[:MAX_ARTICLE_CHARS])] or [article[:MAX_ARTICLE_CHARS]]
        for unit in units:
            tf: dict[str, int] = {}
            ub = bigrams(unit)
            for b in ub:
                if b in weights:
                    tf[b] = tf.get(b, 0) + 1
            if not tf:
                continue
            norm = K1 * (1 - B + B * len(ub) / idf.avg_len)
            score = sum(weights[b] * n * (K1 + 1) / (n + norm) for b, n in tf.items())
            best_score = max(best_score, score)
            best_cover = max(best_cover, len(tf) / len(qb))
        return min(best_score / ((K1 + 1) / (1 + K1 * (1 - B)) * ideal), 1.0), best_cover


def _desc_rank(values: np.ndarray) -> np.ndarray:
    order = np.argsort(-values, kind="stable")
    rank = np.empty(len(values))
    rank[order] = np.arange(len(values))
    return rank


def feature_matrix(question: str, hits: Sequence[Hit], *, support_scores: Sequence[float], priors: Priors,
                   clause_bm25: ClauseBM25, votes: Any = None, own_gold: Sequence[str] = (),
                   law_by_id: Mapping[str, str] | None = None) -> np.ndarray:
    """The (len(hits), len(FEATURES)) matrix of one question's candidates, in the given (retrieval) order.

    ``own_gold``: for a question whose gold the priors counted (a training question), its own labels are left
    out of the prior counts, so a model never learns "the prior is high" from the row's own label."""
    n = len(hits)
    if n == 0:
        return np.zeros((0, len(FEATURES)), np.float64)
    q = question[:MAX_QUESTION_CHARS]
    qset = _bigram_set(q)
    scores = np.array([float(h.score) for h in hits])
    top = scores[0] if scores[0] > 0 else (scores.max() if scores.max() > 0 else 1.0)
    sup = np.asarray(support_scores, dtype=np.float64)
    own = set(own_gold)
    laws = [law_of(h.document) for h in hits]
    own_laws: dict[str, int] = {}
    for g in own:
        name = (law_by_id or {}).get(g, "")
        if name:
            own_laws[name] = own_laws.get(name, 0) + 1
    same_law: dict[str, list[int]] = {}
    for i, name in enumerate(laws):
        same_law.setdefault(name, []).append(i)
    lex = [clause_bm25.best(q, h.document.text) for h in hits]
    bm = np.array([x[0] for x in lex])
    rows = []
    for i, h in enumerate(hits):
        short = short_law_name(laws[i])
        others = [j for j in same_law.get(laws[i], []) if j != i] if laws[i] else []
        rows.append([
            float(i), math.log1p(i), scores[i] / top, float(len(h.sources or {})),
            sup[i], sup[i] - sup.max(), 0.0,
            _share(_bigram_set(h.document.title), qset), _share(_bigram_set(short), qset),
            1.0 if len(short) >= 2 and short.removesuffix("法") in q else 0.0,
            bm[i], bm[i] - bm.max(), lex[i][1],
            priors.article_prior(h.id, 1 if h.id in own else 0), priors.law_prior(laws[i], own_laws.get(laws[i], 0)),
            len(others) / max(n - 1, 1), sum(1.0 / (1 + j) for j in others), math.log1p(len(h.document.text)),
        ])
    m = np.array(rows, dtype=np.float64)
    m[:, FEATURES.index("support_rank")] = _desc_rank(sup)
    return np.hstack([m, _neighbour_columns(hits, votes)])


def _neighbour_columns(hits: Sequence[Hit], votes: Any) -> np.ndarray:
    """``rerank.neighbours``' five columns; without votes (no memory or no encoder), "no neighbour cited it"."""
    from legalrag.rerank.neighbours import NeighbourMemory, Votes

    return NeighbourMemory.columns(hits, votes if votes is not None else Votes({}, 0.0)).astype(np.float64)


# -- the index's own vectors -------------------------------------------------------------------------------

class IndexVectors:
    """An encoder for the support model whose passage vectors are the ones a dense index component already holds
    (the shipped ``stard-e5``'s vectors of the national law), so no article is encoded at question time: encoding
    30 articles on two cores takes seconds, reading their vectors milliseconds. :meth:`expect` names the
    articles about to be scored (passage text -> id); a passage it does not know, and every question, goes to the
    real ``encoder``. The last few question vectors are kept, so the neighbour votes reuse the support model's."""

    def __init__(self, dense: Any, encoder: Any, keep: int = 8):
        self.dense, self.encoder, self.keep = dense, encoder, keep
        self._expected: dict[str, str] = {}
        self._queries: dict[str, np.ndarray] = {}

    def __getattr__(self, name: str) -> Any:  # model_id, dimension, ... of the real encoder
        return getattr(self.encoder, name)

    def expect(self, passages: Mapping[str, str]) -> None:
        self._expected = dict(passages)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._queries]
        if todo:
            if len(self._queries) + len(todo) > self.keep:
                self._queries.clear()
            self._queries.update(zip(todo, np.asarray(self.encoder.encode_queries(todo), dtype=np.float32)))
        return np.stack([self._queries[t] for t in texts]) if texts else np.zeros((0, 0), np.float32)

    def _stored(self, passage: str) -> np.ndarray | None:
        doc_id = self._expected.get(passage)
        rows = getattr(self.dense, "_row_of", None)
        if doc_id is None or rows is None or doc_id not in rows:
            return None
        v = np.asarray(self.dense.index.reconstruct(rows[doc_id]), dtype=np.float32)
        n = float(np.linalg.norm(v))
        return v / n if n > 0 else v

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        found = [self._stored(t) for t in texts]
        missing = [t for t, v in zip(texts, found) if v is None]
        if missing:
            fresh = iter(np.asarray(self.encoder.encode_documents(missing), dtype=np.float32))
            found = [v if v is not None else next(fresh) for v in found]
        return np.stack(found) if found else np.zeros((0, 0), np.float32)


class IndexedSupport:
    """The support model ``support`` (same model, same tables) scoring with :class:`IndexVectors` over ``dense``:
    ``scores(pairs)`` as the support model's, the articles' vectors read from the index."""

    def __init__(self, support: Any, dense: Any):
        from legalrag.citecheck.support import SupportScorer

        self.base = support
        self.encoder = IndexVectors(dense, support.encoder)
        self.scorer = SupportScorer(self.encoder, support.model, getattr(support, "idf", None))

    @property
    def model(self) -> Any:
        return self.scorer.model

    def scores(self, pairs: Sequence[tuple[str, Any]]) -> list[float]:
        from legalrag.citecheck.support import passage

        self.encoder.expect({passage(a): a.id for _, a in pairs if not isinstance(a, str)})
        return self.scorer.scores(pairs)


def dense_component(index: Any, encoder: str = "stard-e5") -> Any:
    """The index's dense component made with ``encoder`` (the support model's), or None."""
    for name in getattr(index, "names", ()):
        comp = (getattr(index, "manifest", {}) or {}).get("components", {}).get(name, {})
        if comp.get("kind") == "dense" and (comp.get("params") or {}).get("encoder") == encoder:
            return index.retriever(name)
    return None


# -- the model ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LinearScorer:
    """A logistic regression over standardised features: ``score = intercept + coef . (x - mean) / scale``."""

    coefficients: tuple[float, ...]
    intercept: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]

    def score(self, x: np.ndarray) -> np.ndarray:
        z = (x - np.asarray(self.mean)) / np.where(np.asarray(self.scale) > 0, self.scale, 1.0)
        return z @ np.asarray(self.coefficients) + self.intercept

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "linear", "coefficients": list(self.coefficients), "intercept": self.intercept,
                "mean": list(self.mean), "scale": list(self.scale)}


class BoosterScorer:
    """A LightGBM model (``rerank.learned``'s lambdarank parameters) in LightGBM's text format."""

    def __init__(self, booster: Any, file: str = "model.txt"):
        self.booster, self.file = booster, file

    def score(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.booster.predict(x, num_threads=1), dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "lightgbm", "file": self.file}


@dataclass(frozen=True)
class Platt:
    """``p = 1 / (1 + exp(-(a * score + b)))`` with ``a >= 0``, so the probability never falls as the score rises."""

    a: float
    b: float

    def __call__(self, score: np.ndarray) -> np.ndarray:
        z = np.clip(self.a * np.asarray(score, dtype=np.float64) + self.b, -50.0, 50.0)
        return 1.0 / (1.0 + np.exp(-z))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "platt", "a": self.a, "b": self.b}


RANK_ONLY = tuple(0.5 / (1 + r) for r in range(100))  # the probability without a model: falls with the rank


@dataclass(frozen=True)
class SelectorModel:
    scorer: Any  # LinearScorer or BoosterScorer
    calibration: Platt
    threshold: float
    priors: Priors
    spec: Mapping[str, Any] = field(default_factory=dict)
    memory: Any = None  # rerank.neighbours.NeighbourMemory of the training questions, or None

    def to_spec(self) -> dict[str, Any]:
        return {**dict(self.spec), "format": FORMAT, "version": 1, "features": list(FEATURES),
                "scorer": self.scorer.to_dict(), "calibration": self.calibration.to_dict(),
                "threshold": self.threshold, "priors": self.priors.to_dict(),
                "neighbours": self.memory.spec() if self.memory is not None else None}


class ArticleSelector:
    """``select(question, hits, k=3)``; ``ArticleSelector()`` without a model keeps the retrieval order.

    ``support``: anything with ``scores([(question, Document), ...]) -> [float]`` (the support pair model,
    ``citecheck.support.SupportScorer``); needed with a model, which learned from its scores."""

    def __init__(self, model: SelectorModel | None = None, *, support: Any = None, encoder: Any = None,
                 vectors: Any = None, clause_bm25: ClauseBM25 | None = None, path: Path | None = None):
        if model is not None and support is None:
            raise InputError("a trained selector needs the support pair model's scores: pass support= "
                             "(legalrag.wiring.make_support_scorer())", field="support")
        self.model, self.support, self.path = model, support, path
        # the question's vector for the neighbour votes: the encoder given, else the support model's own
        self.encoder = encoder if encoder is not None else getattr(support, "encoder", None)
        if vectors is not None and getattr(support, "encoder", None) is not None and model is not None:
            # the same support model, reading the articles' vectors from the index instead of encoding them
            self.support = IndexedSupport(support, vectors)
            if encoder is None:
                self.encoder = self.support.encoder  # its question vector is reused for the neighbour votes
        self.clause_bm25 = clause_bm25 or ClauseBM25()

    @property
    def calibrated(self) -> bool:
        return self.model is not None

    @property
    def threshold(self) -> float:
        return self.model.threshold if self.model is not None else 0.0

    def warm_up(self) -> None:
        """Load the tables and run the support model once, so the first question pays no start-up."""
        from legalrag.types import Document

        hit = Hit(Document("warm-up", "劳动者可以解除劳动合同。", "劳动合同法第一条"), 1.0, 1)
        self.select("公司拖欠工资怎么办", [hit])

    def probabilities(self, question: str, hits: Sequence[Hit]) -> np.ndarray:
        """The calibrated probability of each hit, in the given order."""
        if not hits:
            return np.zeros(0)
        if self.model is None:
            return np.array([RANK_ONLY[min(i, len(RANK_ONLY) - 1)] for i in range(len(hits))])
        q = question[:MAX_QUESTION_CHARS]
        sup = self.support.scores([(q, h.document) for h in hits])
        votes = None
        if self.model.memory is not None and self.encoder is not None:
            votes = self.model.memory.votes(np.asarray(self.encoder.encode_queries([q]), dtype=np.float32)[0])
        x = feature_matrix(q, hits, support_scores=sup, priors=self.model.priors, clause_bm25=self.clause_bm25,
                           votes=votes)
        return self.model.calibration(self.model.scorer.score(x))

    def select(self, question: str, hits: Sequence[Hit], *, k: int = 3) -> ArticleSelection:
        t0 = time.perf_counter()
        if k < 0:
            raise InputError(f"k must be 0 or more, got {k}", field="k")
        hits = list(hits)
        probs = self.probabilities(question or "", hits) if (question or "").strip() else \
            np.zeros(len(hits))  # an empty question decides nothing
        order = sorted(range(len(hits)), key=lambda i: (-probs[i], i))
        ranked = tuple(Decisive(hits[i], float(probs[i]), i) for i in order)
        if self.model is None and (question or "").strip():
            chosen = ranked[:k]
        else:
            chosen = tuple(d for d in ranked if d.probability >= self.threshold and d.probability > 0)[:k]
        return ArticleSelection(ranked, chosen, self.threshold, time.perf_counter() - t0)


# -- files -------------------------------------------------------------------------------------------------

def shipped_selector_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "data" / "models" / SELECTOR_NAME


def _model_dir(path: str | Path | None) -> Path:
    if path is None:
        return shipped_selector_dir()
    p = Path(path)
    return p.parent if p.name in (SPEC_FILE, CARD_FILE) else p


def check_files(directory: Path) -> dict[str, Any]:
    """The model card of a selector directory after every file it lists is checked against its SHA-256."""
    from legalrag.io import sha256_file

    card_path = directory / CARD_FILE
    fix = RESTORE if directory == shipped_selector_dir() else \
        f"retrain it with `legalrag train selector --out {directory}`"
    if not card_path.is_file():
        raise ModelError(f"{card_path}: missing, so the selector at {directory} cannot be checked; {fix}")
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"{card_path}: unreadable model card ({exc}); {fix}") from exc
    files = card.get("files_sha256") or {}
    if SPEC_FILE not in files:
        raise ModelError(f"{card_path}: the card lists no {SPEC_FILE}; {fix}")
    for rel, digest in files.items():
        f = directory / rel
        if not f.is_file():
            raise ModelError(f"{f}: missing; {fix}")
        if sha256_file(f) != digest:
            raise ModelError(f"{f}: SHA-256 differs from {card_path} (truncated or altered); refusing it; {fix}")
    return card


def read_model(directory: str | Path) -> SelectorModel:
    """The model in ``directory`` (its files checked first)."""
    d = _model_dir(directory)
    check_files(d)
    spec_path = d / SPEC_FILE
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    if spec.get("format") != FORMAT or tuple(spec.get("features") or ()) != FEATURES:
        raise ModelError(f"{spec_path}: a selector of another format or feature set ({spec.get('format')}, "
                         f"{len(spec.get('features') or ())} features); retrain it with `legalrag train selector`")
    s = spec["scorer"]
    if s["kind"] == "linear":
        scorer: Any = LinearScorer(tuple(s["coefficients"]), float(s["intercept"]), tuple(s["mean"]),
                                   tuple(s["scale"]))
    elif s["kind"] == "lightgbm":
        from legalrag._optional import require

        lgb = require("lightgbm", "dense")
        scorer = BoosterScorer(lgb.Booster(model_file=str(d / s["file"])), s["file"])
    else:
        raise ModelError(f"{spec_path}: unknown scorer kind {s['kind']!r}; retrain it with `legalrag train selector`")
    c = spec["calibration"]
    memory = None
    if spec.get("neighbours"):
        from legalrag.rerank.neighbours import NeighbourMemory

        memory = NeighbourMemory.load(d, spec["neighbours"])
    return SelectorModel(scorer, Platt(float(c["a"]), float(c["b"])), float(spec["threshold"]),
                         Priors.from_dict(spec.get("priors") or {}),
                         {k: v for k, v in spec.items() if k not in ("scorer", "calibration", "priors")}, memory)


def write_model(directory: str | Path, model: SelectorModel, card: Mapping[str, Any] | None = None,
                readme: Any = None) -> Path:
    """Write ``directory`` atomically: ``selector.json`` (+ ``model.txt`` for a LightGBM scorer), the card
    ``legalrag_model.json`` listing the SHA-256 of every file, and, given ``readme(card) -> str``, ``README.md``."""
    from legalrag.io import atomic_dir, sha256_file

    d = Path(directory)
    with atomic_dir(d) as tmp:
        names = [SPEC_FILE]
        if isinstance(model.scorer, BoosterScorer):
            model.scorer.booster.save_model(str(tmp / model.scorer.file))
            names.append(model.scorer.file)
        if model.memory is not None:
            model.memory.save(tmp)
            names += [NEIGHBOUR_ROWS, NEIGHBOUR_VECTORS]
        (tmp / SPEC_FILE).write_text(json.dumps(model.to_spec(), ensure_ascii=False, indent=1) + "\n",
                                     encoding="utf-8")
        full = {"name": SELECTOR_NAME, "kind": SELECTOR_KIND, **dict(card or {}),
                "files_sha256": {n: sha256_file(tmp / n) for n in names}}
        (tmp / CARD_FILE).write_text(json.dumps(full, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        if readme is not None:
            (tmp / "README.md").write_text(readme(full), encoding="utf-8")
    return d


def load_selector(path: str | Path | None = None, *, support: Any = None, encoder: Any = None,
                  index: Any = None) -> ArticleSelector:
    """The selector in ``path`` (a directory written by ``legalrag train selector``, or its ``selector.json``);
    ``None``: the shipped one. Every file is checked against its card's SHA-256; a missing or altered file is a
    :class:`~legalrag.errors.ModelError` naming the path and the fix.

    ``support``: the support pair model (the root's ``legalrag.wiring.make_support_scorer()``); else the full
    model over ``encoder`` (the shipped ``stard-e5`` the model was trained with); with neither, the lexical model
    (``SupportScorer()``), which the shipped selector was not trained with (its probabilities are then less
    sharp). ``encoder`` (default:
    the support model's) encodes the question for the neighbour votes; with none, no neighbour votes.
    ``index``: the index the hits come from; when it has a ``stard-e5`` dense component (the default index does),
    the support model reads the articles' vectors from it instead of encoding them (the same cosines, within the
    int8 rounding of the shipped vectors), which is what keeps a question under a second on two cores."""
    d = _model_dir(path)
    if not d.is_dir():
        raise ModelError(f"{d}: no selector there; " + (RESTORE if path is None else
                                                       f"train one with `legalrag train selector --out {d}`"))
    model = read_model(d)
    if support is None:
        from legalrag.citecheck.support import SupportModel, SupportScorer

        support = SupportScorer(encoder, SupportModel.load("full")) if encoder is not None else SupportScorer()
    vectors = dense_component(index) if index is not None else None
    return ArticleSelector(model, support=support, encoder=encoder, vectors=vectors, path=d)


__all__ = ["FEATURES", "ArticleSelection", "ArticleSelector", "ClauseBM25", "Decisive", "IndexVectors",
           "IndexedSupport", "LinearScorer", "Platt", "Priors", "SelectorModel", "dense_component", "feature_matrix",
           "law_of", "load_selector", "read_model", "write_model"]
