"""An IDF-weighted co-citation graph over training decisions, used to propose provisions retrieval misses.

Each training decision is a binary vector over provisions, weighted by IDF (``log(N / df)``), so that a
provision nearly every decision cites says little about which decisions are alike. Given the current top
predictions (optionally with weights), the graph finds the ``k`` training decisions whose weighted citation
sets are closest by cosine and scores every other provision by the similarity-weighted share of those
neighbours citing it. Saved as a directory of JSON + ``.npy`` (never pickle).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from legalrag.errors import IndexError_, InputError
from legalrag.io import atomic_dir

from legalrag.citepredict.rules import natural_key

FORMAT = "legalrag-cocitation"


@dataclass(frozen=True)
class CoCitationProposal:
    provision: str
    score: float  # similarity-weighted share of neighbour decisions citing it, in [0, 1]
    neighbours: int  # how many of the neighbour decisions cite it


class CoCitationGraph:
    def __init__(self, provisions: list[str], decision_ids: list[str], indptr: np.ndarray, indices: np.ndarray):
        from scipy.sparse import csr_matrix

        self.provisions = list(provisions)
        self.decision_ids = list(decision_ids)
        self.index = {p: i for i, p in enumerate(self.provisions)}
        n, m = len(self.decision_ids), len(self.provisions)
        self._indptr, self._indices = indptr.astype(np.int64), indices.astype(np.int64)
        data = np.ones(len(self._indices), dtype=np.float64)
        self.matrix = csr_matrix((data, self._indices, self._indptr), shape=(n, m))
        df = np.asarray(self.matrix.sum(axis=0)).ravel()
        self.df = df.astype(np.int64)
        self.idf = np.where(df > 0, np.log(max(n, 1) / np.maximum(df, 1)), 0.0)
        self.weighted = self.matrix.multiply(self.idf[None, :]).tocsr()
        self.norms = np.sqrt(np.asarray(self.weighted.multiply(self.weighted).sum(axis=1)).ravel())

    @classmethod
    def build(cls, citation_sets: Mapping[str, Iterable[str]]) -> "CoCitationGraph":
        if not citation_sets:
            raise InputError("no training citation sets to build a co-citation graph from")
        provs = sorted({p for s in citation_sets.values() for p in s}, key=natural_key)
        index = {p: i for i, p in enumerate(provs)}
        dids = list(citation_sets)
        indptr, indices = [0], []
        for d in dids:
            indices.extend(sorted(index[p] for p in set(citation_sets[d])))
            indptr.append(len(indices))
        return cls(provs, dids, np.asarray(indptr, np.int64), np.asarray(indices, np.int64))

    def nearest(self, predicted: Mapping[str, float] | Iterable[str], k: int = 20) -> list[tuple[str, float]]:
        """The ``k`` training decisions most similar to the predicted set: (decision id, cosine), best first."""
        weights = predicted if isinstance(predicted, Mapping) else {p: 1.0 for p in predicted}
        q = np.zeros(len(self.provisions))
        for p, w in weights.items():
            i = self.index.get(p)
            if i is not None:
                q[i] = self.idf[i] * float(w)
        qn = float(np.linalg.norm(q))
        if qn == 0:
            return []
        dots = self.weighted @ q
        with np.errstate(invalid="ignore", divide="ignore"):
            sims = np.where(self.norms > 0, dots / (self.norms * qn), 0.0)
        cand = np.flatnonzero(sims > 1e-12)
        order = cand[np.lexsort((cand, -sims[cand]))][:k]
        return [(self.decision_ids[i], float(sims[i])) for i in order]

    def propose(self, predicted: Mapping[str, float] | Iterable[str], k: int = 20,
                exclude_predicted: bool = True) -> list[CoCitationProposal]:
        """Score provisions by how many of the nearest training decisions co-cite them (similarity-weighted)."""
        weights = dict(predicted) if isinstance(predicted, Mapping) else {p: 1.0 for p in predicted}
        near = self.nearest(weights, k)
        if not near:
            return []
        total = sum(s for _, s in near)
        score = np.zeros(len(self.provisions))
        hits = np.zeros(len(self.provisions), dtype=np.int64)
        row_of = {d: i for i, d in enumerate(self.decision_ids)} if len(near) else {}
        for did, sim in near:
            r = row_of[did]
            cols = self._indices[self._indptr[r]:self._indptr[r + 1]]
            score[cols] += sim
            hits[cols] += 1
        out = []
        for i in np.flatnonzero(score > 0):
            p = self.provisions[i]
            if exclude_predicted and p in weights:
                continue
            out.append(CoCitationProposal(p, round(float(score[i] / total), 6), int(hits[i])))
        out.sort(key=lambda c: (-c.score, natural_key(c.provision)))
        return out

    def related(self, provision: str, top: int = 10) -> list[tuple[str, float]]:
        """Edges of the co-citation graph: P(other cited | provision cited), best first."""
        i = self.index.get(provision)
        if i is None or self.df[i] == 0:
            return []
        rows = self.matrix[:, i].nonzero()[0]
        co = np.asarray(self.matrix[rows].sum(axis=0)).ravel() / self.df[i]
        co[i] = 0
        order = sorted(np.flatnonzero(co > 0), key=lambda j: (-co[j], natural_key(self.provisions[j])))[:top]
        return [(self.provisions[j], float(co[j])) for j in order]

    def save(self, path: str | Path) -> None:
        with atomic_dir(path) as tmp:
            meta = {"format": FORMAT, "version": 1, "n_decisions": len(self.decision_ids),
                    "provisions": self.provisions, "decision_ids": self.decision_ids}
            (tmp / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
            np.save(tmp / "indptr.npy", self._indptr)
            np.save(tmp / "indices.npy", self._indices)

    @classmethod
    def load(cls, path: str | Path) -> "CoCitationGraph":
        p = Path(path)
        try:
            meta = json.loads((p / "meta.json").read_text(encoding="utf-8"))
            indptr = np.load(p / "indptr.npy", allow_pickle=False)
            indices = np.load(p / "indices.npy", allow_pickle=False)
        except FileNotFoundError as exc:
            raise IndexError_(f"{p}: incomplete co-citation graph ({Path(exc.filename).name} missing); "
                              "rebuild it") from None
        except (json.JSONDecodeError, ValueError) as exc:
            raise IndexError_(f"{p}: corrupt co-citation graph ({exc}); rebuild it") from None
        if meta.get("format") != FORMAT or meta.get("version") != 1:
            raise IndexError_(f"{p}: not a co-citation graph of format {FORMAT} v1; rebuild it")
        n, m = len(meta["decision_ids"]), len(meta["provisions"])
        if indptr.shape != (n + 1,) or indptr[-1] != len(indices) or (len(indices) and indices.max() >= m):
            raise IndexError_(f"{p}: co-citation arrays do not match meta.json; rebuild it")
        return cls(meta["provisions"], meta["decision_ids"], indptr, indices)
