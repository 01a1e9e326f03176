"""How the QA agents talk to the model: prompt templates, structured replies, and a call counter."""

from __future__ import annotations

import time
from typing import Any, Sequence, TypeVar

from pydantic import BaseModel

from legalrag.llm.base import LLM, ChatRequest, ChatResult, Message

M = TypeVar("M", bound=BaseModel)


class CountingLLM:
    """Wraps an LLM and counts calls, tokens and seconds, so every run can report its cost per question."""

    def __init__(self, llm: LLM):
        self.inner = llm
        self.model_id = getattr(llm, "model_id", "llm")
        self.supports_json_schema = bool(getattr(llm, "supports_json_schema", False))
        self.calls = 0
        self.tokens = 0
        self.seconds = 0.0

    def chat(self, request: ChatRequest) -> ChatResult:
        t0 = time.perf_counter()
        result = self.inner.chat(request)
        self.calls += 1
        self.tokens += result.prompt_tokens + result.completion_tokens
        self.seconds += time.perf_counter() - t0
        return result


def ask_json(llm: LLM, messages: Sequence[Message], model: type[M], *, max_tokens: int = 256,
             retries: int = 1) -> M:
    """A reply parsed into ``model`` by the LLM layer's ``ask_structured`` (schema-constrained where the
    backend supports it, re-asked with the error ``retries`` times); StructuredOutputError carries raw replies."""
    from legalrag.llm.structured import ask_structured

    return ask_structured(llm, messages, model, retries, max_tokens=max_tokens, temperature=0.0, seed=0)


def ask_text(llm: LLM, messages: Sequence[Message], *, max_tokens: int = 512) -> str:
    return llm.chat(ChatRequest(messages=tuple(messages), max_tokens=max_tokens, temperature=0.0, seed=0)).text
