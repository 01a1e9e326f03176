"""Similar-case voting: labelled cases (facts + the provisions their decision cited) searched with BM25.

A new case's nearest labelled cases vote for the provisions they cite, each vote weighted by the neighbour's
BM25 score relative to the best neighbour; a provision's score is its share of the total weight, in [0, 1].
This is the case retriever of retrieval-augmented judgment drafting, used as a citation signal: it recovers
the fact-dependent provisions (sentencing, joint crime, confession) that statute retrieval misses, on any
corpus with labelled cases. A case never votes for itself: neighbours whose facts equal the query's are
skipped, so a memory built from the development cases can be calibrated on them (leave-one-out).

Saved as a directory: ``cases.jsonl`` (id, facts as indexed, cited provisions) and ``bm25/`` (no pickle).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from legalrag.citepred.data import Case
from legalrag.errors import InputError
from legalrag.io import atomic_dir, read_jsonl
from legalrag.retrieval.bm25 import BM25Retriever
from legalrag.types import Document

CASES_FILE = "cases.jsonl"


@dataclass(frozen=True)
class CaseVote:
    provision: str
    score: float
    cases: tuple[str, ...]  # the neighbours citing it, nearest first


class CaseMemory:
    def __init__(self, cases: Sequence[Case], retriever: BM25Retriever, max_chars: int = 1500):
        self.cases = {c.id: c for c in cases}
        self.retriever = retriever
        self.max_chars = max_chars

    def __len__(self) -> int:
        return len(self.cases)

    @classmethod
    def build(cls, cases: Sequence[Case], *, max_chars: int = 1500, lang: str = "auto") -> "CaseMemory":
        cases = [Case(c.id, c.facts[:max_chars], c.gold) for c in cases if c.gold]
        if not cases:
            raise InputError("a case memory needs labelled cases (facts with their cited provisions); none given")
        docs = [Document(id=c.id, text=c.facts) for c in cases]
        return cls(cases, BM25Retriever.from_documents(docs, lang=lang), max_chars)

    def propose(self, facts: str, k: int = 10) -> list[CaseVote]:
        """Provisions cited by the ``k`` most similar labelled cases, best first."""
        query = facts[: self.max_chars]
        hits = [h for h in self.retriever.retrieve(query, k=k + 1) if self.cases[h.id].facts != query.strip()][:k]
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

    def save(self, path: str | Path) -> None:
        with atomic_dir(path) as tmp:
            with (tmp / CASES_FILE).open("w", encoding="utf-8") as fh:
                for c in self.cases.values():
                    fh.write(json.dumps({"id": c.id, "facts": c.facts, "cited": sorted(c.gold)}, ensure_ascii=False)
                             + "\n")
            self.retriever.save(tmp / "bm25")
            (tmp / "meta.json").write_text(json.dumps({"max_chars": self.max_chars, "n_cases": len(self.cases)}),
                                           encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "CaseMemory":
        p = Path(path)
        if not (p / CASES_FILE).exists():
            raise InputError(f"not a case memory directory ({CASES_FILE} missing)", path=str(p))
        cases = []
        for line, rec in read_jsonl(p / CASES_FILE):
            try:
                cases.append(Case(str(rec["id"]), rec["facts"], frozenset(map(str, rec["cited"]))))
            except KeyError as exc:
                raise InputError(f"missing field {exc.args[0]!r}", path=str(p / CASES_FILE), line=line) from None
        meta = json.loads((p / "meta.json").read_text(encoding="utf-8"))
        docs = [Document(id=c.id, text=c.facts) for c in cases]
        return cls(cases, BM25Retriever.load(p / "bm25", docs), int(meta.get("max_chars", 1500)))
