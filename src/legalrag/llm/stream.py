"""Token streaming: the server-sent-events form of chat completions, read and written.

Backends that can stream (the embedded model, OpenAI-compatible endpoints) have ``stream(request)``, which
returns a ``ChatStream``: iterate it for the text pieces as they are generated; once exhausted, ``.result``
is the whole ``ChatResult`` (text, token counts when the server reports them, seconds). ``stream_chat`` is
what callers use: it streams when the backend can and falls back to one ``chat`` call otherwise.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, Callable, Iterable, Iterator, Mapping

from legalrag.errors import LegalRagError, ModelError
from legalrag.llm.base import LLM, ChatRequest, ChatResult

DONE = "[DONE]"


def parse_sse_line(line: str, model_id: str, error_cls: type[LegalRagError] = ModelError) -> Mapping[str, Any] | None:
    """The JSON event of one ``data:`` line; None for blank lines, comments and ``[DONE]``. An error event
    raises ``error_cls``."""
    line = line.strip()
    if not line.startswith("data:"):
        return None
    data = line[5:].strip()
    if not data or data == DONE:
        return None
    try:
        event = json.loads(data)
    except json.JSONDecodeError:
        raise error_cls(f"{model_id} sent a stream event that is not JSON: {data[:200]!r}") from None
    if not isinstance(event, Mapping):
        raise error_cls(f"{model_id} sent a stream event that is not a JSON object: {data[:200]!r}")
    if "error" in event:
        err = event["error"]
        raise error_cls(f"{model_id} failed while streaming: {err.get('message', err) if isinstance(err, Mapping) else err}")
    return event


class ChatStream:
    """Text pieces of one streamed completion; ``result`` once the stream is exhausted."""

    def __init__(self, lines: Iterable[str], model_id: str, error_cls: type[LegalRagError] = ModelError,
                 on_close: Callable[[], None] | None = None):
        self._lines, self.model_id, self._error_cls, self._on_close = lines, model_id, error_cls, on_close
        self._parts: list[str] = []
        self._usage: Mapping[str, Any] = {}
        self._timings: dict[str, float] = {}
        self._finish = ""
        self.first_piece_seconds: float | None = None  # time to the first text piece (prefill, as felt)
        self._start = time.perf_counter()
        self._seconds: float | None = None

    def __iter__(self) -> Iterator[str]:
        try:
            for line in self._lines:
                event = parse_sse_line(line, self.model_id, self._error_cls)
                if event is None:
                    continue
                if event.get("usage"):
                    self._usage = event["usage"]
                if isinstance(event.get("timings"), Mapping):  # llama.cpp: prompt_n, prompt_ms, predicted_ms...
                    self._timings = {k: float(v) for k, v in event["timings"].items() if isinstance(v, (int, float))}
                for choice in event.get("choices") or []:
                    if choice.get("finish_reason"):
                        self._finish = choice["finish_reason"]
                    piece = (choice.get("delta") or {}).get("content") or ""
                    if piece:
                        if self.first_piece_seconds is None:
                            self.first_piece_seconds = time.perf_counter() - self._start
                        self._parts.append(piece)
                        yield piece
        finally:
            self._seconds = time.perf_counter() - self._start
            close = getattr(self._lines, "close", None)
            if callable(close):  # a caller that stopped early (a loop cut) frees the model's stream now
                close()
            if self._on_close is not None:
                self._on_close()

    @property
    def result(self) -> ChatResult:
        if self._seconds is None:
            raise RuntimeError("read the stream to its end before asking for its result")
        return ChatResult(text="".join(self._parts), prompt_tokens=int(self._usage.get("prompt_tokens", 0)),
                          completion_tokens=int(self._usage.get("completion_tokens", 0)), seconds=self._seconds,
                          model=self.model_id, finish_reason=self._finish, timings=self._timings)


class ResultStream:
    """A finished result read as a stream of one piece (a cache hit, or a backend that cannot stream)."""

    def __init__(self, result: ChatResult):
        self.result = result

    def __iter__(self) -> Iterator[str]:
        if self.result.text:
            yield self.result.text


class ObservedStream:
    """Another stream's pieces, with ``on_done(result)`` called once it has been read to its end."""

    def __init__(self, stream: Any, on_done: Callable[[ChatResult], None]):
        self._stream, self._on_done = stream, on_done

    def __iter__(self) -> Iterator[str]:
        yield from self._stream
        self._on_done(self._stream.result)

    @property
    def result(self) -> ChatResult:
        return self._stream.result


