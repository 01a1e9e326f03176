"""Is a question inside what a citation model was trained on? The law-area check.

A citation model learns from the provisions its training decisions cite (criminal judgments cite the Criminal
Law), so its *scope* is the set of laws those provisions belong to, widened to their legal area where the area
is known from the title (criminal facts rank the Criminal Procedure Law and the courts' interpretations on
criminal cases as high as the Criminal Law itself: ``AREAS``). For new facts, the statute retriever ranks the
whole corpus; the share of that ranking (reciprocal-rank weighted, top ``depth``) that falls on laws in the
model's scope is the *scope score*. A civil question ("房东不退押金") ranks tenancy and contract articles first,
scores near 0 and is reported as out of scope, with the score and the laws that decided it, instead of being
answered with confident Criminal Law articles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from legalrag.retrieval.base import Retriever
from legalrag.types import Document

DEFAULT_THRESHOLD = 0.3  # chosen on bench/citepredict/web_scope.py (STARD index, JuDGE facts and STARD questions)
DEFAULT_DEPTH = 10
# A legal area by the words of a law's title (Chinese titles name their area: 刑法, 刑事诉讼法, 关于办理…刑事案件…的解释).
AREAS = {"criminal": ("刑", "犯罪"), "labour": ("劳动", "工伤")}


def law_area(title: str) -> str | None:
    return next((area for area, words in AREAS.items() if any(w in title for w in words)), None)


@dataclass(frozen=True)
class ScopeCheck:
    in_scope: bool
    score: float  # share of the retrieval ranking on laws the model was trained on, 0..1
    threshold: float
    top_laws: tuple[tuple[str, float], ...]  # the laws the ranking fell on, with their share, largest first
    trained_laws: tuple[str, ...]  # the model's scope, most cited first
    areas: tuple[str, ...] = ()  # the legal areas of those laws (laws of these areas count as in scope)

    def to_dict(self) -> dict[str, Any]:
        return {"in_scope": self.in_scope, "score": round(self.score, 3), "threshold": self.threshold,
                "check": "law_area", "top_laws": [{"law": law, "share": round(s, 3)} for law, s in self.top_laws],
                "trained_laws": list(self.trained_laws[:5]), "areas": list(self.areas)}


def trained_laws(citation_counts: Mapping[str, int], documents: Mapping[str, Document]) -> tuple[str, ...]:
    """The laws of the provisions cited in training, most cited first (``counts``: provision id -> decisions)."""
    totals: dict[str, int] = {}
    for pid, n in citation_counts.items():
        doc = documents.get(pid)
        law = doc.metadata.get("law") if doc is not None else None
        if law and n > 0:
            totals[law] = totals.get(law, 0) + n
    return tuple(sorted(totals, key=lambda law: -totals[law]))


def check_scope(facts: str, retriever: Retriever, laws: Iterable[str], *, threshold: float = DEFAULT_THRESHOLD,
                depth: int = DEFAULT_DEPTH, max_chars: int = 600) -> ScopeCheck:
    """The law-area check of ``facts`` against a model trained on ``laws``."""
    scope = tuple(laws)
    wanted = set(scope)
    areas = tuple(sorted({a for a in map(law_area, scope) if a}))
    hits = retriever.retrieve(facts[:max_chars], k=depth) if facts.strip() else []
    shares: dict[str, float] = {}
    total = 0.0
    for rank, hit in enumerate(hits, 1):
        if hit.score <= 0:  # a lexical retriever's zero score matched nothing
            continue
        weight = 1.0 / rank
        law = str(hit.document.metadata.get("law") or "")
        shares[law] = shares.get(law, 0.0) + weight
        total += weight
    if total <= 0:  # nothing in the corpus matched: nothing says the facts are in scope
        return ScopeCheck(False, 0.0, threshold, (), scope, areas)
    score = sum(w for law, w in shares.items() if law in wanted or law_area(law) in areas) / total
    top = tuple(sorted(((law, w / total) for law, w in shares.items() if law), key=lambda x: -x[1])[:3])
    return ScopeCheck(score >= threshold, score, threshold, top, scope, areas)
