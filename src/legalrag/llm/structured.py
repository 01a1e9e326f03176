"""Structured output, the one policy for every LLM reply that should have structure: the reply is parsed into
a pydantic model (or by a parse function that may repair it), re-asked with the error on failure a bounded
number of times, and a final failure raises ``StructuredOutputError`` carrying the raw replies.

Where the backend can constrain decoding to a JSON schema (``supports_json_schema``) the model's schema is
passed along, so small local models produce valid JSON on the first try far more often; the parser still
tolerates code fences and text around the JSON for backends that cannot. After ``retries`` failed re-asks,
``StructuredOutputError`` carries every raw reply.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Mapping, Sequence, TypeVar

from pydantic import BaseModel, ValidationError

from legalrag.errors import InputError, StructuredOutputError
from legalrag.llm.base import LLM, ChatRequest, ChatResult, Message
from legalrag.types import Usage

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

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


class ReplyError(ValueError):
    """A reply that cannot be used; raised by a parse function. The message is shown to the model on the
    re-ask and kept in the call's record."""


@dataclass
class CallRecord:
    """What one structured call took: attempts, usage, every raw reply, the errors and the repairs made.

    A parse function may note a repair it made (``record.repairs.append(...)``); agents copy the record into
    their trajectory."""

    attempts: int = 0
    usage: Usage = field(default_factory=Usage)
    raw: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"attempts": self.attempts, "raw": self.raw, "errors": self.errors, "repairs": self.repairs}


@dataclass(frozen=True)
class StructuredReply(Generic[T]):
    """The parsed value plus what it took: attempts (1 = first try), every raw reply and chat result."""

    value: T
    attempts: int
    raw: tuple[str, ...]
    results: tuple[ChatResult, ...]
    record: CallRecord = field(default_factory=CallRecord)


def _parser(target: type[BaseModel] | Callable[[Any, CallRecord], T]) -> Callable[[str, CallRecord], Any]:
    if isinstance(target, type) and issubclass(target, BaseModel):
        return lambda text, rec: parse_into(text, target)
    if callable(target):
        return lambda text, rec: target(extract_json(text), rec)
    raise InputError(f"the reply target must be a pydantic BaseModel subclass or a parse function, got {target!r}")


def structured_call(llm: LLM, messages: Sequence[Message], target: type[M] | Callable[[Any, CallRecord], T],
                    retries: int = 2, *, use_schema: bool | None = None, schema: Mapping[str, Any] | None = None,
                    max_tokens: int = 512, temperature: float = 0.0, seed: int | None = None,
                    record: CallRecord | None = None, **options: Any) -> StructuredReply:
    """Ask ``llm`` and parse the reply, re-asking with the error shown up to ``retries`` times.

    ``target`` is a pydantic model (the reply is validated into it) or a parse function
    ``(json_value, record) -> value`` that may repair a reply (noting it in ``record.repairs``) or raise
    :class:`ReplyError`. The JSON schema sent to backends that can constrain decoding is ``schema`` when given
    (always sent), else the model's schema when ``use_schema`` (default: the backend's
    ``supports_json_schema``). A re-ask with a seed uses ``seed + attempt``, so a sampled reply can change.
    Every attempt is added to ``record``. After the last failed attempt raises :class:`StructuredOutputError`
    carrying the raw replies and the record: callers that must never crash (agents) catch it and record it.
    """
    if retries < 0:
        raise InputError(f"retries must be >= 0, got {retries}")
    parse = _parser(target)
    is_model = isinstance(target, type) and issubclass(target, BaseModel)
    if schema is None and is_model:
        if use_schema is None:
            use_schema = bool(getattr(llm, "supports_json_schema", False))
        schema = target.model_json_schema() if use_schema else None
        shown_schema = target.model_json_schema()
    else:
        shown_schema = schema
    rec = record if record is not None else CallRecord()
    base = list(messages)
    convo = list(base)
    raw: list[str] = []
    results: list[ChatResult] = []
    error = ""
    for attempt in range(1, retries + 2):
        start = time.perf_counter()
        result = llm.chat(ChatRequest(messages=tuple(convo), max_tokens=max_tokens, temperature=temperature,
                                      json_schema=schema, seed=None if seed is None else seed + attempt - 1,
                                      **options))
        rec.attempts += 1
        rec.usage = rec.usage + Usage.of(result, result.seconds or (time.perf_counter() - start))
        rec.raw.append(result.text)
        results.append(result)
        raw.append(result.text)
        try:
            value = parse(result.text, rec)
        except (ValueError, ValidationError) as exc:  # ReplyError is a ValueError
            error = describe_error(exc)
            if result.finish_reason == "length":
                error += f" (the reply was cut off at max_tokens={max_tokens})"
            rec.errors.append(f"attempt {attempt}: {error}")
            from legalrag.prompts import render_prompt

            retry = render_prompt("structured_retry", error=error,
                                  schema=json.dumps(shown_schema, ensure_ascii=False) if shown_schema else "")
            convo = base + [{"role": "assistant", "content": result.text[:2000]}] + retry
            continue
        return StructuredReply(value=value, attempts=attempt, raw=tuple(raw), results=tuple(results), record=rec)
    name = target.__name__ if is_model else getattr(target, "__name__", "the requested shape")
    raise StructuredOutputError(
        f"the model's reply could not be parsed into {name} after {retries + 1} attempts; last error: "
        f"{error}. Use a stronger model, raise max_tokens, or simplify the schema", raw=raw, record=rec)


def ask_structured(llm: LLM, messages: Sequence[Message], target: type[M] | Callable[[Any, CallRecord], T],
                   retries: int = 2, **options: Any) -> Any:
    """:func:`structured_call`, returning the parsed value only.

    ``options`` go into the ChatRequest (max_tokens, temperature, seed, stop...); ``use_schema`` forces the
    JSON schema on or off (default: on when the backend supports it). Raises StructuredOutputError with the
    raw replies when every attempt fails.
    """
    return structured_call(llm, messages, target, retries, **options).value
