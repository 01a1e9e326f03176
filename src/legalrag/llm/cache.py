"""A persistent call cache (SQLite) and token/time accounting.

``CachedLLM(llm)`` wraps any backend. A call is cached when it is reproducible: temperature 0, or a seed
given (``cache_all=True`` caches every call). The key is a SHA-256 over the backend name, the model id, the
messages and every sampling parameter, so a different prompt, schema or model never hits an old entry. The
database is the ``path`` given (``wiring`` passes the ``paths.llm_cache`` setting) or
``<legalrag cache>/llm-cache.sqlite``; several processes may share it (WAL mode). Every call, cached or not, is added to ``.usage`` (calls, tokens, seconds).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from legalrag.io import cache_dir, open_cache_db
from legalrag.llm.base import LLM, ChatRequest, ChatResult, TokenLogprob
from legalrag.llm.usage import UsageMeter
from legalrag.types import Usage

KEY_VERSION = 1


def default_cache_path(home: str | os.PathLike | None = None) -> Path:
    return cache_dir(home) / "llm-cache.sqlite"


def request_key(backend: str, model_id: str, request: ChatRequest) -> str:
    """SHA-256 over everything that determines a reply."""
    fields = {}
    for f in dataclasses.fields(request):
        v = getattr(request, f.name)
        if f.name == "messages":
            v = [dict(m) for m in v]
        elif isinstance(v, tuple):
            v = list(v)
        fields[f.name] = v
    blob = json.dumps({"v": KEY_VERSION, "backend": backend, "model": model_id, "request": fields},
                      sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _result_to_json(r: ChatResult) -> str:
    return json.dumps({"text": r.text, "logprobs": [[t.token, t.logprob, dict(t.top)] for t in r.logprobs],
                       "prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens,
                       "seconds": r.seconds, "model": r.model, "finish_reason": r.finish_reason,
                       "timings": dict(r.timings)}, ensure_ascii=False)


def _result_from_json(s: str, lookup_seconds: float) -> ChatResult:
    d = json.loads(s)
    timings = dict(d.get("timings") or {})
    timings["original_seconds"] = float(d.get("seconds", 0.0))
    return ChatResult(text=d["text"], logprobs=tuple(TokenLogprob(t, lp, top) for t, lp, top in d.get("logprobs", [])),
                      prompt_tokens=d.get("prompt_tokens", 0), completion_tokens=d.get("completion_tokens", 0),
                      seconds=lookup_seconds, model=d.get("model", ""), cached=True,
                      finish_reason=d.get("finish_reason", ""), timings=timings)


class CallCache:
    """The SQLite store behind CachedLLM (one connection per instance, guarded by a lock)."""

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = open_cache_db(self.path, "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, backend TEXT, "
                                   "model TEXT, result TEXT NOT NULL, created REAL, hits INTEGER DEFAULT 0)",
                                   "LLM call cache", check_same_thread=False, isolation_level=None)

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT result FROM calls WHERE key = ?", (key,)).fetchone()
            if row is not None:
                self._conn.execute("UPDATE calls SET hits = hits + 1 WHERE key = ?", (key,))
        return row[0] if row else None

    def put(self, key: str, backend: str, model: str, result_json: str) -> None:
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO calls (key, backend, model, result, created) "
                               "VALUES (?, ?, ?, ?, ?)", (key, backend, model, result_json, time.time()))

    def stats(self) -> dict[str, Any]:
        with self._lock:
            rows = self._conn.execute("SELECT backend, model, COUNT(*), SUM(hits) FROM calls "
                                      "GROUP BY backend, model ORDER BY COUNT(*) DESC").fetchall()
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return {"path": str(self.path), "bytes": size, "entries": sum(r[2] for r in rows),
                "models": [{"backend": b, "model": m, "entries": n, "hits": h or 0} for b, m, n, h in rows]}

    def clear(self, model: str | None = None) -> int:
        with self._lock:
            cur = (self._conn.execute("DELETE FROM calls WHERE model = ?", (model,)) if model
                   else self._conn.execute("DELETE FROM calls"))
        return cur.rowcount

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class CachedLLM:
    """An LLM with a persistent call cache and usage accounting; ``enabled=False`` only counts."""

    def __init__(self, llm: LLM, path: str | os.PathLike | None = None, *, enabled: bool = True,
                 cache_all: bool = False):
        self.inner = llm
        self.model_id = llm.model_id
        self.backend = str(getattr(llm, "backend", type(llm).__name__))
        self.enabled = enabled
        self.cache_all = cache_all
        self._path = path
        self._store: CallCache | None = None
        self._store_lock = threading.Lock()
        self.meter = UsageMeter()
        self.hits = 0
        self.misses = 0

    def __getattr__(self, name: str) -> Any:
        # supports_json_schema, n_ctx, count_tokens... of the wrapped backend
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"CachedLLM({self.inner!r}, enabled={self.enabled})"

    @property
    def usage(self) -> Usage:
        """Calls, tokens and seconds of this instance's calls, cached or not."""
        return self.meter.usage

    @property
    def store(self) -> CallCache:
        with self._store_lock:
            if self._store is None:
                self._store = CallCache(self._path)
            return self._store

    def cacheable(self, request: ChatRequest) -> bool:
        return self.enabled and (self.cache_all or request.temperature == 0 or request.seed is not None)

    def _lookup(self, request: ChatRequest) -> tuple[str, float, ChatResult | None]:
        """(key, start time, the cached result or None), counting the hit or miss."""
        t0 = time.perf_counter()
        key = request_key(self.backend, self.model_id, request)
        hit = self.store.get(key)
        if hit is None:
            self.misses += 1
            return key, t0, None
        result = _result_from_json(hit, time.perf_counter() - t0)
        self.hits += 1
        self.meter.add(result)
        return key, t0, result

    def _save(self, key: str, t0: float, result: ChatResult) -> None:
        self.store.put(key, self.backend, self.model_id, _result_to_json(result))
        self.meter.add(result, seconds=time.perf_counter() - t0)

    def chat(self, request: ChatRequest) -> ChatResult:
        if not self.cacheable(request):
            result = self.inner.chat(request)
            self.meter.add(result)
            return result
        key, t0, result = self._lookup(request)
        if result is None:
            result = self.inner.chat(request)
            self._save(key, t0, result)
        return result

    def stream(self, request: ChatRequest) -> Any:
        """Stream through the cache: a hit comes back as one piece; a miss streams from the backend (one piece
        if it cannot stream) and is stored once read to its end."""
        from legalrag.llm.stream import ObservedStream, ResultStream

        inner_stream = getattr(self.inner, "stream", None)
        if not callable(inner_stream):
            return ResultStream(self.chat(request))
        if not self.cacheable(request):
            return ObservedStream(inner_stream(request), self.meter.add)
        key, t0, result = self._lookup(request)
        if result is not None:
            return ResultStream(result)
        return ObservedStream(inner_stream(request), lambda done: self._save(key, t0, done))

    def stats(self) -> dict[str, Any]:
        """This run's hits, misses and usage."""
        return {"enabled": self.enabled, "hits": self.hits, "misses": self.misses, **self.usage.to_dict()}

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
