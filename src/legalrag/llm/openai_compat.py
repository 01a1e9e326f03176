"""A client for OpenAI-compatible chat-completions endpoints (vLLM, SGLang, llama.cpp, Ollama, DeepSeek,
DashScope, OpenAI, ``legalrag llm serve``).

The API key is read from a named environment variable (never passed on the command line). Requests that fail
with 429 or 5xx, or time out, are retried with exponential backoff (honouring ``Retry-After``); a refused
connection, a 4xx or a reply that is not chat-completions JSON fails at once with an ``EndpointError`` saying
what to check. At most ``max_concurrency`` requests are in flight per client, so one instance can be shared
by threads.
"""

from __future__ import annotations

import os
import random
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from legalrag._optional import require
from legalrag.errors import EndpointError, InputError
from legalrag.llm.base import ChatRequest, ChatResult
from legalrag.llm.stream import ChatStream
from legalrag.llm.wire import parse_reply, request_body

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


def normalise_base_url(base_url: str) -> str:
    """``http://host:port`` -> ``http://host:port/v1``; a URL that already has a path is kept as given."""
    url = base_url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"endpoint URL {base_url!r} must look like http://host:port/v1")
    return url if parts.path not in ("", "/") else url + "/v1"


class OpenAICompatLLM:
    """Chat completions over HTTP. ``model`` is the name the server knows the model by."""

    backend = "openai"

    def __init__(self, base_url: str, model: str, *, api_key_env: str | None = "OPENAI_API_KEY",
                 timeout: float = 120.0, max_retries: int = 3, max_concurrency: int = 4, backoff: float = 1.0,
                 supports_json_schema: bool = True, supports_logprobs: bool = True, strict_schema: bool = False,
                 extra_body: dict[str, Any] | None = None):
        if not model:
            raise InputError("an endpoint needs a model name (--endpoint-model)")
        if max_retries < 0 or max_concurrency < 1 or timeout <= 0:
            raise InputError("max_retries must be >= 0, max_concurrency >= 1 and timeout > 0")
        self.base_url = normalise_base_url(base_url)
        self.model = model
        self.model_id = f"{model}@{self.base_url}"
        self.api_key_env = api_key_env
        self.timeout, self.max_retries, self.backoff = timeout, max_retries, backoff
        self.max_concurrency = max_concurrency
        self.supports_json_schema, self.supports_logprobs = supports_json_schema, supports_logprobs
        self.strict_schema = strict_schema
        self.extra_body = dict(extra_body or {})
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._client: Any = None
        self._client_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAICompatLLM({self.base_url!r}, {self.model!r})"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    @property
    def client(self) -> Any:
        with self._client_lock:
            if self._client is None:
                httpx = require("httpx", "http")
                self._client = httpx.Client(
                    timeout=self.timeout,
                    limits=httpx.Limits(max_connections=self.max_concurrency,
                                        max_keepalive_connections=self.max_concurrency))
            return self._client

    def close(self) -> None:
        with self._client_lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        """POST with retries; returns the decoded JSON reply or raises EndpointError."""
        httpx = require("httpx", "http")
        url = self.base_url + path
        last = ""
        for attempt in range(self.max_retries + 1):
            delay = self.backoff * (2 ** attempt) * (0.75 + 0.5 * random.random())
            try:
                with self._slots:
                    r = self._post_once(url, body)
            except httpx.ConnectError as exc:
                raise _error(f"cannot connect to {url} ({exc}). Is the server running and the URL right? "
                                    "For a local one: legalrag llm serve (at the llm.server address)") from None
            except httpx.TimeoutException:
                # not retried: a server that used the whole time is hung or overloaded, and retrying would
                # multiply the wait; the caller records the failure and goes on
                raise _error(f"{url}: no complete answer within {self.timeout:g} s; the server is hung or "
                             "overloaded: check it, or raise the timeout") from None
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                if r.status_code == 200:
                    try:
                        return r.json()
                    except ValueError:
                        raise _error(f"{url} answered 200 but the body is not JSON: {r.text[:200]!r}. "
                                            "Check that the URL points at an OpenAI-compatible API (…/v1)") from None
                if r.status_code in (401, 403):
                    hint = (f"set the API key in ${self.api_key_env}" if self.api_key_env and
                            not os.environ.get(self.api_key_env) else f"check the key in ${self.api_key_env}")
                    raise _error(f"{url} refused the credentials ({r.status_code}): {r.text[:200]}; {hint}")
                if r.status_code == 400 and "exceed_context_size_error" in r.text:
                    try:
                        return r.json()  # parse_reply turns it into PromptTooLongError
                    except ValueError:
                        pass
                if r.status_code not in RETRY_STATUS:
                    raise _error(f"{url} rejected the request ({r.status_code}): {_error_text(r)}")
                last = f"HTTP {r.status_code}: {_error_text(r)}"
                retry_after = r.headers.get("retry-after")
                if retry_after and retry_after.replace(".", "", 1).isdigit():
                    delay = min(float(retry_after), 60.0)
            if attempt < self.max_retries:
                time.sleep(delay)
        raise _error(f"{url} failed after {self.max_retries + 1} attempts; last: {last}. The server is "
                            "overloaded or down; retry later or raise max_retries/timeout")

    def _post_once(self, url: str, body: dict[str, Any]) -> Any:
        """One POST whose whole reply must arrive within ``timeout`` seconds. httpx's timeouts bound each read,
        so a server that sends a byte now and then would otherwise hold the call forever."""
        httpx = require("httpx", "http")
        deadline = time.monotonic() + self.timeout
        with self.client.stream("POST", url, json=body, headers=self._headers()) as r:
            chunks = []
            for chunk in r.iter_bytes():
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the reply did not finish in time", request=r.request)
            headers = [(k, v) for k, v in r.headers.multi_items()
                       if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
            return httpx.Response(r.status_code, headers=headers, content=b"".join(chunks), request=r.request)

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        if not request.messages:
            raise InputError("a chat request needs at least one message")
        body = request_body(request, strict_schema=self.strict_schema, json_schema=self.supports_json_schema,
                            model=self.model)
        if not self.supports_logprobs:
            body.pop("logprobs", None)
            body.pop("top_logprobs", None)
        body.update(self.extra_body)
        return body

    def stream(self, request: ChatRequest) -> ChatStream:
        """Stream the reply's text (``stream: true``, server-sent events). No retries once the reply has
        started; a refused connection or an error status fails at once with an ``EndpointError``."""
        body = self._body(request)
        body.update(stream=True, stream_options={"include_usage": True})
        return ChatStream(self._stream_lines(body), self.model_id, error_cls=EndpointError)

    def _stream_lines(self, body: dict[str, Any]) -> Any:
        httpx = require("httpx", "http")
        url = self.base_url + "/chat/completions"
        try:
            with self._slots, self.client.stream("POST", url, json=body, headers=self._headers()) as r:
                if r.status_code != 200:
                    r.read()
                    raise _error(f"{url} rejected the streamed request ({r.status_code}): {_error_text(r)}")
                yield from r.iter_lines()
        except httpx.ConnectError as exc:
            raise _error(f"cannot connect to {url} ({exc}). Is the server running and the URL right? "
                                "For a local one: legalrag llm serve (at the llm.server address)") from None
        except httpx.TimeoutException:
            raise _error(f"{url}: no data within {self.timeout:g} s while streaming") from None
        except httpx.HTTPError as exc:
            raise _error(f"{url}: the stream broke off ({type(exc).__name__}: {exc})") from None

    def chat(self, request: ChatRequest) -> ChatResult:
        body = self._body(request)
        t0 = time.perf_counter()
        reply = self._post("/chat/completions", body)
        return parse_reply(reply, time.perf_counter() - t0, self.model_id, max_tokens=request.max_tokens,
                           error_cls=EndpointError)

    def models(self) -> list[str]:
        """The model names the server lists at ``/models``."""
        httpx = require("httpx", "http")
        try:
            r = self.client.get(self.base_url + "/models", headers=self._headers())
            r.raise_for_status()
            return [m["id"] for m in r.json().get("data", [])]
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise _error(f"could not list models at {self.base_url}/models: {exc}") from None


def _error(message: str) -> EndpointError:
    """Servers may echo the Authorization header in error bodies: the key is redacted from every message."""
    from legalrag.errors import redact

    return EndpointError(redact(message))  # the key comes from the environment, which redact knows


def _error_text(r: Any) -> str:
    try:
        err = r.json().get("error")
        if isinstance(err, dict):
            return str(err.get("message", err))[:300]
        if err:
            return str(err)[:300]
    except (ValueError, AttributeError):
        pass
    return r.text[:300]
