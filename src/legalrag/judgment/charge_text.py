"""Charges found by what the law says about them, not by the labelled cases: a charge never seen in training
can still be proposed when the facts describe the conduct its article defines.

Each official charge (the shipped list) becomes a short document: its name, the conduct phrases derived from
the name (``signals.charge_keywords``) and the hand-written aliases, and the text of the Criminal Law
articles that define it. A charge's defining articles are found in the statute corpus without labels: the
specific-part article whose conduct clause (the text before ``…的，处``) covers most of the character bigrams of
the charge's conduct phrases, kept when it covers at least ``MIN_COVER`` (only the clause joins the document:
a wrong match then adds a few words, not a whole article). BM25 over these documents ranks the charges for a case's facts; the
best ``K`` become candidates with their rank and score as evidence and features.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from legalrag.judgment.extract import charge_names
from legalrag.judgment.signals import ALIASES, charge_keywords
from legalrag.types import Document

# Off by default (above 1): on the 200 training cases, adding the matched clauses put the gold charge first
# for 71 of 208 gold charges against 93 without them (frequent charges' clauses were often matched to the
# wrong article); ``ChargeText(statutes, min_cover=0.8)`` turns them on.
MIN_COVER = 1.01
K = 5
SPECIFIC_PART = 101
MAX_QUERY_CHARS = 1500


def conduct_clause(article_text: str) -> str:
    """The part of an article that describes the conduct: up to the first ``…的，处`` (where the penalty
    starts), else its first 60 characters."""
    m = re.search(r"的，(?:处|对)", article_text)
    return article_text[: m.start() + 1] if m else article_text[:60]


def _bigrams(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1)}


def defining_articles(statutes: Sequence[Document], min_cover: float = MIN_COVER) -> dict[str, tuple[str, str]]:
    """Charge -> (article id, conduct clause) of the specific-part article (above 101) whose conduct clause
    holds the largest share of the character bigrams of the charge's conduct phrases (shortest clause on
    ties), kept when that share is at least ``min_cover``."""
    specific = [(str(d.id), conduct_clause(d.text)) for d in statutes
                if str(d.id).isdigit() and int(d.id) > SPECIFIC_PART]
    out: dict[str, tuple[str, str]] = {}
    for name in charge_names():
        words = [w for w in charge_keywords().get(name, ()) if len(w) >= 2] or [name[:-1]]
        grams = set().union(*(_bigrams(w) for w in words))
        if not grams or not specific:
            continue
        cover, _, art, clause = max((len(grams & _bigrams(t)) / len(grams), -len(t), a, t) for a, t in specific)
        if cover >= min_cover:
            out[name] = (art, clause)
    return out


@dataclass(frozen=True)
class ChargeHit:
    name: str
    rank: int  # 0 = best
    score: float  # BM25 score divided by the best hit's
    article: str | None  # the article whose conduct clause was matched to the charge (evidence)


class ChargeText:
    """BM25 over one document per official charge (name, conduct phrases, aliases, defining articles)."""

    def __init__(self, statutes: Sequence[Document], min_cover: float = MIN_COVER):
        from legalrag.retrieval.bm25 import BM25Retriever
        from legalrag.retrieval.tokenize import tokenizer_for

        self.articles = defining_articles(statutes, min_cover)
        docs = []
        for name in charge_names():
            words = list(charge_keywords().get(name, ())) + list(ALIASES.get(name, ()))
            clause = [self.articles[name][1]] if name in self.articles else []
            body = [name[:-1]] * 3 + words + clause
            docs.append(Document(id=name, text="\n".join(body)))
        self.retriever = BM25Retriever.from_documents(docs, tokenizer_for("zh"))

    def search(self, facts: str, k: int = K) -> list[ChargeHit]:
        hits = [h for h in self.retriever.retrieve(facts[:MAX_QUERY_CHARS], k=k) if h.score > 0]
        if not hits:
            return []
        top = hits[0].score
        return [ChargeHit(h.id, r, h.score / top, self.articles.get(h.id, (None,))[0]) for r, h in enumerate(hits)]
