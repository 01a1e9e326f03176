"""The HTTP app's guard: one ASGI middleware in front of every route.

In order, for each request: API key (when the server has keys; ``Authorization: Bearer KEY`` or
``X-API-Key``, compared in constant time against every key), a per-key rate limit (token bucket; 429 with
``Retry-After``), JSON-only request bodies (415) no larger than ``max_body_bytes`` (413, also for chunked
bodies), then security headers on every response and one structured access-log line per request. The log names
a key by its position in the key file (``key-2``), never by its value.

Pages, static files, ``/health``, ``/docs`` and ``/openapi.json`` need no key: the page asks for one when an
API route answers 401.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

from legalrag.errors import InputError

ACCESS_LOG = logging.getLogger("legalrag.access")
MIN_KEY_CHARS = 16

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]
OPEN_PATHS = ("/health", "/openapi.json", "/docs", "/favicon.ico")


def load_api_keys(path: str | Path) -> list[str]:
    """One key per line; blank lines and ``#`` comments are skipped. Short keys are refused."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError("API key file not found", path=str(p)) from None
    keys = []
    for lineno, line in enumerate(lines, 1):
        key = line.split("#", 1)[0].strip()
        if not key:
            continue
        if len(key) < MIN_KEY_CHARS or any(ch.isspace() for ch in key):
            raise InputError(f"an API key must be one word of at least {MIN_KEY_CHARS} characters; make one with "
                             "python -c 'import secrets; print(secrets.token_urlsafe(24))'", path=str(p), line=lineno)
        keys.append(key)
    if not keys:
        raise InputError("the API key file holds no key", path=str(p))
    return keys


class KeyRing:
    """Which key (by position) a presented secret is; compares against every key so timing says nothing."""

    def __init__(self, keys: Sequence[str]):
        self._digests = [hashlib.sha256(k.encode()).digest() for k in keys]

    def __bool__(self) -> bool:
        return bool(self._digests)

    def identify(self, presented: str) -> str | None:
        given = hashlib.sha256(presented.encode()).digest()
        found = None
        for i, digest in enumerate(self._digests, 1):
            if hmac.compare_digest(given, digest) and found is None:
                found = f"key-{i}"
        return found


class RateLimiter:
    """Token bucket per identity: ``per_minute`` requests a minute, bursts up to ``burst``."""

    def __init__(self, per_minute: int, burst: int | None = None, clock: Callable[[], float] = time.monotonic):
        self.rate = per_minute / 60.0
        self.capacity = float(burst if burst is not None else max(1, per_minute))
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, who: str) -> float:
        """0 when allowed, else the seconds until the next request would be."""
        if self.rate <= 0:
            return 0.0
        now = self.clock()
        tokens, last = self._buckets.get(who, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - last) * self.rate)
        if tokens >= 1.0:
            self._buckets[who] = (tokens - 1.0, now)
            return 0.0
        self._buckets[who] = (tokens, now)
        if len(self._buckets) > 10000:  # forget idle clients rather than grow without bound
            self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < 120}
        return (1.0 - tokens) / self.rate


def _is_api(path: str, page_paths: Sequence[str]) -> bool:
    return not (path in OPEN_PATHS or path in page_paths or path.startswith("/static/"))


class Guard:
    """ASGI middleware: auth, rate limit, body checks, security headers, access log."""

    def __init__(self, app: Any, *, keys: KeyRing, limiter: RateLimiter, max_body_bytes: int,
                 page_paths: Sequence[str]):
        self.app, self.keys, self.limiter = app, keys, limiter
        self.max_body_bytes, self.page_paths = max_body_bytes, tuple(page_paths)

    async def __call__(self, scope: dict, receive: Callable[[], Awaitable[dict]], send: Callable[[dict], Awaitable[None]]):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start = time.perf_counter()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        path, method = scope.get("path", ""), scope.get("method", "")
        client = (scope.get("client") or ("-", 0))[0]
        state = {"status": 0, "bytes": 0, "who": client}

        async def send_wrapped(message: dict) -> None:
            if message["type"] == "http.response.start":
                state["status"] = message["status"]
                message = {**message, "headers": list(message.get("headers", [])) + SECURITY_HEADERS
                           + ([(b"cache-control", b"no-store")] if _is_api(path, self.page_paths) else [])}
            elif message["type"] == "http.response.body":
                state["bytes"] += len(message.get("body", b""))
            await send(message)

        try:
            refusal = self._check(path, method, headers, state)
            if refusal is not None:
                status, kind, text, extra, *params = refusal
                await _send_error(send_wrapped, status, kind, text, extra, params[0] if params else None)
                return
            await self.app(scope, self._limited(receive, state), send_wrapped)
        finally:
            ACCESS_LOG.info(json.dumps({"method": method, "path": path, "status": state["status"],
                                        "ms": round((time.perf_counter() - start) * 1000, 1), "who": state["who"],
                                        "bytes": state["bytes"]}, ensure_ascii=False))

    def _check(self, path: str, method: str, headers: dict[str, str], state: dict) -> tuple | None:
        if not _is_api(path, self.page_paths) or method == "OPTIONS":  # CORS preflights carry no key
            return None
        if self.keys:
            presented = headers.get("x-api-key", "")
            auth = headers.get("authorization", "")
            if auth[:7].lower() == "bearer ":
                presented = auth[7:].strip()
            who = self.keys.identify(presented) if presented else None
            if who is None:
                why = "a wrong API key" if presented else "no API key"
                return (401, "Unauthorized", f"this server needs an API key and the request has {why}; send it as "
                        "'Authorization: Bearer KEY' or 'X-API-Key: KEY'", [(b"www-authenticate", b"Bearer")])
            state["who"] = who
        wait = self.limiter.take(state["who"])
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            return (429, "RateLimited", f"too many requests; retry in {seconds} s",
                    [(b"retry-after", str(seconds).encode())], {"retry_after": seconds})
        if method in ("POST", "PUT", "PATCH"):
            ctype = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if ctype != "application/json":
                return (415, "UnsupportedMediaType", f"send the body as JSON with 'Content-Type: application/json' "
                        f"(got {ctype or 'no content type'!r})", [])
            length = headers.get("content-length")
            if length is not None and (not length.isdigit() or int(length) > self.max_body_bytes):
                return (413, "TooLarge", f"the request body is larger than this server's limit of "
                        f"{self.max_body_bytes} bytes", [], {"limit": self.max_body_bytes})
        return None

    def _limited(self, receive: Callable[[], Awaitable[dict]], state: dict) -> Callable[[], Awaitable[dict]]:
        """``receive`` that refuses chunked bodies growing past the limit (Content-Length may be absent)."""
        seen = 0

        async def wrapped() -> dict:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body_bytes:
                    from starlette.exceptions import HTTPException  # FastAPI passes these through body parsing

                    raise HTTPException(413, f"the request body is larger than this server's limit of "
                                             f"{self.max_body_bytes} bytes")
            return message

        return wrapped


async def _send_error(send: Callable[[dict], Awaitable[None]], status: int, kind: str, message: str,
                      extra: list[tuple[bytes, bytes]], params: dict | None = None) -> None:
    error: dict[str, Any] = {"type": kind, "message": message, **({"params": params} if params else {})}
    body = json.dumps({"error": error}, ensure_ascii=False).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *extra]})
    await send({"type": "http.response.body", "body": body})
