"""Cheap features for the learned ranker, computed for (query, candidate hits).

Per candidate: BM25 score (raw and relative to the best candidate) and rank; for each dense retriever the
cosine (raw and relative) and rank; the fused (input) rank and score; character-bigram overlap of the query
with the law title, the article name and the text; whether the query names the law; the article and law
priors (log counts in training qrels); text length; query length; optionally a cross-encoder's scores and
what similar training questions cited (``rerank/neighbours.py``). Ranks come from ``Hit.sources`` (a
document a retriever did not return gets ``depth + 1``); scores are exact for every candidate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from legalrag.rerank.neighbours import NEIGHBOUR_FEATURES, NeighbourMemory
from legalrag.types import Hit, Query


def _bigrams(text: str) -> set[str]:
    t = "".join(ch for ch in text if not ch.isspace() and ch not in "《》，。、；：？！,.;:?!()（）“”\"'")
    return {t[i:i + 2] for i in range(len(t) - 1)} or ({t} if t else set())


def _overlap(q: set[str], other: set[str]) -> float:
    return len(q & other) / len(other) if other else 0.0


def short_law_name(law: str) -> str:
    return law.removeprefix("中华人民共和国").strip("《》 ")


@dataclass
class Prior:
    """How often each article and each law is gold in training qrels (estimated on training queries only)."""

    article: dict[str, int] = field(default_factory=dict)
    law: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_queries(cls, queries: Iterable[Query], law_of: Mapping[str, str]) -> "Prior":
        p = cls()
        for q in queries:
            for g in q.gold_ids:
                p.article[g] = p.article.get(g, 0) + 1
                law = law_of.get(g)
                if law:
                    p.law[law] = p.law.get(law, 0) + 1
        return p

    def to_dict(self) -> dict[str, Any]:
        return {"article": self.article, "law": self.law}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Prior":
        return cls(dict(d.get("article", {})), dict(d.get("law", {})))


PRIOR_FEATURES = ("article_prior", "law_prior")


CROSS_FEATURES = ("cross_score", "cross_rel", "cross_rank")
CROSS_MEMO_MAX = 200_000  # memoised (query, article) cross-encoder scores


class FeatureExtractor:
    """``FeatureExtractor(bm25, [dense...], depth, cross=None)``; ``names``; ``matrix(query, hits, prior)`` -> (n, f).

    ``cross``: a trained cross-encoder (``rerank.cross.CrossEncoderReranker``, anything with ``score(query,
    texts)``, ``name`` and ``max_chars``); its logit, its gap to the best candidate's and its rank among the
    candidates become three features. It reads every (query, article) pair, so it is the costly feature."""

    def __init__(self, bm25: Any = None, dense: Sequence[Any] = (), depth: int = 100, cross: Any = None,
                 neighbours: bool = False):
        self.bm25 = bm25
        self.dense = list(dense)
        self.depth = depth
        self.cross = cross
        self.neighbours = neighbours  # five columns filled by set_neighbours (rerank/neighbours.py)
        self._bm25_pos: dict[str, int] | None = None
        self._cross_memo: dict[tuple[str, str], float] = {}

    @property
    def retriever_names(self) -> list[str]:
        return (([self.bm25.name] if self.bm25 is not None else []) + [d.name for d in self.dense]
                + ([self.cross.name] if self.cross is not None else []))

    @property
    def names(self) -> list[str]:
        out = []
        if self.bm25 is not None:
            out += ["bm25_score", "bm25_rel", "bm25_rank"]
        for i in range(len(self.dense)):
            out += [f"dense{i}_cos", f"dense{i}_rel", f"dense{i}_rank"]
        out += ["fused_rank", "fused_score_rel", "law_title_overlap", "name_overlap", "text_overlap",
                "query_names_law", *PRIOR_FEATURES, "log_doc_len", "log_query_len"]
        if self.cross is not None:
            out += list(CROSS_FEATURES)
        if self.neighbours:
            out += list(NEIGHBOUR_FEATURES)
        return out

    def _cross_columns(self, query: str, hits: Sequence[Hit]) -> list[np.ndarray]:
        from legalrag.rerank.cross import pair_text

        max_chars = int(getattr(self.cross, "max_chars", 300))
        # memo by (query, article): with a neighbour memory, cross-validation rebuilds every row per fold
        todo = [h for h in hits if (query, h.id) not in self._cross_memo]
        if todo:
            if len(self._cross_memo) > CROSS_MEMO_MAX:  # a long-lived server must not grow without bound
                self._cross_memo.clear()
            fresh = self.cross.score(query, [pair_text(h.document.title, h.document.text, max_chars) for h in todo])
            self._cross_memo.update({(query, h.id): float(x) for h, x in zip(todo, fresh)})
        s = np.array([self._cross_memo[(query, h.id)] for h in hits], dtype=np.float64)
        order = np.argsort(-s, kind="stable")
        rank = np.empty(len(s))
        rank[order] = np.arange(1, len(s) + 1)
        return [s, s - s.max(), rank]

    def _bm25_scores(self, query: str, hits: Sequence[Hit]) -> np.ndarray:
        if self._bm25_pos is None:
            self._bm25_pos = {d.id: i for i, d in enumerate(self.bm25.documents)}
        all_scores = self.bm25.scores(query)
        return np.array([all_scores[self._bm25_pos[h.id]] if h.id in self._bm25_pos else 0.0 for h in hits])

    def _rank(self, hit: Hit, name: str) -> float:
        sources = hit.sources or {hit.retriever: hit.rank}
        return float(sources.get(name, self.depth + 1))

    def base_matrix(self, query: str, hits: Sequence[Hit], query_vectors: Sequence[np.ndarray] | None = None) -> np.ndarray:
        """All features but the priors (which are set per training fold by :meth:`set_priors`); priors are 0."""
        n = len(hits)
        cols: list[np.ndarray] = []
        if self.bm25 is not None:
            s = self._bm25_scores(query, hits)
            top = s.max() if n and s.max() > 0 else 1.0
            cols += [s, s / top, np.array([self._rank(h, self.bm25.name) for h in hits])]
        for i, d in enumerate(self.dense):
            qv = query_vectors[i] if query_vectors is not None else d.encode_queries([query])[0]
            cos = np.nan_to_num(d.similarity(qv, [h.id for h in hits]), nan=0.0)
            cols += [cos, cos - (cos.max() if n else 0.0), np.array([self._rank(h, d.name) for h in hits])]
        qb = _bigrams(query)
        fused = np.array([h.score for h in hits], dtype=np.float64)
        top = fused.max() if n and fused.max() > 0 else 1.0
        law_overlap, name_overlap, text_overlap, names_law, doc_len = [], [], [], [], []
        for h in hits:
            law = str(h.document.metadata.get("law", ""))
            short = short_law_name(law)
            law_overlap.append(_overlap(qb, _bigrams(short)))
            name_overlap.append(_overlap(qb, _bigrams(h.document.title)))
            text_overlap.append(len(qb & _bigrams(h.document.text)) / max(len(qb), 1))
            names_law.append(1.0 if short and len(short) >= 2 and short.removesuffix("法") in query else 0.0)
            doc_len.append(math.log1p(len(h.document.text)))
        cols += [np.array([float(h.rank) for h in hits]), fused / top, np.array(law_overlap),
                 np.array(name_overlap), np.array(text_overlap), np.array(names_law),
                 np.zeros(n), np.zeros(n), np.array(doc_len), np.full(n, math.log1p(len(query)))]
        if self.cross is not None and n:
            cols += self._cross_columns(query, hits)
        if self.neighbours:
            cols += [np.zeros(n)] * len(NEIGHBOUR_FEATURES)
        return np.column_stack(cols).astype(np.float32) if n else np.zeros((0, len(self.names)), np.float32)

    def set_priors(self, matrix: np.ndarray, hits: Sequence[Hit], prior: Prior,
                   own_gold: Sequence[str] = (), own_laws: Mapping[str, int] | None = None) -> np.ndarray:
        """Fill the prior columns. For a TRAINING query pass its ``own_gold``: its own qrels are left out of
        the counts (leave-one-out), else the model learns "prior > 0 means relevant" from its own labels."""
        a, l = self.names.index("article_prior"), self.names.index("law_prior")
        own = set(own_gold)
        if own_laws is None:  # the laws of the query's own gold (exact when given, else those among the hits)
            own_laws = {}
            for h in hits:
                if h.id in own:
                    law = str(h.document.metadata.get("law", ""))
                    own_laws[law] = own_laws.get(law, 0) + 1
        m = matrix.copy()
        for j, h in enumerate(hits):
            law = str(h.document.metadata.get("law", ""))
            m[j, a] = math.log1p(max(0, prior.article.get(h.id, 0) - (1 if h.id in own else 0)))
            m[j, l] = math.log1p(max(0, prior.law.get(law, 0) - own_laws.get(law, 0)))
        return m

    def set_neighbours(self, matrix: np.ndarray, hits: Sequence[Hit], votes: Any) -> np.ndarray:
        """Fill the neighbour columns from ``votes`` (``rerank.neighbours.Votes``; for a TRAINING query, votes
        computed without the query itself)."""
        start = self.names.index(NEIGHBOUR_FEATURES[0])
        m = matrix.copy()
        m[:, start:start + len(NEIGHBOUR_FEATURES)] = NeighbourMemory.columns(hits, votes)
        return m

    def matrix(self, query: str, hits: Sequence[Hit], prior: Prior) -> np.ndarray:
        return self.set_priors(self.base_matrix(query, hits), hits, prior)
