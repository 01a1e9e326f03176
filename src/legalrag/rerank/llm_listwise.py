"""Listwise LLM reranker: the model returns a JSON list of selected candidate numbers, best first.

Long candidate lists are handled with a sliding window that moves from the bottom of the list to the top
(window ``window``, step ``step``), so a strong candidate found low in the list can climb to the top in one
pass. Replies are repaired rather than trusted: numbers out of range or repeated are dropped, candidates the
model left out keep their prior order after the selected ones. By default the model must answer with the list
only (and the list is constrained by a JSON schema where the backend supports it); ``allow_reasoning=True``
lets it think first, and the last JSON list in its reply is used.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Sequence

from legalrag.errors import InputError
from legalrag.llm.base import LLM, ChatRequest
from legalrag.rerank.base import reranked
from legalrag.prompts import article_block, render_prompt
from legalrag.rerank.llm_pointwise import LANGUAGES, RerankStats
from legalrag.types import Hit

_ARRAY = re.compile(r"\[[^\[\]]*\]")
_INT = re.compile(r"-?\d+")

_REASONING_RULE = {
    ("zh", False): "只输出JSON数组，不要解释，不要输出其他内容。",
    ("zh", True): "可以先简要分析，最后一行给出JSON数组。",
    ("en", False): "Output only the JSON array: no explanation, nothing else.",
    ("en", True): "You may reason briefly first; give the JSON array on the last line.",
}


@dataclass(frozen=True)
class IndexRepair:
    """What was wrong with a reply's list of candidate numbers (all counts 0 for a clean reply)."""

    order: tuple[int, ...]  # 0-based positions into the window, a permutation of range(n)
    selected: int  # how many the model selected validly
    out_of_range: int = 0
    duplicates: int = 0
    not_integers: int = 0
    missing: int = 0
    no_list: bool = False

    @property
    def clean(self) -> bool:
        return not (self.out_of_range or self.duplicates or self.not_integers or self.no_list)


def parse_index_list(text: str) -> tuple[list[Any], bool]:
    """The items of the last JSON-like list in ``text`` (``[3, 1, "2"]``) and whether a list was found.

    With no list at all, every integer in the text in order of appearance is returned, so "3 > 1 > 2" still
    means something; the second value is then False.
    """
    arrays = _ARRAY.findall(text)
    for raw in reversed(arrays):
        try:
            items = json.loads(raw)
        except json.JSONDecodeError:
            items = [m for m in re.split(r"[,\s]+", raw.strip("[] \n")) if m]
        if isinstance(items, list) and items:
            return items, True
    try:  # {"ranking": [..]} from a backend that insists on an object
        obj = json.loads(text)
        if isinstance(obj, dict):
            for value in obj.values():
                if isinstance(value, list):
                    return value, True
    except (json.JSONDecodeError, TypeError):
        pass
    return [int(m) for m in _INT.findall(text)], bool(arrays)


def _as_int(item: Any) -> int | None:
    if isinstance(item, bool):
        return None
    if isinstance(item, int):
        return item
    if isinstance(item, float) and item.is_integer():
        return int(item)
    if isinstance(item, str):
        m = re.fullmatch(r"\s*\[?\s*(-?\d+)\s*\]?\s*", item)
        if m:
            return int(m.group(1))
    return None


def repair_indices(items: Sequence[Any], n: int, *, one_based: bool = True, found_list: bool = True) -> IndexRepair:
    """Turn a model's list of candidate numbers into a full permutation of ``range(n)``.

    Valid numbers keep the model's order (first occurrence wins); numbers out of range, repeats and
    non-integers are dropped and counted; candidates never named follow in their prior order.
    """
    seen: list[int] = []
    out_of_range = duplicates = not_integers = 0
    offset = 1 if one_based else 0
    for item in items:
        value = _as_int(item)
        if value is None:
            not_integers += 1
            continue
        pos = value - offset
        if not 0 <= pos < n:
            out_of_range += 1
        elif pos in seen:
            duplicates += 1
        else:
            seen.append(pos)
    chosen = set(seen)
    rest = [i for i in range(n) if i not in chosen]
    return IndexRepair(order=tuple(seen + rest), selected=len(seen), out_of_range=out_of_range,
                       duplicates=duplicates, not_integers=not_integers, missing=len(rest),
                       no_list=not found_list)


def window_starts(n: int, window: int, step: int) -> list[tuple[int, int]]:
    """The (start, end) slices of a back-to-front sliding window over ``n`` candidates."""
    if n <= window:
        return [(0, n)] if n else []
    spans = []
    end = n
    while True:
        start = max(0, end - window)
        if start == 0:  # the last window is a full one at the top, never a sliver
            spans.append((0, min(window, n)))
            return spans
        spans.append((start, end))
        end -= step


class LLMListwiseReranker:
    """Rerank by asking the model for a JSON list of the relevant candidates' numbers, best first."""

    name = "llm-listwise"

    def __init__(self, llm: LLM, *, window: int = 20, step: int = 10, max_chars: int = 200, lang: str = "zh",
                 allow_reasoning: bool = False, constrain: bool = True, temperature: float = 0.0,
                 max_tokens: int | None = None):
        if window < 2:
            raise InputError(f"window must be at least 2, got {window}")
        if not 1 <= step <= window:
            raise InputError(f"step must be between 1 and the window size ({window}), got {step}")
        if lang not in LANGUAGES:
            raise InputError(f"lang must be one of {LANGUAGES}, got {lang!r}")
        self.llm, self.window, self.step, self.max_chars, self.lang = llm, window, step, max_chars, lang
        self.allow_reasoning, self.constrain, self.temperature = allow_reasoning, constrain, temperature
        self.max_tokens = max_tokens
        self.stats = RerankStats()
        self.repairs: list[IndexRepair] = []

    def _request(self, query: str, window_hits: Sequence[Hit]) -> ChatRequest:
        n = len(window_hits)
        candidates = "\n".join(f"[{i}] {article_block(h.document, self.max_chars)}"
                               for i, h in enumerate(window_hits, 1))
        messages = render_prompt(f"mas_rerank_listwise_{self.lang}", query=query.strip(), candidates=candidates,
                                   n=n, reasoning_rule=_REASONING_RULE[(self.lang, self.allow_reasoning)])
        schema = None
        if self.constrain and not self.allow_reasoning:
            schema = {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": n}}
        max_tokens = self.max_tokens or (4 * n + 8 + (400 if self.allow_reasoning else 0))
        return ChatRequest(messages=tuple(messages), max_tokens=max_tokens, temperature=self.temperature,
                           json_schema=schema)

    def order_window(self, query: str, window_hits: Sequence[Hit]) -> IndexRepair:
        """One call: the model's order for these candidates, repaired into a permutation."""
        result = self.llm.chat(self._request(query, window_hits))
        self.stats.add(result)
        items, found = parse_index_list(result.text)
        repair = repair_indices(items, len(window_hits), found_list=found)
        if not repair.clean or repair.selected == 0:
            self.stats.repaired += 1
            self.stats.errors.append(f"listwise reply repaired: {result.text[:200]!r}")
        self.repairs.append(repair)
        return repair

    def rerank(self, query: str, hits: Sequence[Hit], k: int | None = None) -> list[Hit]:
        current = list(hits)
        for start, end in window_starts(len(current), self.window, self.step):
            repair = self.order_window(query, current[start:end])
            current[start:end] = [current[start + i] for i in repair.order]
        n = len(current)
        return reranked(current, [float(n - i) for i in range(n)], self.name, k)
