"""The LLM protocol. Every agent, reranker and generator talks to a model through ``LLM.chat``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from legalrag.errors import InputError

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
    finish_reason: str = ""  # "stop", "length"... as the backend reported it
    timings: Mapping[str, float] = field(default_factory=dict)  # backend detail, e.g. prompt_ms, predicted_ms

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def first_token_top(self) -> Mapping[str, float]:
        """Top-k alternatives (token -> logprob) at the first generated position; empty without logprobs."""
        return self.logprobs[0].top if self.logprobs else {}


class PromptTooLongError(InputError):
    """The prompt plus the requested reply length do not fit in the model's context window."""

    def __init__(self, prompt_tokens: int, max_tokens: int, n_ctx: int, model: str = ""):
        super().__init__(
            f"prompt too long for {model or 'the model'}: {prompt_tokens} prompt tokens + max_tokens {max_tokens} "
            f"exceed the context window of {n_ctx} tokens. Shorten the prompt (e.g. fewer or shorter retrieved "
            f"passages), lower max_tokens, or load the model with a larger n_ctx.")
        self.prompt_tokens, self.max_tokens, self.n_ctx = prompt_tokens, max_tokens, n_ctx


@runtime_checkable
class LLM(Protocol):
    """A chat model. ``model_id`` is stable and used as part of the call-cache key.

    Backends may also offer (checked with ``getattr``): ``backend`` (a short name such as "embedded" or
    "openai", part of the cache key), ``supports_json_schema`` and ``supports_logprobs`` (bool).
    """

    model_id: str

    def chat(self, request: ChatRequest) -> ChatResult: ...


def chat_text(llm: LLM, messages: Sequence[Message], **options: Any) -> str:
    """Convenience: one chat call, the reply text only."""
    return llm.chat(ChatRequest(messages=tuple(messages), **options)).text
