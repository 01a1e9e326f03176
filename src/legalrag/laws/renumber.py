"""Old article numbers to new ones, by aligning the texts of two versions of a law.

A revision may insert, delete, merge and move articles, so that 公司法第二十六条 of 2018 (the registered capital
of a limited company) is 第四十七条 in 2023, while the 2023 law's own 第二十六条 is about revoking resolutions.
The map is a monotone alignment (dynamic programming over the two article sequences, maximising the summed
similarity above a threshold), then a second pass that lets an article still unmatched pair with a moved one
when their texts are close. Similarity is the Dice coefficient of character bigrams of the normalised texts.
Each pair says whether the text is unchanged; an old article with no counterpart maps to None (deleted or
merged beyond recognition). Precision on a hand-checked sample is in docs/lab/laws.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from legalrag.laws.reader import Article
from legalrag.laws.versions import Version, normalise

THRESHOLD = 0.3  # a monotone pair must be at least this similar
MOVED = 0.5  # an article matched out of order must be at least this similar


@dataclass(frozen=True)
class Mapping:
    """One old article's counterpart in the newer version (``new`` None: none found)."""

    old: str
    new: str | None
    similarity: float
    unchanged: bool = False
    moved: bool = False  # matched out of order

    @property
    def renumbered(self) -> bool:
        return self.new is not None and self.new != self.old


def _bigrams(text: str) -> frozenset[str]:
    t = normalise(text)
    return frozenset(t[i:i + 2] for i in range(len(t) - 1)) or frozenset([t])


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


def align(old: Sequence[Article], new: Sequence[Article]) -> list[Mapping]:
    """The counterpart in ``new`` of every article of ``old``, in ``old``'s order."""
    a = [_bigrams(x.text) for x in old]
    b = [_bigrams(x.text) for x in new]
    n, m = len(a), len(b)
    sim = [[similarity(a[i], b[j]) for j in range(m)] for i in range(n)]
    # best[i][j]: the best score aligning old[:i] with new[:j]
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    move = [[0] * (m + 1) for _ in range(n + 1)]  # 0 diagonal (pair), 1 skip old, 2 skip new
    for i in range(1, n + 1):
        row, prev = best[i], best[i - 1]
        for j in range(1, m + 1):
            s = sim[i - 1][j - 1]
            diag = prev[j - 1] + (s - THRESHOLD) if s >= THRESHOLD else float("-inf")
            up, left = prev[j], row[j - 1]
            if diag >= up and diag >= left:
                row[j], move[i][j] = diag, 0
            elif up >= left:
                row[j], move[i][j] = up, 1
            else:
                row[j], move[i][j] = left, 2
    pairs: dict[int, int] = {}
    i, j = n, m
    while i > 0 and j > 0:
        if move[i][j] == 0:
            pairs[i - 1] = j - 1
            i, j = i - 1, j - 1
        elif move[i][j] == 1:
            i -= 1
        else:
            j -= 1
    taken = set(pairs.values())
    moved: set[int] = set()
    for i in sorted(set(range(n)) - set(pairs), key=lambda k: -max(sim[k], default=0.0)):
        candidates = [(sim[i][j], j) for j in range(m) if j not in taken]
        if candidates:
            s, j = max(candidates)
            if s >= MOVED:
                pairs[i], _ = j, taken.add(j)
                moved.add(i)
    out = []
    for i, art in enumerate(old):
        if i in pairs:
            j = pairs[i]
            out.append(Mapping(art.number, new[j].number, round(sim[i][j], 3),
                               normalise(art.text) == normalise(new[j].text), i in moved))
        else:
            out.append(Mapping(art.number, None, round(max(sim[i], default=0.0), 3)))
    return out


def renumbering(old: Version, new: Version) -> dict[str, Mapping]:
    """``align`` of two versions, by old article number."""
    return {mp.old: mp for mp in align(old.articles, new.articles)}


__all__ = ["MOVED", "THRESHOLD", "Mapping", "align", "renumbering", "similarity"]
