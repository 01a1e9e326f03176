"""The lexical features of a (claim, article) pair, judged against the article's best-matching clause.

A claim usually rests on one clause of an article, not on the whole article. The article is split by
:func:`legalrag.clauses.clauses` and the claim is matched against each clause (:func:`match`); the features are:

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

The idf is :class:`BigramIdf` over the statute corpus (``data/citations/bigram_df.json.gz``). The model that
weighs these features (with the encoder's ``cosine``) is :mod:`legalrag.citecheck.support`.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from legalrag.clauses import Clause, clauses
from legalrag.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data" / "citations"
DF_PATH = DATA / "bigram_df.json.gz"
LEXICAL_FEATURES = ("clause_idf", "clause_cover", "clause_own", "pair_idf", "clause_run", "article_idf",
                    "article_own", "title_idf", "claim_size", "own_idf", "own_cover", "own_run", "run_share")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+|[A-Za-z]+|[0-9]+")
K1, B = 1.2, 0.75
MAX_ARTICLE_CHARS = 3000  # longer articles are cut for the lexical features
MAX_CLAIM_CHARS = 1000  # a longer claim is judged on its first 1,000 characters (the judgement says so)
MIN_CLAIM_BIGRAMS = 2  # fewer than this: too short to check
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


__all__ = ["B", "BigramIdf", "DF_PATH", "K1", "LEXICAL_FEATURES", "MAX_ARTICLE_CHARS", "MAX_CLAIM_CHARS",
           "MIN_CLAIM_BIGRAMS", "Match", "RUN_CHARS", "bigrams", "lexical_features", "longest_run", "match"]
