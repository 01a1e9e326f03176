"""Scores read off a reply's first-token log-probabilities, shared by the LLM rerankers and citation
prediction's rerank stage (prompts are rendered by ``legalrag.prompts.render``).

- ``first_token_distribution(result)``: the first generated token's top log-probabilities as probabilities.
- ``expected_digit`` / ``yes_probability``: scores read off that distribution.
"""

from __future__ import annotations

import math
import re
from typing import Mapping

from legalrag.llm.base import ChatResult


def first_token_distribution(result: ChatResult) -> dict[str, float]:
    """Probabilities of the first generated token's alternatives (stripped token text -> summed probability).

    Includes the chosen token itself, so a backend that reports it outside ``top`` is handled. Tokens that
    strip to the same text (" 7" and "7") are merged. Empty when the backend returned no log-probabilities.
    """
    if not result.logprobs:
        return {}
    first = result.logprobs[0]
    raw: dict[str, float] = dict(first.top)
    raw.setdefault(first.token, first.logprob)
    probs: dict[str, float] = {}
    for token, lp in raw.items():
        if lp is None or not math.isfinite(lp):
            continue
        key = token.strip()
        probs[key] = probs.get(key, 0.0) + math.exp(lp)
    return probs


def expected_digit(probs: Mapping[str, float], fallback_text: str = "") -> float | None:
    """Expected value of a 0-9 digit under the first-token distribution, renormalised over digit tokens.

    With no digit among the alternatives, the first digit in ``fallback_text`` is used; ``None`` when there
    is none either (the caller decides what an unscorable pair is worth).
    """
    mass = {int(t): p for t, p in probs.items() if len(t) == 1 and t.isdigit()}
    total = sum(mass.values())
    if total > 0:
        return sum(d * p for d, p in mass.items()) / total
    m = re.search(r"\d", fallback_text)
    return float(m.group(0)) if m else None


YES_TOKENS = frozenset({"是", "yes", "对", "能", "可以", "适用", "相关"})
NO_TOKENS = frozenset({"否", "no", "不", "不能", "不是", "无关", "不相关"})


def yes_probability(probs: Mapping[str, float], fallback_text: str = "") -> float | None:
    """P(yes) / (P(yes) + P(no)) over the first-token alternatives (是/否, yes/no, any case).

    With neither among the alternatives, the reply text decides (1.0 / 0.0); ``None`` when it says neither.
    """
    yes = sum(p for t, p in probs.items() if t.lower() in YES_TOKENS)
    no = sum(p for t, p in probs.items() if t.lower() in NO_TOKENS)
    if yes + no > 0:
        return yes / (yes + no)
    head = fallback_text.strip().lower()
    if head.startswith(("是", "yes")):
        return 1.0
    if head.startswith(("否", "no", "不")):
        return 0.0
    return None
