"""How the QA agents talk to the model: structured replies and plain text, deterministic (seed 0)."""

from __future__ import annotations

from typing import Sequence, TypeVar

from pydantic import BaseModel

from legalrag.llm.base import LLM, ChatRequest, Message

M = TypeVar("M", bound=BaseModel)

def ask_json(llm: LLM, messages: Sequence[Message], model: type[M], *, max_tokens: int = 256,
             retries: int = 1) -> M:
    """A reply parsed into ``model`` by the LLM layer's ``ask_structured`` (schema-constrained where the
    backend supports it, re-asked with the error ``retries`` times); StructuredOutputError carries raw replies."""
    from legalrag.llm.structured import ask_structured

    return ask_structured(llm, messages, model, retries, max_tokens=max_tokens, temperature=0.0, seed=0)

def ask_text(llm: LLM, messages: Sequence[Message], *, max_tokens: int = 512) -> str:
    return llm.chat(ChatRequest(messages=tuple(messages), max_tokens=max_tokens, temperature=0.0, seed=0)).text
