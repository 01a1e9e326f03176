"""What similar training questions cited: a memory of the learned ranker's training queries.

The memory holds each training query's id, its gold article ids and its vector under one of the index's dense
encoders. For a new query, its ``k`` most similar remembered queries (cosine) vote for their gold articles,
each weighted by ``exp((sim - best) / temperature)``; an article's vote is the weighted share of the neighbours
that cited it. This is the co-citation signal of citation prediction ("cases like this one cite ...") applied
to questions: on STARD most dev questions cite an article some training question also cites, often one the
first stage ranks low. The ranker reads five features per candidate (:data:`NEIGHBOUR_FEATURES`) and takes the
best-voted articles the first stage missed as extra candidates (``expand``).

A training query never votes for itself (leave-one-out by query id), else the ranker would learn that a vote
means gold from the query's own label. Saved beside the ranker as ``neighbours.jsonl`` (id and gold ids per
line) and ``neighbours.npy`` (float32 vectors, read with ``allow_pickle=False``) plus a ``neighbours`` entry
in ``spec.json`` (settings and the dense component the vectors come from).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

import numpy as np

from legalrag.errors import IndexError_, InputError
from legalrag.types import Hit

NEIGHBOUR_FEATURES = ("nb_vote", "nb_sim", "nb_sim_gap", "nb_count", "nb_top_sim")
SOURCE = "neighbours"


class DocumentLookup(Protocol):
    """Where extra candidates come from: an ``Index`` (documents read on demand) or a dict of documents."""

    def __contains__(self, doc_id: object) -> bool: ...

    def get(self, doc_id: str) -> Any: ...


@dataclass(frozen=True)
class NeighbourSettings:
    k: int = 10  # remembered queries that vote
    temperature: float = 0.02  # e5-style cosines sit in a narrow band, so the weights need a small temperature
    expand: int = 20  # best-voted articles added as candidates when the first stage missed them

    def __post_init__(self) -> None:
        if self.k < 1:
            raise InputError(f"-o neighbours must be at least 1 (0 turns the memory off), got {self.k}")
        if self.temperature <= 0:
            raise InputError(f"the neighbour temperature must be positive, got {self.temperature}")
        if self.expand < 0:
            raise InputError(f"-o expand must be 0 or more, got {self.expand}")


@dataclass(frozen=True)
class Vote:
    share: float  # weighted share of the k neighbours whose gold holds the article
    sim: float  # cosine of the most similar neighbour that cited it
    count: int  # neighbours that cited it


@dataclass(frozen=True)
class Votes:
    by_doc: Mapping[str, Vote]
    top_sim: float  # cosine of the nearest remembered query (how familiar the question is)

    def ranked(self) -> list[str]:
        return sorted(self.by_doc, key=lambda d: (-self.by_doc[d].share, -self.by_doc[d].sim, d))


class NeighbourMemory:
    """``NeighbourMemory(ids, gold, vectors, settings, encoder)``; ``votes(vector, exclude=qid)``."""

    def __init__(self, ids: Sequence[str], gold: Sequence[Sequence[str]], vectors: np.ndarray,
                 settings: NeighbourSettings, encoder: str):
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(ids) or len(gold) != len(ids):
            raise InputError(f"neighbour memory: {len(ids)} ids, {len(gold)} gold lists and vectors of shape "
                             f"{vectors.shape} do not line up")
        self.vectors = vectors  # saved as given; cosines divide by the norms
        norms = np.linalg.norm(vectors, axis=1)
        self._inv_norms = 1.0 / np.where(norms > 0, norms, 1.0)
        self.ids = [str(i) for i in ids]
        self.gold = [tuple(str(g) for g in gs) for gs in gold]
        self.settings = settings
        self.encoder = encoder
        self._row = {qid: r for r, qid in enumerate(self.ids)}

    def __len__(self) -> int:
        return len(self.ids)

    def subset(self, rows: Sequence[int]) -> "NeighbourMemory":
        """The memory of these rows only (a cross-validation fold's training queries)."""
        rows = list(rows)
        return NeighbourMemory([self.ids[r] for r in rows], [self.gold[r] for r in rows], self.vectors[rows],
                               self.settings, self.encoder)

    def votes(self, vector: np.ndarray, exclude: str | None = None) -> Votes:
        """Votes of the ``k`` nearest remembered queries; ``exclude``: a query id that must not vote (itself)."""
        if not len(self.ids):
            return Votes({}, 0.0)
        v = np.asarray(vector, dtype=np.float32).ravel()
        n = np.linalg.norm(v)
        sims = (self.vectors @ (v / n if n > 0 else v)) * self._inv_norms
        if exclude is not None and exclude in self._row:
            sims[self._row[exclude]] = -np.inf
        k = min(self.settings.k, int(np.isfinite(sims).sum()))
        if k <= 0:
            return Votes({}, 0.0)
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        best = float(sims[top[0]])
        weights = np.exp((sims[top] - best) / self.settings.temperature)
        total = float(weights.sum())
        share: dict[str, float] = {}
        sim: dict[str, float] = {}
        count: dict[str, int] = {}
        for r, w in zip(top, weights):
            for g in set(self.gold[r]):
                share[g] = share.get(g, 0.0) + float(w) / total
                sim[g] = max(sim.get(g, -1.0), float(sims[r]))
                count[g] = count.get(g, 0) + 1
        return Votes({g: Vote(share[g], sim[g], count[g]) for g in share}, best)

    # -- features and candidates -------------------------------------------------------------------------
    @staticmethod
    def columns(hits: Sequence[Hit], votes: Votes) -> np.ndarray:
        """(n, 5): vote share, best citing neighbour's cosine, its gap to the nearest neighbour, citing count,
        and the nearest neighbour's cosine (the same for every candidate)."""
        out = np.zeros((len(hits), len(NEIGHBOUR_FEATURES)), dtype=np.float32)
        for j, h in enumerate(hits):
            v = votes.by_doc.get(h.id)
            out[j] = (v.share, v.sim, votes.top_sim - v.sim, v.count, votes.top_sim) if v else \
                (0.0, 0.0, 1.0, 0.0, votes.top_sim)
        return out

    def expand(self, hits: Sequence[Hit], votes: Votes, documents: DocumentLookup) -> list[Hit]:
        """``hits`` plus up to ``expand`` best-voted articles not among them, ranked after them (the fused
        rank and score features then say "not found by the first stage")."""
        have = {h.id for h in hits}
        out = list(hits)
        added = 0
        for d in votes.ranked():
            if added >= self.settings.expand:
                break
            if d in have or d not in documents:
                continue
            added += 1
            out.append(Hit(document=documents.get(d), score=0.0, rank=len(out) + 1, retriever=SOURCE,
                           sources={SOURCE: added}))
        return out

    # -- persistence -----------------------------------------------------------------------------------------
    def spec(self) -> dict[str, Any]:
        return {**asdict(self.settings), "encoder": self.encoder, "n_queries": len(self.ids)}

    def save(self, directory: Path) -> None:
        """Into ``directory`` (the ranker's temp dir, renamed into place with it)."""
        with (directory / "neighbours.jsonl").open("w", encoding="utf-8") as f:
            for qid, gold in zip(self.ids, self.gold):
                f.write(json.dumps({"query_id": qid, "gold_ids": list(gold)}, ensure_ascii=False) + "\n")
        np.save(directory / "neighbours.npy", self.vectors, allow_pickle=False)

    @classmethod
    def load(cls, directory: Path, spec: Mapping[str, Any]) -> "NeighbourMemory":
        rows_file, vec_file = directory / "neighbours.jsonl", directory / "neighbours.npy"
        if not rows_file.exists() or not vec_file.exists():
            raise IndexError_(f"the ranker at {directory} uses a neighbour memory but {rows_file.name} or "
                              f"{vec_file.name} is missing; retrain it with `legalrag train ranker -o neighbours=K`")
        ids, gold = [], []
        for n, line in enumerate(rows_file.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                ids.append(str(row["query_id"]))
                gold.append([str(g) for g in row["gold_ids"]])
            except (ValueError, KeyError, TypeError) as e:
                raise IndexError_(f"{rows_file}:{n}: not a neighbour row ({e}); retrain the ranker") from e
        vectors = np.load(vec_file, allow_pickle=False)
        settings = NeighbourSettings(**{k: spec[k] for k in ("k", "temperature", "expand") if k in spec})
        return cls(ids, gold, vectors, settings, str(spec.get("encoder", "")))


def settings_or_none(k: int, expand: int = 20, temperature: float = 0.02) -> NeighbourSettings | None:
    """CLI helper: ``-o neighbours=0`` turns the memory off."""
    return NeighbourSettings(k=k, expand=expand, temperature=temperature) if k else None
