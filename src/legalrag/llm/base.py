"""The LLM protocol. Every agent, reranker and generator talks to a model through ``LLM.chat``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

Message = Mapping[str, str]  # {"role": "system"|"user"|"assistant", "content": "..."}


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[Message, ...]
    max_tokens: int = 512
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    seed: int | None = None
    json_schema: Mapping[str, Any] | None = None  # constrain the reply to this JSON schema where supported
    logprobs: bool = False
    top_logprobs: int = 0  # top-k alternatives per generated token


@dataclass(frozen=True)
class TokenLogprob:
    token: str
    logprob: float
    top: Mapping[str, float] = field(default_factory=dict)  # alternative token -> logprob


@dataclass(frozen=True)
class ChatResult:
    text: str
    logprobs: tuple[TokenLogprob, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    model: str = ""
    cached: bool = False


@runtime_checkable
class LLM(Protocol):
    """A chat model. ``model_id`` is stable and used as part of the call-cache key."""

    model_id: str

    def chat(self, request: ChatRequest) -> ChatResult: ...


def chat_text(llm: LLM, messages: Sequence[Message], **options: Any) -> str:
    """Convenience: one chat call, the reply text only."""
    return llm.chat(ChatRequest(messages=tuple(messages), **options)).text
