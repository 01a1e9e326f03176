"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, TEI, llama.cpp, Ollama...).

Batching, retries with exponential back-off on connection errors, timeouts, 429 and 5xx; other 4xx answers
and malformed replies raise ``EndpointError`` at once with what the server said.
"""

from __future__ import annotations

import os
import time
from typing import Sequence

import numpy as np

from legalrag._optional import require
from legalrag.errors import EndpointError
from legalrag.retrieval.encoders import BaseEncoder


class OpenAIEmbeddings(BaseEncoder):
    """``OpenAIEmbeddings("text-embedding-3-small", base_url="https://api.openai.com/v1")``.

    ``dimension`` is probed with one request when not given. ``query_prefix``/``passage_prefix`` serve
    models that expect roles (e5, bge). The API key is read from ``$api_key_env`` (none is sent if unset).
    """

    batch_size = 64

    def __init__(self, model: str, base_url: str = "https://api.openai.com/v1", api_key_env: str = "OPENAI_API_KEY",
                 dimension: int | None = None, timeout: float = 30.0, max_retries: int = 3,
                 backoff: float = 0.5, query_prefix: str = "", passage_prefix: str = "", **kw):
        super().__init__(**kw)
        self.model = model
        self.model_id = f"openai:{model}"
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.timeout, self.max_retries, self.backoff = timeout, max_retries, backoff
        self.query_prefix, self.passage_prefix = query_prefix, passage_prefix
        self._dim = dimension
        self._client = None

    @property
    def url(self) -> str:
        return f"{self.base_url}/embeddings"

    @property
    def dimension(self) -> int:
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"]).shape[1])
        return self._dim

    def _http(self):
        if self._client is None:
            httpx = require("httpx", "http")
            headers = {"Content-Type": "application/json"}
            key = os.environ.get(self.api_key_env)
            if key:
                headers["Authorization"] = f"Bearer {key}"
            self._client = httpx.Client(timeout=self.timeout, headers=headers)
        return self._client

    def _request(self, texts: list[str]) -> np.ndarray:
        httpx = require("httpx", "http")
        body = {"model": self.model, "input": texts, "encoding_format": "float"}
        last = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                resp = self._http().post(self.url, json=body)
            except httpx.TimeoutException:
                last = f"no answer within {self.timeout:g} s"
                continue
            except httpx.HTTPError as exc:
                last = f"cannot connect ({type(exc).__name__}: {exc})"
                continue
            if resp.status_code == 429 or resp.status_code >= 500:
                last = f"HTTP {resp.status_code}: {resp.text[:200]}"
                continue
            if resp.status_code != 200:
                raise EndpointError(f"{self.url} refused the request with HTTP {resp.status_code}: "
                                    f"{resp.text[:300]} (check the model name and ${self.api_key_env})")
            return self._parse(resp, len(texts))
        raise EndpointError(f"embeddings endpoint {self.url} failed after {self.max_retries + 1} attempts: {last}. "
                            "Check that the server is running and --base-url / $LEGALRAG_EMBEDDINGS_BASE_URL.")

    def _parse(self, resp, n: int) -> np.ndarray:
        try:
            data = resp.json()["data"]
            rows = sorted(data, key=lambda d: d.get("index", 0))
            vecs = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EndpointError(f"{self.url} answered in an unexpected format (expected "
                                f"{{'data': [{{'embedding': [...], 'index': i}}]}}): {exc}") from None
        if vecs.ndim != 2 or vecs.shape[0] != n:
            raise EndpointError(f"{self.url} returned {vecs.shape[0] if vecs.ndim else 0} embeddings for {n} inputs")
        if self._dim is not None and vecs.shape[1] != self._dim:
            raise EndpointError(f"{self.url} returned {vecs.shape[1]}-d vectors, expected {self._dim} "
                                f"(model {self.model!r})")
        return vecs

    def _embed(self, texts: Sequence[str], role: str) -> np.ndarray:
        prefix = self.query_prefix if role == "query" else self.passage_prefix
        return self._request([prefix + t for t in texts])
