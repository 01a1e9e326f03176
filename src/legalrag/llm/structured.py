"""Structured output: an LLM reply parsed into a pydantic model, re-asked with the error on failure.

Where the backend can constrain decoding to a JSON schema (``supports_json_schema``) the model's schema is
passed along, so small local models produce valid JSON on the first try far more often; the parser still
tolerates code fences and text around the JSON for backends that cannot. After ``retries`` failed re-asks,
``StructuredOutputError`` carries every raw reply.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Generic, Sequence, TypeVar

from pydantic import BaseModel, ValidationError

from legalrag.errors import InputError, StructuredOutputError
from legalrag.llm.base import LLM, ChatRequest, ChatResult, Message

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript)?[ \t]*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def extract_json(text: str) -> Any:
    """The first JSON value in ``text``: the whole text, a fenced block, or an object/array inside prose.

    Tolerates a trailing comma before ``}``/``]``. Raises ValueError (with a reason) when nothing parses.
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("the reply is empty")
    candidates = [stripped] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    for cand in candidates:
        for variant in (cand, _TRAILING_COMMA.sub(r"\1", cand)):
            try:
                return json.loads(variant)
            except json.JSONDecodeError:
                pass
    decoder = json.JSONDecoder()
    for variant in (text, _TRAILING_COMMA.sub(r"\1", text)):
        for m in re.finditer(r"[\[{]", variant):
            try:
                value, _ = decoder.raw_decode(variant, m.start())
            except json.JSONDecodeError:
                continue
            if isinstance(value, (dict, list)):
                return value
    raise ValueError("the reply contains no parsable JSON object")


def describe_error(exc: Exception) -> str:
    """A short, model-readable description of a parse or validation error."""
    if isinstance(exc, ValidationError):
        lines = []
        for err in exc.errors()[:6]:
            loc = ".".join(str(p) for p in err.get("loc", ())) or "(root)"
            lines.append(f"{loc}: {err.get('msg', '')}")
        more = f" (+{exc.error_count() - 6} more)" if exc.error_count() > 6 else ""
        return "; ".join(lines) + more
    return str(exc).splitlines()[0][:300]


def parse_into(text: str, model_cls: type[M]) -> M:
    """Parse ``text`` into ``model_cls``; ValueError or ValidationError when it does not fit."""
    value = extract_json(text)
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        value = value[0]  # a lone object wrapped in a list is what was meant
    return model_cls.model_validate(value)


@dataclass(frozen=True)
class StructuredReply(Generic[M]):
    """The parsed value plus what it took: attempts (1 = first try) and every raw reply."""

    value: M
    attempts: int
    raw: tuple[str, ...]
    results: tuple[ChatResult, ...]


def structured_call(llm: LLM, messages: Sequence[Message], model_cls: type[M], retries: int = 2, *,
                    use_schema: bool | None = None, max_tokens: int = 512, temperature: float = 0.0,
                    **options: Any) -> StructuredReply[M]:
    """Like :func:`ask_structured`, returning the attempts and raw replies too."""
    if retries < 0:
        raise InputError(f"retries must be >= 0, got {retries}")
    if not (isinstance(model_cls, type) and issubclass(model_cls, BaseModel)):
        raise InputError(f"model_cls must be a pydantic BaseModel subclass, got {model_cls!r}")
    schema = model_cls.model_json_schema()
    if use_schema is None:
        use_schema = bool(getattr(llm, "supports_json_schema", False))
    base = list(messages)
    convo = list(base)
    raw: list[str] = []
    results: list[ChatResult] = []
    for attempt in range(1, retries + 2):
        result = llm.chat(ChatRequest(messages=tuple(convo), max_tokens=max_tokens, temperature=temperature,
                                      json_schema=schema if use_schema else None, **options))
        results.append(result)
        raw.append(result.text)
        try:
            value = parse_into(result.text, model_cls)
        except (ValueError, ValidationError) as exc:
            error = describe_error(exc)
            if result.finish_reason == "length":
                error += f" (the reply was cut off at max_tokens={max_tokens})"
            from legalrag.prompts import load_prompt

            retry = load_prompt("structured_retry").render(
                error=error, schema=json.dumps(schema, ensure_ascii=False))
            convo = base + [{"role": "assistant", "content": result.text}] + retry
            continue
        return StructuredReply(value=value, attempts=attempt, raw=tuple(raw), results=tuple(results))
    raise StructuredOutputError(
        f"the model's reply could not be parsed into {model_cls.__name__} after {retries + 1} attempts; last error: "
        f"{error}. Use a stronger model, raise max_tokens, or simplify the schema", raw=raw)


def ask_structured(llm: LLM, messages: Sequence[Message], model_cls: type[M], retries: int = 2,
                   **options: Any) -> M:
    """Ask ``llm`` and parse the reply into ``model_cls``, re-asking with the error up to ``retries`` times.

    ``options`` go into the ChatRequest (max_tokens, temperature, seed, stop...); ``use_schema`` forces the
    JSON schema on or off (default: on when the backend supports it). Raises StructuredOutputError with the
    raw replies when every attempt fails.
    """
    return structured_call(llm, messages, model_cls, retries, **options).value
