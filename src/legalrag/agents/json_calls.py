"""One structured LLM call for the retrieval agents: lenient JSON parsing, repair, bounded re-asks, a record.

Unlike a call that raises on the final failure, ``call_json`` returns ``(value or None, CallRecord)``: the
planner loop must never crash on a bad reply, and every attempt (raw reply, error, tokens) goes into the
trajectory. Each re-ask shows the model its previous reply and what was wrong with it.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence, TypeVar

from legalrag.llm.base import LLM, ChatRequest, Message

T = TypeVar("T")

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class ReplyError(ValueError):
    """A reply that cannot be used; the message is shown to the model on the re-ask and kept in the trace."""


@dataclass
class CallRecord:
    attempts: int = 0
    tokens: int = 0
    seconds: float = 0.0
    raw: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"attempts": self.attempts, "raw": self.raw, "errors": self.errors, "repairs": self.repairs}


def extract_json(text: str) -> Any:
    """The JSON value in a reply: the whole text, a fenced block, or the outermost {...} / [...] span."""
    text = text.strip()
    candidates = [text]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    for open_, close in (("{", "}"), ("[", "]")):
        start, end = text.find(open_), text.rfind(close)
        if 0 <= start < end:
            candidates.append(text[start:end + 1])
    for c in candidates:
        try:
            return json.loads(c)
        except json.JSONDecodeError:
            continue
    raise ReplyError("the reply is not valid JSON")


def call_json(llm: LLM, messages: Sequence[Message], parse: Callable[[Any, CallRecord], T], *,
              schema: Mapping[str, Any] | None, temperature: float, max_tokens: int, retries: int = 2,
              seed: int | None = None, record: CallRecord | None = None) -> tuple[T | None, CallRecord]:
    """Ask, parse with ``parse(json_value, record)``, re-ask up to ``retries`` times on ReplyError.

    ``parse`` may repair a reply (it notes what it did in ``record.repairs``) or raise ReplyError.
    """
    rec = record or CallRecord()
    convo = list(messages)
    for attempt in range(retries + 1):
        start = time.perf_counter()
        result = llm.chat(ChatRequest(messages=tuple(convo), max_tokens=max_tokens, temperature=temperature,
                                      json_schema=schema, seed=None if seed is None else seed + attempt))
        rec.attempts += 1
        rec.seconds += result.seconds or (time.perf_counter() - start)
        rec.tokens += int(result.prompt_tokens) + int(result.completion_tokens)
        rec.raw.append(result.text)
        try:
            return parse(extract_json(result.text), rec), rec
        except ReplyError as exc:
            rec.errors.append(f"attempt {attempt + 1}: {exc}")
            convo = list(messages) + [
                {"role": "assistant", "content": result.text[:1000]},
                {"role": "user", "content": f"That reply cannot be used: {exc}. Reply again with the JSON object only."},
            ]
    return None, rec
