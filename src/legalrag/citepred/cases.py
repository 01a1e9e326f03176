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

Saved as a directory: ``cases.jsonl`` (id, facts as indexed, cited provisions) and ``bm25/`` or ``dense/``
(``vectors.npy`` + ``meta.json`` naming the encoder's model id; no pickle). A dense memory can be saved without
the case texts (``save(..., texts=False)``: each case keeps the SHA-256 of its facts instead, enough to skip
the query's own case), so a model that ships does not carry the labelled cases' facts.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from legalrag.citepred.data import Case
from legalrag.errors import InputError
from legalrag.io import atomic_dir, read_jsonl, sha256_text
from legalrag.retrieval.bm25 import BM25Retriever
from legalrag.types import Document, Hit

CASES_FILE = "cases.jsonl"
DENSE_TAU = 0.05


class DenseCases:
    """Labelled cases searched by the cosine of an encoder's query vectors; a hit's score is
    ``exp((cos - 1) / tau)`` so that score ratios are ``exp((cos - cos_best) / tau)``."""

    def __init__(self, documents: Sequence[Document], vectors: np.ndarray, encoder: Any, tau: float = DENSE_TAU):
        self.documents = list(documents)
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.encoder, self.tau = encoder, tau
        self.name = f"cases:{encoder.model_id}"

    @classmethod
    def build(cls, documents: Sequence[Document], encoder: Any, tau: float = DENSE_TAU) -> "DenseCases":
        return cls(documents, encoder.encode_queries([d.text for d in documents]), encoder, tau)

    def retrieve(self, query: str, k: int = 10, filter=None) -> list[Hit]:
        q = np.asarray(self.encoder.encode_queries([query]), dtype=np.float32)[0]
        cos = self.vectors @ q
        order = np.argsort(-cos, kind="stable")[:k]
        return [Hit(document=self.documents[i], score=math.exp((float(cos[i]) - 1.0) / self.tau), rank=r,
                    retriever=self.name) for r, i in enumerate(order, 1)]

    def save(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        np.save(path / "vectors.npy", self.vectors, allow_pickle=False)
        (path / "meta.json").write_text(json.dumps({"model_id": self.encoder.model_id, "tau": self.tau,
                                                    "ids": [d.id for d in self.documents]}), encoding="utf-8")

    @classmethod
    def load(cls, path: Path, documents: Sequence[Document], encoder: Any) -> "DenseCases":
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
        if encoder is None or encoder.model_id != meta["model_id"]:
            got = "no encoder" if encoder is None else f"encoder {encoder.model_id!r}"
            raise InputError(f"this case memory was built with encoder {meta['model_id']!r} and got {got}; use an "
                             "index whose dense component has that encoder", path=str(path))
        by_id = {d.id: d for d in documents}
        return cls([by_id[i] for i in meta["ids"]], np.load(path / "vectors.npy", allow_pickle=False), encoder,
                   float(meta.get("tau", DENSE_TAU)))


@dataclass(frozen=True)
class CaseVote:
    provision: str
    score: float
    cases: tuple[str, ...]  # the neighbours citing it, nearest first


class CaseMemory:
    def __init__(self, cases: Sequence[Case], retriever: BM25Retriever | DenseCases, max_chars: int = 1500,
                 digests: dict[str, str] | None = None):
        self.cases = {c.id: c for c in cases}
        self.retriever = retriever
        self.max_chars = max_chars
        # the SHA-256 of each case's facts (stripped): how a query is recognised as one of the cases
        self.digests = {c.id: sha256_text(c.facts.strip()) for c in cases} | dict(digests or {})

    def __len__(self) -> int:
        return len(self.cases)

    @classmethod
    def build(cls, cases: Sequence[Case], *, max_chars: int = 1500, lang: str = "auto", encoder: Any = None,
              tau: float = DENSE_TAU) -> "CaseMemory":
        """BM25 over the cases' facts, or with ``encoder`` the cosine of its query vectors."""
        cases = [Case(c.id, c.facts[:max_chars], c.gold) for c in cases if c.gold]
        if not cases:
            raise InputError("a case memory needs labelled cases (facts with their cited provisions); none given")
        docs = [Document(id=c.id, text=c.facts) for c in cases]
        if encoder is not None:
            return cls(cases, DenseCases.build(docs, encoder, tau), max_chars)
        return cls(cases, BM25Retriever.from_documents(docs, lang=lang), max_chars)

    @property
    def dense(self) -> bool:
        return isinstance(self.retriever, DenseCases)

    def propose(self, facts: str, k: int = 10) -> list[CaseVote]:
        """Provisions cited by the ``k`` most similar labelled cases, best first."""
        query = facts[: self.max_chars]
        own = sha256_text(query.strip())
        hits = [h for h in self.retriever.retrieve(query, k=k + 1) if self.digests[h.id] != own][:k]
        hits = [h for h in hits if h.score > 0]
        if not hits:
            return []
        top = hits[0].score
        weight: dict[str, float] = {}
        voters: dict[str, list[str]] = {}
        for h in hits:
            for p in self.cases[h.id].gold:
                weight[p] = weight.get(p, 0.0) + h.score / top
                voters.setdefault(p, []).append(h.id)
        total = sum(h.score / top for h in hits)
        votes = [CaseVote(p, w / total, tuple(voters[p])) for p, w in weight.items()]
        return sorted(votes, key=lambda v: (-v.score, v.provision))

    def save(self, path: str | Path, *, texts: bool = True) -> None:
        """Write the memory; ``texts=False`` (dense memories only) keeps each case's facts as their SHA-256."""
        if not texts and not self.dense:
            raise ValueError("only a dense case memory can be saved without its texts (BM25 searches the texts)")
        with atomic_dir(path) as tmp:
            with (tmp / CASES_FILE).open("w", encoding="utf-8") as fh:
                for c in self.cases.values():
                    facts = {"facts": c.facts} if texts else {"facts_sha256": self.digests[c.id]}
                    fh.write(json.dumps({"id": c.id, **facts, "cited": sorted(c.gold)}, ensure_ascii=False) + "\n")
            self.retriever.save(tmp / ("dense" if self.dense else "bm25"))
            (tmp / "meta.json").write_text(json.dumps({"max_chars": self.max_chars, "n_cases": len(self.cases)}),
                                           encoding="utf-8")

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
        cases, digests = [], {}
        for line, rec in read_jsonl(p / CASES_FILE):
            try:
                facts = rec["facts"] if "facts" in rec or "facts_sha256" not in rec else ""
                cases.append(Case(str(rec["id"]), facts, frozenset(map(str, rec["cited"]))))
            except KeyError as exc:
                raise InputError(f"missing field {exc.args[0]!r}", path=str(p / CASES_FILE), line=line) from None
            if "facts" not in rec:
                digests[str(rec["id"])] = str(rec["facts_sha256"])
        meta = json.loads((p / "meta.json").read_text(encoding="utf-8"))
        docs = [Document(id=c.id, text=c.facts) for c in cases]
        if (p / "dense").is_dir():
            return cls(cases, DenseCases.load(p / "dense", docs, encoder), int(meta.get("max_chars", 1500)), digests)
        if digests:
            raise InputError("a BM25 case memory needs the cases' facts; this one holds only their digests",
                             path=str(p / CASES_FILE))
        return cls(cases, BM25Retriever.load(p / "bm25", docs), int(meta.get("max_chars", 1500)))
