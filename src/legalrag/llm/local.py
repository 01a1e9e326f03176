"""A local legalrag model server kept warm in the background, and an LLM that prefers it.

``legalrag llm start`` launches ``legalrag llm serve`` as a detached process (its pid and log in the home
folder), waits until it answers, and returns; ``legalrag llm stop`` ends it; ``legalrag llm status`` says what
runs. ``ask`` and ``chat`` then answer through it, the way the Ollama CLI talks to its daemon: the model stays
loaded, so a question costs its prefill and decode only, not the seconds of loading the model.

:class:`ServerFirstLLM` is that choice made per call: a probe of ``/v1/models`` (at most ``PROBE_TIMEOUT``
seconds) tells whether a legalrag server is up; when it is not, or it fails before the first token, the model
is loaded in this process instead. A server that stops in the middle of an answer is reported with what to do,
never waited on past its time limits (``CONNECT_TIMEOUT`` to connect, ``READ_TIMEOUT`` between tokens).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from legalrag.errors import LegalRagError, ModelError
from legalrag.io import log_tail, start_detached
from legalrag.llm.base import LLM, ChatRequest, ChatResult

PROBE_TIMEOUT = 0.5  # seconds to learn whether a server is up
READ_TIMEOUT = 120.0  # seconds without a byte from a server that was up: it is hung
START_TIMEOUT = 300.0  # seconds for a started server to load its model and answer


@dataclass(frozen=True)
class ServerInfo:
    url: str  # OpenAI-compatible base URL, .../v1
    model: str  # the model it serves
    pid: int | None = None  # from the pid file when this host started it


def probe(url: str, timeout: float = PROBE_TIMEOUT) -> ServerInfo | None:
    """The legalrag model server at ``url`` (``http://HOST:PORT/v1``) when one answers, else None. A server that
    is not legalrag's (its models not ``owned_by: legalrag``) counts as none."""
    import httpx

    try:
        r = httpx.get(url.rstrip("/") + "/models", timeout=timeout)
        data = r.json().get("data") or [] if r.status_code == 200 else []
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    ours = [m for m in data if isinstance(m, dict) and m.get("owned_by") == "legalrag"]
    return ServerInfo(url, str(ours[0].get("id", ""))) if ours else None


def _files(home: Path) -> tuple[Path, Path]:
    home.mkdir(parents=True, exist_ok=True)
    return home / "llm-server.json", home / "llm-server.log"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def status(url: str, home: Path) -> dict[str, Any]:
    """What runs: the server at ``url`` (model, pid when started here) and the pid file's view."""
    state_file, log = _files(home)
    state = json.loads(state_file.read_text(encoding="utf-8")) if state_file.is_file() else {}
    pid = state.get("pid")
    info = probe(url)
    return {"url": url, "up": info is not None, "model": info.model if info else None,
            "pid": pid if pid and _alive(pid) else None, "started": state.get("started"), "log": str(log)}


def start(url: str, home: Path, *, model: str | None = None, threads: int | None = None, n_ctx: int = 4096,
          timeout: float = START_TIMEOUT, on_wait: Callable[[float], None] | None = None) -> dict[str, Any]:
    """Start ``legalrag llm serve`` for ``url``'s host and port in the background (unless one is up) and wait
    until it answers; raises with the log's tail when it does not within ``timeout`` seconds."""
    from urllib.parse import urlparse

    up = probe(url)
    if up is not None:
        return {**status(url, home), "already_running": True}
    state_file, log = _files(home)
    parts = urlparse(url)
    cmd = [sys.executable, "-m", "legalrag", "llm", "serve", "--host", parts.hostname or "127.0.0.1",
           "--port", str(parts.port or 8000), "--n-ctx", str(n_ctx)]
    if model:
        cmd += ["--model", model]
    if threads:
        cmd += ["--threads", str(threads)]
    proc, seconds = start_detached(cmd, state_file, log, url, lambda: probe(url) is not None, timeout=timeout,
                                   on_wait=on_wait)
    if seconds is not None:
        return {**status(url, home), "already_running": False, "seconds": seconds}
    if proc.poll() is not None:
        raise ModelError(f"the model server exited with code {proc.returncode} while starting; its log "
                         f"({log}) ends with:\n{log_tail(log)}")
    stop(url, home)
    raise ModelError(f"the model server did not answer within {timeout:g} s of starting; its log ({log}) ends "
                     f"with:\n{log_tail(log)}")


def stop(url: str, home: Path, timeout: float = 15.0) -> dict[str, Any]:
    """Stop the server this host started (SIGTERM, then SIGKILL after ``timeout`` seconds)."""
    state_file, _ = _files(home)
    state = json.loads(state_file.read_text(encoding="utf-8")) if state_file.is_file() else {}
    pid = state.get("pid")
    stopped = False
    if pid and _alive(pid):
        os.killpg(pid, signal.SIGTERM) if _is_group_leader(pid) else os.kill(pid, signal.SIGTERM)
        t0 = time.monotonic()
        while _alive(pid) and time.monotonic() - t0 < timeout:
            time.sleep(0.2)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
        stopped = True
    state_file.unlink(missing_ok=True)
    return {"url": url, "stopped": stopped, "pid": pid, "still_up": probe(url) is not None}



def _is_group_leader(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return False


class ServerFirstLLM:
    """The local model server at ``url`` when one is up, else the LLM ``make_local()`` builds (loaded on first
    use). ``route`` says which answered the last call: ``server URL`` or ``in-process``."""

    def __init__(self, url: str, make_local: Callable[[], LLM], make_client: Callable[[ServerInfo, float], LLM], *,
                 probe_timeout: float = PROBE_TIMEOUT, read_timeout: float = READ_TIMEOUT):
        """``make_client(info, read_timeout)`` builds the client of the server found (the composition root's
        OpenAI-compatible client, with no retries: a failure falls back instead)."""
        self.url, self._make_local = url, make_local
        self.read_timeout = read_timeout
        self._local: LLM | None = None
        self._server: LLM | None = None
        self.fallback_note = ""
        info = probe(url, probe_timeout)
        if info is not None:
            self._server = make_client(info, read_timeout)
            self.model_id = info.model
            self.route = f"server {url}"
        else:
            self.model_id = "local"
            self.route = "in-process"

    def _in_process(self) -> LLM:
        if self._local is None:
            self._local = self._make_local()
        self.model_id = getattr(self._local, "model_id", self.model_id)
        self.route = "in-process"
        return self._local

    @property
    def n_ctx(self) -> int | None:
        return None if self._server is not None else getattr(self._in_process(), "n_ctx", None)

    def _fall_back(self, exc: LegalRagError) -> LLM:
        self.fallback_note = f"the local model server at {self.url} failed ({exc}); answered in this process"
        self._server = None
        return self._in_process()

    def chat(self, request: ChatRequest) -> ChatResult:
        if self._server is not None:
            try:
                return self._server.chat(request)
            except LegalRagError as exc:
                return self._fall_back(exc).chat(request)
        return self._in_process().chat(request)

    def stream(self, request: ChatRequest) -> Any:
        if self._server is None:
            from legalrag.llm.stream import ResultStream

            local = self._in_process()
            return local.stream(request) if callable(getattr(local, "stream", None)) else \
                ResultStream(local.chat(request))
        return _FirstTokenFallback(self, request)

    def close(self) -> None:
        for llm in (self._server, self._local):
            if llm is not None and hasattr(llm, "close"):
                llm.close()


class _FirstTokenFallback:
    """A server stream that falls back to the in-process model if the server fails before its first piece, and
    says what happened (and what to do) if it fails after."""

    def __init__(self, owner: ServerFirstLLM, request: ChatRequest):
        self.owner, self.request = owner, request
        self.inner: Any = None
        self.result: ChatResult | None = None

    def __iter__(self):
        from legalrag.llm.stream import ResultStream

        started = False
        try:
            self.inner = self.owner._server.stream(self.request)
            for piece in self.inner:
                started = True
                yield piece
            self.result = self.inner.result
        except LegalRagError as exc:  # refused, dropped, hung past the time limit, or garbage on the wire
            if started:
                raise ModelError(f"the local model server at {self.owner.url} stopped in the middle of the answer "
                                 f"({exc}); ask again (the model then loads in this process), or restart it with "
                                 "`legalrag llm start`") from exc
            local = self.owner._fall_back(exc)
            stream = local.stream(self.request) if callable(getattr(local, "stream", None)) else None
            self.inner = stream if stream is not None else ResultStream(local.chat(self.request))
            yield from self.inner
            self.result = self.inner.result
