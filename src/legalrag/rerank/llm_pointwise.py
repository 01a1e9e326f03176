"""Pointwise LLM rerankers: one short call per (query, article), scored from first-token log-probabilities.

``LLMPointwiseReranker`` asks for a 0-9 suitability digit and scores the pair by the expected digit under the
first token's top log-probabilities (so "7 with 60%, 8 with 40%" scores 7.4, which separates candidates much
better than the arg-max digit). ``LLMYesNoReranker`` asks "can this article answer the question?" and scores
P(yes) / (P(yes) + P(no)). Both can average the score over prompts in several languages (``prompts=("zh",
"en")``). Each call generates one token, so the cost is one prompt prefill per pair. Pairs are scored
``concurrency`` at a time: by default as many as the backend serves at once (an endpoint's ``max_concurrency``;
the embedded model, one), in the hits' order either way.

A pair the model cannot score (no digit / yes-no token among the alternatives and none in the reply) gets the
lowest score and is counted in ``unscored``; the run goes on.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from legalrag.errors import InputError
from legalrag.llm.base import LLM, ChatRequest, ChatResult
from legalrag.llm.parallel import call_slots, ordered_map
from legalrag.rerank.base import reranked
from legalrag.rerank.llm_common import expected_digit, first_token_distribution, yes_probability
from legalrag.prompts import article_block, render_prompt
from legalrag.types import Document, Hit, Usage

LANGUAGES = ("zh", "en")


@dataclass
class RerankStats:
    """Counters a reranker accumulates over its lifetime (read them after a run; reset with ``reset()``)."""

    usage: Usage = field(default_factory=Usage)
    unscored: int = 0
    repaired: int = 0
    errors: list[str] = field(default_factory=list)

    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, result: ChatResult) -> None:
        with self._lock:
            self.usage = self.usage + Usage.of(result)

    def count_unscored(self) -> None:
        with self._lock:
            self.unscored += 1

    def reset(self) -> None:
        self.usage = Usage()
        self.unscored = self.repaired = 0
        self.errors.clear()


class _FirstTokenReranker:
    """Shared machinery: render one prompt per language, one 1-token call each, average the scores."""

    name = "llm-first-token"
    _template = ""
    _floor = 0.0  # score of an unscorable pair

    def __init__(self, llm: LLM, prompts: Sequence[str] = ("zh",), max_chars: int = 400, top_logprobs: int = 10,
                 progress: bool = False, concurrency: int | None = None):
        prompts = tuple(prompts)
        if not prompts or any(p not in LANGUAGES for p in prompts):
            raise InputError(f"prompts must be a non-empty subset of {LANGUAGES}, got {prompts!r}")
        if max_chars < 20:
            raise InputError(f"max_chars must be at least 20, got {max_chars}")
        if not 1 <= top_logprobs <= 20:
            raise InputError(f"top_logprobs must be between 1 and 20, got {top_logprobs}")
        self.llm, self.prompts, self.max_chars, self.top_logprobs = llm, prompts, max_chars, top_logprobs
        self.progress = progress
        # pairs scored at once: an endpoint's request slots by default; the embedded model takes one at a time
        self.concurrency = call_slots(llm) if concurrency is None else max(1, concurrency)
        self.stats = RerankStats()
        self._prompt: Callable[[str, str], list[dict[str, str]]] | None = None

    def with_prompt(self, prompt: Callable[[str, str], list[dict[str, str]]]) -> "_FirstTokenReranker":
        """A copy that builds each pair's messages as ``prompt(query, article_text)`` (one call per pair, in
        place of the prompt per language) and adds to these same ``stats``. For callers that lay out their own
        calls, e.g. citation prediction's case-first prompts."""
        twin = copy.copy(self)
        twin._prompt = prompt
        return twin

    def _read(self, probs: Mapping[str, float], text: str) -> float | None:
        raise NotImplementedError

    def score(self, query: str, document: Document) -> float:
        """The pair's score, averaged over the configured prompt languages."""
        values = []
        article = article_block(document, self.max_chars)
        renders = ([self._prompt(query, article)] if self._prompt is not None else
                   [render_prompt(f"{self._template}_{lang}", query=query.strip(), article=article)
                    for lang in self.prompts])
        for messages in renders:
            result = self.llm.chat(ChatRequest(messages=tuple(messages), max_tokens=1, temperature=0.0,
                                               logprobs=True, top_logprobs=self.top_logprobs))
            self.stats.add(result)
            value = self._read(first_token_distribution(result), result.text)
            if value is None:
                self.stats.count_unscored()
                value = self._floor
            values.append(value)
        return sum(values) / len(values)

    def rerank(self, query: str, hits: Sequence[Hit], k: int | None = None) -> list[Hit]:
        hits = list(hits)
        wrap = None
        if self.progress and hits:
            from tqdm import tqdm

            def wrap(results):
                return tqdm(results, desc=self.name, unit="pair", leave=False, total=len(hits))
        scores = ordered_map(lambda h: self.score(query, h.document), hits, self.concurrency, wrap)
        return reranked(hits, scores, self.name, k)


class LLMPointwiseReranker(_FirstTokenReranker):
    """Score = expected 0-9 suitability digit from the first-token log-probabilities."""

    name = "llm-pointwise"
    _template = "mas_rerank_pointwise"
    _floor = 0.0

    def _read(self, probs: Mapping[str, float], text: str) -> float | None:
        return expected_digit(probs, text)


class LLMYesNoReranker(_FirstTokenReranker):
    """Score = P(yes) / (P(yes) + P(no)) from the first-token log-probabilities (是/否, yes/no)."""

    name = "llm-yesno"
    _template = "mas_rerank_yesno"
    _floor = 0.0

    def _read(self, probs: Mapping[str, float], text: str) -> float | None:
        return yes_probability(probs, text)


def pointwise_factory(kind: str) -> Callable[..., _FirstTokenReranker]:
    kinds = {"llm-pointwise": LLMPointwiseReranker, "llm-yesno": LLMYesNoReranker}
    if kind not in kinds:
        raise InputError(f"unknown pointwise reranker {kind!r}; choose one of {sorted(kinds)}")
    return kinds[kind]
