"""How the QA agents talk to the model: prompt templates, structured replies, and a call counter."""

from __future__ import annotations

import json
import re
import time
from typing import Any, Sequence, TypeVar

from pydantic import BaseModel, ValidationError

from legalrag.errors import StructuredOutputError
from legalrag.llm.base import LLM, ChatRequest, ChatResult, Message

M = TypeVar("M", bound=BaseModel)


class CountingLLM:
    """Wraps an LLM and counts calls, tokens and seconds, so every run can report its cost per question."""

    def __init__(self, llm: LLM):
        self.inner = llm
        self.model_id = getattr(llm, "model_id", "llm")
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


def render(name: str, **variables: Any) -> list[Message]:
    """Messages of prompt template ``prompts/<name>.md`` (the shared loader when present)."""
    try:
        from legalrag.prompts import load_prompt
    except ImportError:
        from legalrag.rerank.llm_common import render_messages

        return render_messages(name, **variables)
    return list(load_prompt(name).render(**variables))


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def _parse(text: str, model: type[M]) -> M:
    m = _JSON_OBJECT.search(text)
    if not m:
        raise ValueError("the reply contains no JSON object")
    return model.model_validate(json.loads(m.group(0)))


def ask_json(llm: LLM, messages: Sequence[Message], model: type[M], *, max_tokens: int = 256,
             retries: int = 1) -> M:
    """A reply parsed into ``model``; the schema constrains decoding where the backend supports it, and a
    reply that does not validate is asked again with the error shown, ``retries`` times."""
    msgs = list(messages)
    raw: list[str] = []
    schema = model.model_json_schema()
    for attempt in range(retries + 1):
        result = llm.chat(ChatRequest(messages=tuple(msgs), max_tokens=max_tokens, temperature=0.0, seed=0,
                                      json_schema=schema))
        raw.append(result.text)
        try:
            return _parse(result.text, model)
        except (ValueError, ValidationError) as exc:
            error = str(exc).splitlines()[0][:300]
            msgs = list(messages) + [{"role": "assistant", "content": result.text},
                                     {"role": "user", "content": f"That reply is not valid ({error}). Answer again "
                                                                 "with one JSON object only."}]
    raise StructuredOutputError(f"no valid {model.__name__} after {retries + 1} attempts", raw=raw)


def ask_text(llm: LLM, messages: Sequence[Message], *, max_tokens: int = 512) -> str:
    return llm.chat(ChatRequest(messages=tuple(messages), max_tokens=max_tokens, temperature=0.0, seed=0)).text
