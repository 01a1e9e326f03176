"""How the QA agents talk to the model: structured replies and plain text, deterministic (seed 0)."""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

from pydantic import BaseModel

from legalrag.llm.base import LLM, ChatRequest, Message

M = TypeVar("M", bound=BaseModel)

def ask_json(llm: LLM, messages: Sequence[Message], model: type[M], *, max_tokens: int = 256,
             retries: int = 1) -> M:
    """A reply parsed into ``model`` by the LLM layer's ``ask_structured`` (schema-constrained where the
    backend supports it, re-asked with the error ``retries`` times); StructuredOutputError carries raw replies."""
    from legalrag.llm.structured import ask_structured

    return ask_structured(llm, messages, model, retries, max_tokens=max_tokens, temperature=0.0, seed=0)

def ask_text(llm: LLM, messages: Sequence[Message], *, max_tokens: int = 512,
             on_text: Callable[[str], None] | None = None) -> str:
    """A plain-text reply; ``on_text`` receives it as it is generated (token by token where the backend streams)."""
    request = ChatRequest(messages=tuple(messages), max_tokens=max_tokens, temperature=0.0, seed=0)
    if on_text is None:
        return llm.chat(request).text
    from legalrag.llm.stream import stream_chat

    return stream_chat(llm, request, on_text).text
