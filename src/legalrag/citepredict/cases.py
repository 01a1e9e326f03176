"""Similar-case voting: labelled cases (facts + the provisions their decision cited) searched with BM25.

A new case's nearest labelled cases vote for the provisions they cite, each vote weighted by the neighbour's
BM25 score relative to the best neighbour; a provision's score is its share of the total weight, in [0, 1].
This is the case retriever of retrieval-augmented judgment drafting, used as a citation signal: it recovers
the fact-dependent provisions (sentencing, joint crime, confession) that statute retrieval misses, on any
corpus with labelled cases. A case never votes for itself: neighbours whose facts equal the query's are
skipped, so a memory built from the development cases can be calibrated on them (leave-one-out).

The cases are searched with BM25 or, given an encoder (``build(..., encoder=...)``), by the cosine of the
encoder's query vectors (facts against facts: :class:`DenseCases`); a dense neighbour's weight is
``exp((cos - cos_best) / tau)``, since cosines of one encoder all lie close together.

Cases with partial labels (CAIL2018: only the charges' own articles, numbered above the general part,
``partial_above``) vote only for the provisions their labels cover, among the ``k`` nearest of all cases; the
other provisions (the general part) are voted by the ``k`` nearest complete cases, so thousands of partial cases
neither dilute nor crowd out the complete cases' votes.

Saved as a directory: ``cases.jsonl`` (id, facts as indexed, cited provisions, ``partial`` where so) and
``bm25/`` or ``dense/`` (``vectors.npy``, or int8 codes and one scale per vector, + ``meta.json`` naming the
encoder's model id; no pickle). A dense memory can be saved without
the case texts (``save(..., texts=False)``: each case keeps the first 16 hex digits of the SHA-256 of its facts
instead, enough to skip the query's own case), so a model that ships does not carry the labelled cases' facts.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from legalrag.citepredict.data import Case
from legalrag.errors import InputError
from legalrag.io import atomic_dir, read_jsonl, sha256_text
from legalrag.retrieval.bm25 import BM25Retriever
from legalrag.types import Document, Hit

CASES_FILE = "cases.jsonl"
DIGEST_HEX = 16  # hex digits of a case's facts digest kept by a memory saved without texts
DENSE_TAU = 0.05


class DenseCases:
    """Labelled cases searched by the cosine of an encoder's query vectors; a hit's score is
    ``exp((cos - 1) / tau)`` so that score ratios are ``exp((cos - cos_best) / tau)``."""

    def __init__(self, documents: Sequence[Document], vectors: np.ndarray, encoder: Any, tau: float = DENSE_TAU,
                 int8: bool = False):
        """``int8``: saved as int8 codes with one scale per vector (a memory of thousands of cases that ships);
        ``vectors`` are then the dequantised codes (``build`` rounds them so), and a loaded memory ranks as the
        built one."""
        self.documents = list(documents)
        self.int8 = int8
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.encoder, self.tau = encoder, tau
        self.name = f"cases:{encoder.model_id}"

    @classmethod
    def build(cls, documents: Sequence[Document], encoder: Any, tau: float = DENSE_TAU,
              int8: bool = False) -> "DenseCases":
        vectors = np.asarray(encoder.encode_queries([d.text for d in documents]), dtype=np.float32)
        if int8:
            from legalrag.national import dequantise, quantise

            vectors = dequantise(*quantise(vectors))
        return cls(documents, vectors, encoder, tau, int8)

    def cosines(self, query: str) -> np.ndarray:
        """The cosine of ``query``'s vector with every case's."""
        return self.vectors @ np.asarray(self.encoder.encode_queries([query]), dtype=np.float32)[0]

    def top(self, cos: np.ndarray, k: int, among: np.ndarray | None = None) -> list[Hit]:
        """The ``k`` best cases by ``cos`` (of :meth:`cosines`), among those ``among`` marks (a boolean mask)."""
        idx = np.arange(len(cos)) if among is None else np.flatnonzero(among)
        order = idx[np.argsort(-cos[idx], kind="stable")[:k]]
        return [Hit(document=self.documents[i], score=math.exp((float(cos[i]) - 1.0) / self.tau), rank=r,
                    retriever=self.name) for r, i in enumerate(order, 1)]

    def retrieve(self, query: str, k: int = 10, filter=None) -> list[Hit]:
        return self.top(self.cosines(query), k)

    def save(self, path: Path) -> None:
        from legalrag.national import quantise

        path.mkdir(parents=True, exist_ok=True)
        if self.int8:  # the held vectors are already dequantised codes: quantising them again gives the same codes
            codes, scales = quantise(self.vectors)
            np.save(path / "vectors.i8.npy", codes, allow_pickle=False)
            np.save(path / "scales.npy", scales, allow_pickle=False)
        else:
            np.save(path / "vectors.npy", self.vectors, allow_pickle=False)
        (path / "meta.json").write_text(json.dumps({"model_id": self.encoder.model_id, "tau": self.tau,
                                                    "int8": self.int8, "ids": [d.id for d in self.documents]}),
                                        encoding="utf-8")

    @classmethod
    def load(cls, path: Path, documents: Sequence[Document], encoder: Any) -> "DenseCases":
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
        if encoder is None or encoder.model_id != meta["model_id"]:
            got = "no encoder" if encoder is None else f"encoder {encoder.model_id!r}"
            raise InputError(f"this case memory was built with encoder {meta['model_id']!r} and got {got}; use an "
                             "index whose dense component has that encoder", path=str(path))
        by_id = {d.id: d for d in documents}
        if meta.get("int8"):
            from legalrag.national import dequantise

            vectors = dequantise(np.load(path / "vectors.i8.npy", allow_pickle=False),
                                 np.load(path / "scales.npy", allow_pickle=False))
            return cls([by_id[i] for i in meta["ids"]], vectors, encoder, float(meta.get("tau", DENSE_TAU)), True)
        return cls([by_id[i] for i in meta["ids"]], np.load(path / "vectors.npy", allow_pickle=False), encoder,
                   float(meta.get("tau", DENSE_TAU)))


def _votes(hits: Sequence[Hit], cases: dict[str, Case], keep) -> list["CaseVote"]:
    """The share of the neighbours' weight (score relative to the best) citing each provision ``keep`` accepts."""
    if not hits:
        return []
    top = hits[0].score
    weight: dict[str, float] = {}
    voters: dict[str, list[str]] = {}
    for h in hits:
        for p in cases[h.id].gold:
            if keep(p):
                weight[p] = weight.get(p, 0.0) + h.score / top
                voters.setdefault(p, []).append(h.id)
    total = sum(h.score / top for h in hits)
    return sorted((CaseVote(p, w / total, tuple(voters[p])) for p, w in weight.items()),
                  key=lambda v: (-v.score, v.provision))


