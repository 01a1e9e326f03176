"""The embedded backend: a GGUF model run in process with xllamacpp (llama.cpp).

The constructor only checks its arguments; the model file is assembled/verified and loaded on first use or
on ``load()``. One model serves one request at a time (a lock around the runtime), so an instance can be
shared by threads.

xllamacpp's ``Server`` always starts llama.cpp's HTTP server next to the in-process API, by default on a
random 127.0.0.1 TCP port with no API key, which any local user could call. We bind it instead to a Unix
socket inside a fresh 0700 temp directory (llama.cpp treats a host name ending in ``.sock`` as a socket path)
and set a random API key, so no TCP port is opened and only this user can reach it. We use that socket
ourselves for one thing: exact prompt token counts, so a too-long prompt fails before any compute.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Iterator, Sequence

from legalrag._optional import require
from legalrag.errors import InputError, ModelError
from legalrag.llm.base import ChatRequest, ChatResult, Message, PromptTooLongError
from legalrag.llm.models import BUNDLED, DEFAULT_MODEL, canonical_name, check_gguf, resolve_model
from legalrag.llm.stream import ChatStream
from legalrag.llm.tokens import estimate_message_tokens
from legalrag.llm.wire import parse_reply, request_body

_LIVE: "weakref.WeakSet[EmbeddedLLM]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    # llama.cpp's server thread can hang interpreter shutdown if the Server is still alive then.
    for llm in list(_LIVE):
        llm.close()


def default_threads() -> int:
    """The cores this process may run on (``runtime.threads`` / $LEGALRAG_THREADS are applied by the caller)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class EmbeddedLLM:
    """A local chat model: ``"qwen2.5-coder-1.5b"`` (Qwen2.5-Coder-1.5B-Instruct, the default; id
    ``qwen2.5-1.5b``), ``"qwen2.5-coder-0.5b"`` (id ``qwen2.5-0.5b``) or the path of any GGUF file."""

    backend = "embedded"
    supports_json_schema = True
    supports_logprobs = True

    def __init__(self, model: str | os.PathLike = DEFAULT_MODEL, *, n_ctx: int = 4096, n_threads: int | None = None,
                 models_dir: str | os.PathLike | None = None, progress: bool = True, verbose: bool = False,
                 lora: str | os.PathLike | None = None, lora_scale: float = 1.0):
        if n_ctx < 64:
            raise InputError(f"n_ctx must be at least 64 tokens, got {n_ctx}")
        if n_threads is not None and n_threads < 1:
            raise InputError(f"n_threads must be >= 1, got {n_threads}")
        model = canonical_name(model)
        self.model = model
        if isinstance(model, str) and model in BUNDLED:
            self.model_id = model
        else:
            p = check_gguf(model)  # reads 4 bytes: cheap, and a wrong path fails here rather than later
            self.model_id = f"gguf:{p.name}:{p.stat().st_size}"
        # A llama.cpp LoRA adapter applied on top (a trained policy); its digest joins the model id, so the
        # call cache never serves one policy's replies to another.
        self.lora = Path(lora) if lora is not None else None
        self.lora_scale = lora_scale
        if self.lora is not None:
            if not self.lora.is_file():
                raise InputError("LoRA adapter file not found", path=str(self.lora))
            from legalrag.io import sha256_file

            self.model_id += f"+lora:{sha256_file(self.lora)[:16]}@{lora_scale:g}"
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.models_dir = models_dir
        self.progress = progress
        self.verbose = verbose
        self.path: Path | None = None
        self.load_seconds = 0.0
        self._server: Any = None
        self._sock_dir: str | None = None
        self._api_key = ""
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"EmbeddedLLM({self.model_id!r}, n_ctx={self.n_ctx}, n_threads={self.n_threads})"

    # -- lifecycle -------------------------------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        return self._server is not None

    def load(self) -> "EmbeddedLLM":
        """Assemble/verify the model file if needed and start the runtime; a no-op when already loaded."""
        with self._lock:
            if self._server is not None:
                return self
            xlc = require("xllamacpp", "llm")
            t0 = time.perf_counter()
            self.path, _ = resolve_model(self.model, self.models_dir, progress=self.progress)
            p = xlc.CommonParams()
            p.model.path = str(self.path)
            p.n_ctx = self.n_ctx
            p.n_parallel = 1
            if self.lora is not None:
                p.lora_adapters = [xlc.CommonAdapterLoraInfo(str(self.lora), float(self.lora_scale))]
            p.cpuparams.n_threads = p.cpuparams_batch.n_threads = self.n_threads
            p.warmup = False
            p.endpoint_metrics = True  # see the handle_metrics() call below
            p.verbosity = 3 if self.verbose else -1
            self._sock_dir = tempfile.mkdtemp(prefix="legalrag-llm-")  # 0700: only this user can connect
            p.hostnames = [os.path.join(self._sock_dir, "llm.sock")]
            self._api_key = secrets.token_urlsafe(24)
            p.api_keys = [self._api_key]
            try:
                self._server = xlc.Server(p)
                # Server() returns before its task loop runs; destroying it in that window hangs forever
                # (xllamacpp 2026.10.11549: the stop signal is lost), and so would interpreter exit. A metrics
                # request is answered by the loop itself (~0.2 ms), so after it the loop is known to run.
                self._server.handle_metrics()
            except Exception as exc:
                shutil.rmtree(self._sock_dir, ignore_errors=True)
                self._sock_dir = None
                raise ModelError(f"could not load model {self.path} with xllamacpp ({exc}); the file may be "
                                 "corrupt or not a chat model. Re-run with verbose=True to see llama.cpp's log.") from exc
            self.load_seconds = time.perf_counter() - t0
            _LIVE.add(self)
            return self

    def close(self) -> None:
        """Free the model and its socket; the next call loads it again."""
        with self._lock:
            server, self._server = self._server, None
            if server is not None:
                del server
            if self._sock_dir:
                shutil.rmtree(self._sock_dir, ignore_errors=True)
                self._sock_dir = None

    def __enter__(self) -> "EmbeddedLLM":
        return self.load()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort at garbage collection
        try:
            self.close()
        except Exception:
            pass

    @property
    def listening_address(self) -> str:
        """Where llama.cpp's HTTP side listens (a unix:// socket path); empty before loading."""
        return self._server.listening_address if self._server is not None else ""

    # -- token counting ----------------------------------------------------------------------------------------
    def count_tokens(self, messages: Sequence[Message]) -> int:
        """Exact prompt tokens of ``messages`` after the chat template (no generation)."""
        self.load()
        httpx = require("httpx", "llm")
        transport = httpx.HTTPTransport(uds=os.path.join(self._sock_dir or "", "llm.sock"))
        with httpx.Client(transport=transport, base_url="http://llm", timeout=60) as client:
            r = client.post("/v1/chat/completions/input_tokens", json={"messages": [dict(m) for m in messages]},
                            headers={"Authorization": f"Bearer {self._api_key}"})
        if r.status_code != 200:
            raise ModelError(f"token counting failed ({r.status_code}): {r.text[:300]}")
        return int(r.json()["input_tokens"])

    def _check_length(self, request: ChatRequest) -> None:
        # An exact count is a round-trip to the runtime's HTTP side (about a second on a busy 2-core machine),
        # so only prompts that may not fit pay for one. Byte-level BPE: a token covers at least one byte, so
        # bytes (+ template overhead) bound the count; the estimate catches the common case of Chinese text,
        # whose 3-byte characters make the byte bound useless. A prompt the estimate gets wrong is still
        # refused by the runtime itself before any compute (exceed_context_size_error -> PromptTooLongError).
        bound = sum(len(str(m.get("content", "")).encode("utf-8")) + 8 for m in request.messages) + 16
        if bound + request.max_tokens <= self.n_ctx:
            return
        if estimate_message_tokens(request.messages) + request.max_tokens <= int(self.n_ctx * 0.9):
            return
        n = self.count_tokens(request.messages)
        if n + request.max_tokens > self.n_ctx:
            raise PromptTooLongError(n, request.max_tokens, self.n_ctx, self.model_id)

    # -- chat ----------------------------------------------------------------------------------------------------
    @staticmethod
    def _check_request(request: ChatRequest) -> None:
        if not request.messages:
            raise InputError("a chat request needs at least one message")
        if request.max_tokens < 1:
            raise InputError(f"max_tokens must be >= 1, got {request.max_tokens}")

    def chat(self, request: ChatRequest) -> ChatResult:
        self._check_request(request)
        body = request_body(request)
        with self._lock:
            self.load()
            self._check_length(request)
            t0 = time.perf_counter()
            try:
                reply = self._server.handle_chat_completions(body)
            except ValueError as exc:  # raised for schemas the grammar converter rejects
                raise InputError(f"the embedded model cannot use this request's json_schema: {exc}. Simplify "
                                 "the schema (plain JSON Schema types) or drop it", field="json_schema") from exc
            seconds = time.perf_counter() - t0
        return parse_reply(reply, seconds, self.model_id, self.n_ctx, request.max_tokens)

    def stream(self, request: ChatRequest) -> ChatStream:
        """Stream the reply's text as it is generated (llama.cpp's server-sent events over the private socket).
        The model is held for this request until the stream is read to its end or closed."""
        self._check_request(request)
        body = request_body(request)
        body.update(stream=True, stream_options={"include_usage": True})
        return ChatStream(self._stream_lines(request, body), self.model_id)

    def _stream_lines(self, request: ChatRequest, body: dict[str, Any]) -> Iterator[str]:
        httpx = require("httpx", "llm")
        with self._lock:
            self.load()
            self._check_length(request)
            transport = httpx.HTTPTransport(uds=os.path.join(self._sock_dir or "", "llm.sock"))
            with httpx.Client(transport=transport, base_url="http://llm", timeout=httpx.Timeout(60.0, read=None)) as c:
                with c.stream("POST", "/v1/chat/completions", json=body,
                              headers={"Authorization": f"Bearer {self._api_key}"}) as r:
                    if r.status_code != 200:
                        r.read()
                        try:
                            reply = r.json()
                        except ValueError:
                            reply = {"error": {"message": r.text[:300]}}
                        parse_reply(reply, 0.0, self.model_id, self.n_ctx, request.max_tokens)  # raises
                        raise ModelError(f"streaming failed ({r.status_code}): {r.text[:300]}")
                    yield from r.iter_lines()
