"""How many calls a backend takes at once, and an order-keeping map that uses them.

An OpenAI-compatible endpoint serves several requests at a time (``OpenAICompatLLM.max_concurrency``, which its
client also enforces); the embedded model generates one reply at a time, so calls to it stay serial. Wrappers
(the call cache, the meter) pass the attribute through.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def call_slots(llm: Any) -> int:
    """Requests ``llm`` serves at once: its ``max_concurrency`` where it has one above 1, else 1."""
    n = getattr(llm, "max_concurrency", 1)
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 1 else 1


def ordered_map(fn: Callable[[T], R], items: Sequence[T], concurrency: int,
                wrap: Callable[[Iterable[R]], Iterable[R]] | None = None) -> list[R]:
    """``[fn(x) for x in items]`` with at most ``concurrency`` calls in flight; results keep the input order and
    the first exception is raised. ``wrap`` sees the results as they are collected (a progress bar)."""
    items = list(items)
    if concurrency <= 1 or len(items) <= 1:
        results: Iterable[R] = (fn(x) for x in items)
        return list(wrap(results) if wrap is not None else results)
    with ThreadPoolExecutor(max_workers=min(concurrency, len(items))) as pool:
        results = pool.map(fn, items)
        return list(wrap(results) if wrap is not None else results)
