"""A real decisive-article selector with a tiny model, and a support model of fixed probability, for tests of the
answer path: every candidate gets the probability ``sigmoid(intercept)``, so a test chooses whether the selection
decides the question (a positive intercept) or not (a negative one)."""

from __future__ import annotations


class FixedSupport:
    """A support model whose every (claim, article) pair has probability ``p`` (threshold 0.5)."""

    threshold = 0.5

    def __init__(self, p: float):
        self.p = p

    def scores(self, pairs):
        return [self.p] * len(pairs)


def selector(intercept: float, threshold: float = 0.5):
    from legalrag.answer.select import FEATURES, ArticleSelector, LinearScorer, Platt, Priors, SelectorModel

    n = len(FEATURES)
    model = SelectorModel(LinearScorer((0.0,) * n, intercept, (0.0,) * n, (1.0,) * n), Platt(1.0, 0.0), threshold,
                          Priors())
    return ArticleSelector(model, support=FixedSupport(0.5))
