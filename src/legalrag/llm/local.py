"""A local legalrag model server kept warm in the background, and an LLM that prefers it.

``legalrag llm start`` runs ``legalrag llm serve`` as a background process (``legalrag.warm.daemon``, the same
start, stop and status as ``legalrag serve --background``); ``ask`` and ``chat`` then answer through it, the
way the Ollama CLI talks to its daemon: the model stays loaded, so a question costs its prefill and decode
only, not the seconds of loading the model. :func:`probe_model_server` tells whether one is up.

:class:`ServerFirstLLM` is that choice made per call: a probe of ``/v1/models`` (at most ``PROBE_TIMEOUT``
seconds) tells whether a legalrag server is up; when it is not, or it fails before the first token, the model
is loaded in this process instead. A server that stops in the middle of an answer is reported with what to do,
never waited on past its time limits (``CONNECT_TIMEOUT`` to connect, ``READ_TIMEOUT`` between tokens).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from legalrag.errors import LegalRagError, ModelError
from legalrag.llm.base import LLM, ChatRequest, ChatResult

PROBE_TIMEOUT = 0.5  # seconds to learn whether a server is up
READ_TIMEOUT = 120.0  # seconds without a byte from a server that was up: it is hung


@dataclass(frozen=True)
class ServerInfo:
    url: str  # OpenAI-compatible base URL, .../v1
    model: str  # the model it serves
    pid: int | None = None  # from the pid file when this host started it


def probe_model_server(url: str, timeout: float = PROBE_TIMEOUT) -> ServerInfo | None:
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
        info = probe_model_server(url, probe_timeout)
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
