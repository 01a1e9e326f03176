"""Talk to a warm ``legalrag serve``: find it, check that it runs this build, stream an answer from it.

Standard library only (``http.client``, ``json``): this is the code a fresh ``legalrag ask`` runs before the
first article is printed, so it must not pull in httpx, numpy or the retrieval stack. Nothing here waits
without a bound: ``PROBE_TIMEOUT`` to learn whether a server is up, ``CONNECT_TIMEOUT`` to connect,
``READ_TIMEOUT`` between two bytes of a stream (the server sends a comment line every few seconds while a
request waits in its queue or the model reads the prompt, so silence that long means it hung).
"""

from __future__ import annotations

import http.client
import json
import socket
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlparse

from legalrag.errors import LegalRagError

PROBE_TIMEOUT = 0.5
CONNECT_TIMEOUT = 2.0
READ_TIMEOUT = 60.0


@dataclass(frozen=True)
class WarmServer:
    """What ``GET /health`` of a legalrag server says about it."""

    url: str  # http://HOST:PORT
    version: str
    build: str
    llm: str | None  # the model it answers with (None: search only)
    index: str | None  # the index it was started with
    indexes: tuple[str, ...] = ()  # every index it holds now
    max_indexes: int = 0  # other indexes it may load on request
    evidence_tokens: int | None = None  # its largest evidence budget (None: whole articles)
    pid: int | None = None
    busy: dict = field(default_factory=dict)  # {"active": n, "waiting": n}

    def holds(self, index: str | None) -> bool:
        return index is None or index in self.indexes


class ServerError(LegalRagError):
    """The server answered, but not with an answer: a refusal (busy, bad input, another index not allowed) or
    an error event; ``kind`` is the API's error type (``Busy``, ``InputError``, ``IndexNotHeld``...)."""

    def __init__(self, message: str, kind: str = "", status: int = 0):
        super().__init__(message)
        self.kind, self.status = kind, status


class ServerGone(LegalRagError):
    """The server stopped answering: the connection dropped, or nothing came for ``READ_TIMEOUT`` seconds."""


def _split(url: str) -> tuple[str, int]:
    parts = urlparse(url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def probe_warm_server(url: str, timeout: float = PROBE_TIMEOUT) -> WarmServer | None:
    """The legalrag server at ``url`` when one answers ``/health`` as legalrag, else None (nothing there, not
    legalrag, or no answer within ``timeout`` seconds)."""
    host, port = _split(url)
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", "/health", headers={"Accept": "application/json"})
        resp = conn.getresponse()
        data = json.loads(resp.read() or b"{}") if resp.status == 200 else {}
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        conn.close()
    if not isinstance(data, dict) or data.get("service") != "legalrag":
        return None
    return WarmServer(url=url.rstrip("/"), version=str(data.get("version", "")), build=str(data.get("build", "")),
                      llm=data.get("llm"), index=data.get("index"), indexes=tuple(data.get("indexes") or ()),
                      max_indexes=int(data.get("max_indexes") or 0), evidence_tokens=data.get("evidence_tokens"),
                      pid=data.get("pid"), busy=dict(data.get("busy") or {}))


def stream(url: str, path: str, body: dict[str, Any], on_event: Callable[[str, Any], None], *,
           connect_timeout: float = CONNECT_TIMEOUT, read_timeout: float = READ_TIMEOUT,
           headers: dict[str, str] | None = None) -> dict[str, Any]:
    """POST ``body`` to the server-sent-events route ``path`` and hand each event to ``on_event(name, data)``;
    returns the ``done`` payload. Raises :class:`ServerError` for a refusal or an ``error`` event and
    :class:`ServerGone` when the stream ends early or stalls."""
    host, port = _split(url)
    conn = http.client.HTTPConnection(host, port, timeout=connect_timeout)
    try:
        try:
            conn.connect()
            conn.sock.settimeout(read_timeout)
            conn.request("POST", path, body=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                         headers={"Content-Type": "application/json", "Accept": "text/event-stream",
                                  **(headers or {})})
            resp = conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            raise ServerGone(f"the server at {url} did not take the request ({_why(exc)})") from exc
        if resp.status != 200:
            raise _refusal(url, resp)
        return _read_events(url, resp, on_event, read_timeout)
    finally:
        conn.close()


def _read_events(url: str, resp: Any, on_event: Callable[[str, Any], None], read_timeout: float) -> dict:
    event, data = "", []
    try:
        while True:
            raw = resp.readline()
            if not raw:
                raise ServerGone(f"the server at {url} closed the connection before the answer ended")
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
            elif not line and event:
                payload = json.loads("\n".join(data)) if data else None
                if event == "done":
                    return payload or {}
                if event == "error":
                    err = (payload or {}).get("error", {}) if isinstance(payload, dict) else {}
                    raise ServerError(str(err.get("message") or "the server failed"), str(err.get("type", "")))
                on_event(event, payload)
                event, data = "", []
    except socket.timeout as exc:
        raise ServerGone(f"the server at {url} sent nothing for {read_timeout:g} s") from exc
    except (OSError, http.client.HTTPException) as exc:
        raise ServerGone(f"the server at {url} stopped in the middle of the answer ({_why(exc)})") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise ServerGone(f"the server at {url} sent something that is not an event stream ({exc})") from exc


def _refusal(url: str, resp: Any) -> ServerError:
    try:
        err = json.loads(resp.read() or b"{}").get("error", {})
    except (ValueError, AttributeError, OSError, http.client.HTTPException):
        err = {}
    message = str(err.get("message") or f"HTTP {resp.status}")
    return ServerError(f"the server at {url} refused the request: {message}", str(err.get("type", "")), resp.status)


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
