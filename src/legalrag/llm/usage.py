"""Counting what LLM calls cost, with the one accounting type (``legalrag.types.Usage``).

``UsageMeter`` adds chat results up (thread-safe); ``MeteredLLM`` wraps any backend and meters every call, so a
run can report its calls, tokens and seconds; ``CachedLLM`` meters its calls the same way.
"""

from __future__ import annotations

import threading
import time

from legalrag.llm.base import LLM, ChatRequest, ChatResult
from legalrag.types import Usage


class UsageMeter:
    """A running total of :class:`Usage`; ``usage`` is a frozen snapshot."""

    def __init__(self) -> None:
        self._usage = Usage()
        self._lock = threading.Lock()

    @property
    def usage(self) -> Usage:
        return self._usage

    def add(self, result: ChatResult, seconds: float | None = None) -> None:
        with self._lock:
            self._usage = self._usage + Usage.of(result, seconds)

    def reset(self) -> None:
        with self._lock:
            self._usage = Usage()


class MeteredLLM:
    """An LLM that meters every call of the backend it wraps (``.usage``)."""

    def __init__(self, llm: LLM):
        self.inner = llm
        self.model_id = getattr(llm, "model_id", "llm")
        self.meter = UsageMeter()

    def __getattr__(self, name: str):  # backend capabilities (supports_json_schema...) pass through
        if name == "inner":
            raise AttributeError(name)
        attr = getattr(self.inner, name)
        if name == "stream" and callable(attr):  # a streamed call is metered once it has been read to its end
            return self._metered_stream(attr)
        return attr

    def _metered_stream(self, inner_stream):
        from legalrag.llm.stream import ObservedStream

        def stream(request: ChatRequest):
            t0 = time.perf_counter()
            return ObservedStream(inner_stream(request), lambda done: self.meter.add(done, time.perf_counter() - t0))

        return stream

    @property
    def usage(self) -> Usage:
        return self.meter.usage

    def chat(self, request: ChatRequest) -> ChatResult:
        t0 = time.perf_counter()
        result = self.inner.chat(request)
        self.meter.add(result, time.perf_counter() - t0)
        return result