LOOP_REPEATS = 3  # a line or sentence written this many times is a loop
LOOP_MIN_CHARS = 6  # shorter units (a heading, "是。") may repeat without being a loop
_UNIT = re.compile(r"[^\n。！？!?]*[\n。！？!?]")
FINISH_LOOP, FINISH_TIME = "loop", "time_cap"


def loop_start(text: str, repeats: int = LOOP_REPEATS, min_chars: int = LOOP_MIN_CHARS) -> int | None:
    """Where a repeated-line loop begins in ``text``: the offset of the second occurrence of the first complete
    line or sentence (at least ``min_chars`` characters) that occurs ``repeats`` times; None when there is none."""
    seen: dict[str, list[int]] = {}
    for m in _UNIT.finditer(text):
        unit = m.group(0).strip().rstrip("。！？!?").strip()
        if len(unit) < min_chars:
            continue
        starts = seen.setdefault(unit, [])
        starts.append(m.start() + (len(m.group(0)) - len(m.group(0).lstrip())))
        if len(starts) >= repeats:
            return starts[1]
    return None


def _cut(result: ChatResult, text: str, finish: str, seconds: float | None = None) -> ChatResult:
    from dataclasses import replace

    from legalrag.llm.tokens import estimate_tokens

    tokens = result.completion_tokens or estimate_tokens(text)
    return replace(result, text=text, finish_reason=finish, completion_tokens=tokens,
                   seconds=seconds if seconds is not None else result.seconds)


def stream_chat(llm: LLM, request: ChatRequest, on_text: Callable[[str], None], *, time_cap_s: float | None = None,
                cut_loops: bool = False) -> ChatResult:
    """Generate with ``on_text`` called on each piece as it comes (one piece for backends that cannot stream).

    ``cut_loops``: stop when the text starts repeating a line (:func:`loop_start`); the result's text ends before
    the repetition and its ``finish_reason`` is ``loop``. ``time_cap_s``: stop after that many seconds
    (``finish_reason`` ``time_cap``). A stopped stream is closed, which frees the model at once."""
    stream = getattr(llm, "stream", None)
    if not callable(stream) or request.logprobs:
        result = llm.chat(request)
        cut = loop_start(result.text) if cut_loops else None
        if cut is not None:
            result = _cut(result, result.text[:cut], FINISH_LOOP)
        on_text(result.text)
        return result
    t0 = time.perf_counter()
    chunks = stream(request)
    pieces = iter(chunks)
    parts: list[str] = []
    stopped, cut = "", None
    try:
        for piece in pieces:
            on_text(piece)
            parts.append(piece)
            if cut_loops and any(ch in piece for ch in "\n。！？!?"):
                cut = loop_start("".join(parts))
                if cut is not None:
                    stopped = FINISH_LOOP
                    break
            if time_cap_s is not None and time.perf_counter() - t0 > time_cap_s:
                stopped = FINISH_TIME
                break
    finally:
        close = getattr(pieces, "close", None)
        if stopped and callable(close):
            close()
    if not stopped:
        return chunks.result
    text = "".join(parts)
    try:
        result = chunks.result
    except RuntimeError:  # a stream that keeps no result once closed early
        result = ChatResult(text=text, model=getattr(llm, "model_id", ""))
    return _cut(result, text[:cut] if cut is not None else text, stopped, time.perf_counter() - t0)


def sse_event(payload: Mapping[str, Any]) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


def sse_chunks(pieces: Iterable[str], *, model: str, reply_id: str, created: int,
               usage: Callable[[], Mapping[str, Any] | None] | None = None) -> Iterator[str]:
    """The SSE lines of a chat-completions stream carrying ``pieces`` (what ``legalrag llm serve`` sends)."""
    base = {"id": reply_id, "object": "chat.completion.chunk", "created": created, "model": model}
    yield sse_event({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                          "finish_reason": None}]})
    try:
        for piece in pieces:
            yield sse_event({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    except LegalRagError as exc:
        yield sse_event({"error": {"message": str(exc), "type": "server_error"}})
        yield f"data: {DONE}\n\n"
        return
    final: dict[str, Any] = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    totals = usage() if usage is not None else None
    if totals:
        final["usage"] = dict(totals)
    yield sse_event(final)
    yield f"data: {DONE}\n\n"
