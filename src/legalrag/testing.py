"""Test doubles that ship with the package, for legalrag's tests and for users' own tests.

They stand in for *external* collaborators (a chat model, an embedding model), never for legalrag's own
components: a test of the planner hands the real planner a :class:`ScriptedLLM`; a test of dense retrieval
hands the real FAISS retriever a :class:`FakeEncoder`.

```python
from legalrag.testing import ScriptedLLM
llm = ScriptedLLM(['{"action": "exit", "reason": "done"}'])
```
"""

from __future__ import annotations

import hashlib
import re
from typing import Callable, Sequence

import numpy as np

from legalrag.llm.base import ChatRequest, ChatResult, TokenLogprob

Reply = str | ChatResult


class ScriptedLLM:
    """An ``LLM`` that replays replies and records every request.

    ``replies`` is a list (taken in order; the last one repeats once the others are used, or all of them
    cycle with ``cycle=True``) or a function ``request -> str | ChatResult`` for replies that depend on the
    prompt. Each reply is counted as ``prompt_tokens`` / ``completion_tokens`` tokens so usage accounting can
    be tested. ``first_token_logprobs`` (token -> logprob) is returned as the first generated position's
    top-k when a request asks for logprobs.
    """

    backend = "scripted"

    def __init__(self, replies: Sequence[Reply] | Callable[[ChatRequest], Reply], *, cycle: bool = False,
                 model_id: str = "scripted", supports_json_schema: bool = False,
                 first_token_logprobs: dict[str, float] | None = None, prompt_tokens: int = 10,
                 completion_tokens: int = 5):
        self._fn = replies if callable(replies) else None
        self.replies: list[Reply] = [] if callable(replies) else list(replies)
        if self._fn is None and not self.replies:
            raise ValueError("ScriptedLLM needs at least one reply")
        self.cycle = cycle
        self.model_id = model_id
        self.supports_json_schema = supports_json_schema
        self.supports_logprobs = first_token_logprobs is not None
        self.first_token_logprobs = dict(first_token_logprobs or {})
        self.prompt_tokens, self.completion_tokens = prompt_tokens, completion_tokens
        self.requests: list[ChatRequest] = []

    @property
    def calls(self) -> int:
        return len(self.requests)

    def _next(self, request: ChatRequest) -> Reply:
        if self._fn is not None:
            return self._fn(request)
        if self.cycle:
            return self.replies[(len(self.requests) - 1) % len(self.replies)]
        return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def chat(self, request: ChatRequest) -> ChatResult:
        self.requests.append(request)
        reply = self._next(request)
        if isinstance(reply, ChatResult):
            return reply
        logprobs: tuple[TokenLogprob, ...] = ()
        if request.logprobs and self.first_token_logprobs:
            best = max(self.first_token_logprobs, key=self.first_token_logprobs.__getitem__)
            logprobs = (TokenLogprob(best, self.first_token_logprobs[best], dict(self.first_token_logprobs)),)
        return ChatResult(text=str(reply), logprobs=logprobs, prompt_tokens=self.prompt_tokens,
                          completion_tokens=self.completion_tokens, model=self.model_id, finish_reason="stop")

    def last_prompt(self) -> str:
        """The text of every message of the last request, joined (for asserting what the model was shown)."""
        return "\n".join(m["content"] for m in self.requests[-1].messages) if self.requests else ""


_TOKEN = re.compile(r"[\u3400-\u9fff]|[A-Za-z0-9]+")


class FakeEncoder:
    """A deterministic ``Encoder``: hashed bag of words and CJK characters, L2-normalised.

    Texts that share words get similar vectors, so retrieval over a tiny corpus behaves sensibly, with no
    model weights. ``calls`` counts the texts encoded (to check that a cache was used).
    """

    def __init__(self, dimension: int = 64, model_id: str = "fake-hash-encoder"):
        self.dimension = dimension
        self.model_id = model_id
        self.calls = 0

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok in _TOKEN.findall(text.lower()):
                h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
                out[i, h % self.dimension] += 1.0 if (h >> 32) & 1 else -1.0
        self.calls += len(texts)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(out / norms, dtype=np.float32)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._vectors(texts)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._vectors(texts)
