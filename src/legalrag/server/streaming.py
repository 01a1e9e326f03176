"""Generation on the server: a queue in front of the model, and server-sent events for streamed answers.

``LLMGate`` lets ``slots`` generations run at once (the embedded model serves one at a time) and at most
``max_waiting`` wait; a request beyond that gets 503 with ``Retry-After`` instead of an unbounded queue. The
time a request waited is reported (``queue_s``).

``sse_response(job)`` runs ``job(emit)`` in a worker thread and sends what it emits as SSE events
(``event: NAME`` / ``data: JSON``), then ``done`` with the job's result or ``error`` with a message. When the
client goes away, Starlette cancels the response; the next ``emit`` (each generated token emits one) raises
``Cancelled`` in the worker, which unwinds the generation and closes the model's stream. While nothing is
emitted (a request waiting in the queue, the model reading a long prompt) a comment line goes out every
``KEEPALIVE_S`` seconds, so a client can tell a slow server from a dead one with a bounded read timeout.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from legalrag.errors import LegalRagError

LOG = logging.getLogger("legalrag.server")
Emit = Callable[[str, Any], None]
KEEPALIVE_S = 5.0


class Cancelled(Exception):
    """The client disconnected; the job stops at its next emit."""


class Busy(LegalRagError):
    """Too many requests are already waiting for the model."""

    def __init__(self, waiting: int):
        super().__init__(f"the language model is busy ({waiting} requests waiting); retry shortly")
        self.waiting = waiting


class NoModel(LegalRagError):
    """The server was started without a language model."""


class IndexNotHeld(LegalRagError):
    """A request named an index this server does not hold and may not open (409)."""


class LLMGate:
    def __init__(self, slots: int = 1, max_waiting: int = 16):
        self._slots = threading.BoundedSemaphore(slots)
        self._lock = threading.Lock()
        self.slots = slots
        self.active = 0
        self.max_waiting = max_waiting
        self.waiting = 0
        self.served = 0

    def refuse_if_full(self) -> None:
        """Raise ``Busy`` now (before a stream starts) when the queue is full."""
        if self.active >= self.slots and self.waiting >= self.max_waiting:
            raise Busy(self.waiting)

    @contextmanager
    def slot(self, cancel: threading.Event | None = None, on_queued: Callable[[int], None] | None = None
             ) -> Iterator[float]:
        """Hold a generation slot; yields the seconds spent waiting for it."""
        t0 = time.perf_counter()
        if not self._slots.acquire(blocking=False):
            with self._lock:
                if self.waiting >= self.max_waiting:
                    raise Busy(self.waiting)
                self.waiting += 1
                position = self.waiting
            try:
                if on_queued is not None:
                    on_queued(position)
                while not self._slots.acquire(timeout=0.2):
                    if cancel is not None and cancel.is_set():
                        raise Cancelled()
            finally:
                with self._lock:
                    self.waiting -= 1
        with self._lock:
            self.active += 1
        try:
            yield time.perf_counter() - t0
        finally:
            with self._lock:
                self.active -= 1
                self.served += 1
            self._slots.release()


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def error_payload(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """HTTP status and JSON body for an exception; internal errors say so without details (they are logged)."""
    from legalrag.errors import EndpointError, InputError, MissingDependencyError, ModelError

    if isinstance(exc, InputError):
        body = {"type": type(exc).__name__, "message": str(exc)}
        return 400, {"error": {**body, "fields": [{"field": exc.field, "type": "input"}]} if exc.field else body}
    if isinstance(exc, Busy):
        return 503, {"error": {"type": "Busy", "message": str(exc), "params": {"waiting": exc.waiting}}}
    if isinstance(exc, IndexNotHeld):
        return 409, {"error": {"type": "IndexNotHeld", "message": str(exc)}}
    if isinstance(exc, NoModel):
        return 503, {"error": {"type": "NoModel", "message": str(exc)}}
    if isinstance(exc, (ModelError, EndpointError, MissingDependencyError)):
        return 503, {"error": {"type": "LLMUnavailable", "message": f"the language model is unavailable: {exc}"}}
    if isinstance(exc, LegalRagError):
        return 500, {"error": {"type": type(exc).__name__, "message": str(exc)}}
    LOG.error("internal error", exc_info=exc)
    return 500, {"error": {"type": "InternalError", "message": "internal error; the server log has the details"}}


def sse_response(job: Callable[[Emit, threading.Event], Any], render: Callable[[str, Any], str] = sse,
                 headers: dict[str, str] | None = None) -> Any:
    """A streaming response of the events ``job(emit, cancel)`` emits, then ``done`` (its return value).
    ``render(event, data)`` writes each event (default: ``event: NAME`` / ``data: JSON``); another wire format
    (the OpenAI-compatible route's chunks) passes its own."""
    from fastapi.responses import StreamingResponse

    cancel = threading.Event()

    async def events() -> Any:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def put(item: tuple[str, Any]) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the event loop is gone (server shutting down)
                cancel.set()

        def emit(event: str, data: Any) -> None:
            if cancel.is_set():
                raise Cancelled()
            put((event, data))

        def run() -> None:
            try:
                put(("done", job(emit, cancel)))
            except Cancelled:
                LOG.info("client disconnected; generation stopped")
            except BaseException as exc:  # reported to the client as an event, never a silent cut
                put(("error", error_payload(exc)[1]))
            finally:
                put(("", None))

        worker = threading.Thread(target=run, name="legalrag-sse", daemon=True)
        worker.start()
        getter: asyncio.Future | None = None  # one pending get, never cancelled while it may hold an item
        try:
            while True:
                if getter is None:
                    getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter}, timeout=KEEPALIVE_S)
                if not done:
                    yield ": wait\n\n"
                    continue
                event, data = getter.result()
                getter = None
                if not event:
                    break
                yield render(event, data)
        finally:
            if getter is not None:
                getter.cancel()
            cancel.set()

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no", **(headers or {})})