@dataclass(frozen=True)
class CaseVote:
    provision: str
    score: float
    cases: tuple[str, ...]  # the neighbours citing it, nearest first


class CaseMemory:
    def __init__(self, cases: Sequence[Case], retriever: BM25Retriever | DenseCases, max_chars: int = 1500,
                 digests: dict[str, str] | None = None, partial: Sequence[str] = (), partial_above: int = 0):
        """``partial``: the ids of cases whose labels cover only the provisions numbered above ``partial_above``."""
        self.cases = {c.id: c for c in cases}
        self.retriever = retriever
        self.max_chars = max_chars
        self.partial, self.partial_above = frozenset(partial), partial_above
        # a dense memory's cases with complete labels, in its order
        self._complete = np.array([d.id not in self.partial for d in retriever.documents]) \
            if self.partial and isinstance(retriever, DenseCases) else None
        # the SHA-256 of each case's facts (stripped): how a query is recognised as one of the cases
        self.digests = {c.id: sha256_text(c.facts.strip()) for c in cases} | dict(digests or {})

    def __len__(self) -> int:
        return len(self.cases)

    @classmethod
    def build(cls, cases: Sequence[Case], *, max_chars: int = 1500, lang: str = "auto", encoder: Any = None,
              tau: float = DENSE_TAU, partial: Sequence[str] = (), partial_above: int = 0,
              int8: bool = False) -> "CaseMemory":
        """BM25 over the cases' facts, or with ``encoder`` the cosine of its query vectors (``int8``: held and
        saved as int8 codes)."""
        cases = [Case(c.id, c.facts[:max_chars], c.gold) for c in cases if c.gold]
        if not cases:
            raise InputError("a case memory needs labelled cases (facts with their cited provisions); none given")
        docs = [Document(id=c.id, text=c.facts) for c in cases]
        if encoder is not None:
            return cls(cases, DenseCases.build(docs, encoder, tau, int8), max_chars, partial=partial,
                       partial_above=partial_above)
        return cls(cases, BM25Retriever.from_documents(docs, lang=lang), max_chars, partial=partial,
                   partial_above=partial_above)

    @property
    def dense(self) -> bool:
        return isinstance(self.retriever, DenseCases)

    def propose(self, facts: str, k: int = 10) -> list[CaseVote]:
        """Provisions cited by the ``k`` most similar labelled cases, best first. With partial-label cases, the
        provisions their lists cover are voted by the ``k`` most similar of all cases, the others (the general
        part) by the ``k`` most similar complete cases."""
        query = facts[: self.max_chars]
        own = sha256_text(query.strip())

        def kept(hits, n=k):  # never the query's own case; the n best with a positive score
            return [h for h in hits if not own.startswith(self.digests[h.id]) and h.score > 0][:n]

        if not self.partial:
            return _votes(kept(self.retriever.retrieve(query, k=k + 1)), self.cases, lambda p: True)
        if self.dense:  # one query vector, ranked among all cases and among the complete ones
            cos = self.retriever.cosines(query)
            nearest = kept(self.retriever.top(cos, k + 1))
            complete = kept(self.retriever.top(cos, k + 1, self._complete))
        else:
            hits = kept(self.retriever.retrieve(query, k=len(self.cases) + 1), len(self.cases))
            nearest, complete = hits[:k], [h for h in hits if h.id not in self.partial][:k]
        covered = lambda p: p.isdigit() and int(p) > self.partial_above  # noqa: E731
        votes = _votes(nearest, self.cases, covered) + _votes(complete, self.cases, lambda p: not covered(p))
        return sorted(votes, key=lambda v: (-v.score, v.provision))


    def save(self, path: str | Path, *, texts: bool = True) -> None:
        """Write the memory; ``texts=False`` (dense memories only) keeps each case's facts as their SHA-256."""
        if not texts and not self.dense:
            raise ValueError("only a dense case memory can be saved without its texts (BM25 searches the texts)")
        with atomic_dir(path) as tmp:
            with (tmp / CASES_FILE).open("w", encoding="utf-8") as fh:
                for c in self.cases.values():
                    # without texts, the first 16 hex digits of the digest (64 bits) tell the query's own case
                    facts = {"facts": c.facts} if texts else {"facts_sha256": self.digests[c.id][:DIGEST_HEX]}
                    flag = {"partial": True} if c.id in self.partial else {}
                    fh.write(json.dumps({"id": c.id, **facts, "cited": sorted(c.gold), **flag},
                                        ensure_ascii=False) + "\n")
            self.retriever.save(tmp / ("dense" if self.dense else "bm25"))
            (tmp / "meta.json").write_text(json.dumps({"max_chars": self.max_chars, "n_cases": len(self.cases),
                                                       "partial_above": self.partial_above}), encoding="utf-8")

    @staticmethod
    def encoder_of(path: str | Path) -> str | None:
        """The model id of the encoder a saved memory searches with (None: BM25)."""
        meta = Path(path) / "dense" / "meta.json"
        return json.loads(meta.read_text(encoding="utf-8"))["model_id"] if meta.exists() else None

    @classmethod
    def load(cls, path: str | Path, encoder: Any = None) -> "CaseMemory":
        p = Path(path)
        if not (p / CASES_FILE).exists():
            raise InputError(f"not a case memory directory ({CASES_FILE} missing)", path=str(p))
        cases, digests, partial = [], {}, []
        for line, rec in read_jsonl(p / CASES_FILE):
            try:
                facts = rec["facts"] if "facts" in rec or "facts_sha256" not in rec else ""
                cases.append(Case(str(rec["id"]), facts, frozenset(map(str, rec["cited"]))))
            except KeyError as exc:
                raise InputError(f"missing field {exc.args[0]!r}", path=str(p / CASES_FILE), line=line) from None
            if "facts" not in rec:
                digests[str(rec["id"])] = str(rec["facts_sha256"])
            if rec.get("partial"):
                partial.append(str(rec["id"]))
        meta = json.loads((p / "meta.json").read_text(encoding="utf-8"))
        docs = [Document(id=c.id, text=c.facts) for c in cases]
        if (p / "dense").is_dir():
            return cls(cases, DenseCases.load(p / "dense", docs, encoder), int(meta.get("max_chars", 1500)), digests,
                       partial, int(meta.get("partial_above", 0)))
        if digests:
            raise InputError("a BM25 case memory needs the cases' facts; this one holds only their digests",
                             path=str(p / CASES_FILE))
        return cls(cases, BM25Retriever.load(p / "bm25", docs), int(meta.get("max_chars", 1500)), partial=partial,
                   partial_above=int(meta.get("partial_above", 0)))
