"""JSON over HTTP for the search clients: one place for timeouts, status codes and error messages."""

from __future__ import annotations

import json
from typing import Any, Mapping

from legalrag._optional import require
from legalrag.errors import EndpointError


def _error(message: str, headers: Mapping[str, str] | None = None) -> EndpointError:
    """Error bodies may echo the request's headers (and so its key): redacted before they go anywhere."""
    from legalrag.errors import header_secrets, redact

    return EndpointError(redact(message, header_secrets(headers)))


def request_json(method: str, url: str, *, service: str, headers: Mapping[str, str] | None = None,
                 params: Mapping[str, Any] | None = None, json_body: Any = None, timeout: float = 20.0) -> Any:
    """Send one request and return the decoded JSON body; any failure is an EndpointError naming the service."""
    httpx = require("httpx", "http")
    try:
        resp = httpx.request(method, url, headers=dict(headers or {}), params=params, json=json_body,
                             timeout=timeout, follow_redirects=True)
    except httpx.TimeoutException:
        raise _error(f"{service}: no answer from {url} within {timeout:g} s; try again later", headers) from None
    except httpx.HTTPError as exc:
        raise _error(f"{service}: cannot reach {url} ({exc.__class__.__name__}: {exc})", headers) from None
    if resp.status_code in (401, 403):
        raise _error(f"{service}: the server refused the request (HTTP {resp.status_code}); "
                     "check the API key or token", headers)
    if resp.status_code == 429:
        raise _error(f"{service}: rate limited (HTTP 429); wait and retry, or use a key with a higher quota",
                     headers)
    if resp.status_code >= 400:
        raise _error(f"{service}: HTTP {resp.status_code} from {url}: {resp.text[:200]}", headers)
    try:
        return resp.json()
    except (json.JSONDecodeError, ValueError):
        raise _error(f"{service}: the answer from {url} is not JSON (starts {resp.text[:80]!r})", headers) from None
