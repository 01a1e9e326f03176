"""What every route reads: the collaborators handed to ``create_app`` and the server's settings."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from legalrag.types import DEFAULT_EVIDENCE_TOKENS
from legalrag.errors import InputError
from legalrag.server.bodies import MAX_EVIDENCE_TOKENS
from legalrag.server.streaming import IndexNotHeld, LLMGate, NoModel


class ServerSettings(BaseModel):
    """Service options (typed, closed: unknown keys are an error)."""

    model_config = ConfigDict(extra="forbid")
    max_k: int = Field(50, ge=1, le=1000, description="largest k a request may ask for")
    default_retriever: str | None = None
    api_keys: tuple[str, ...] = Field((), repr=False, description="accepted API keys; empty: no key needed")
    rate_limit: int = Field(120, ge=0, description="requests per minute per key (per client address without "
                            "keys); 0: no limit")
    rate_burst: int | None = Field(None, ge=1, description="bucket size (default: one minute's worth)")
    max_body_bytes: int = Field(256 * 1024, ge=1024)
    cors_origins: tuple[str, ...] = Field((), description="origins allowed to call the API from a browser; "
                                          "empty: CORS off")
    llm_slots: int = Field(1, ge=1, description="generations that run at once")
    max_waiting: int = Field(16, ge=0, description="generations that may wait for a slot; more get 503")
    mcp: bool = Field(True, description="serve the MCP tools at /mcp (needs the mcp extra)")
    host: str = Field("127.0.0.1", description="the address the server binds; a loopback one turns on the MCP "
                      "route's DNS-rebinding check (Host and Origin headers)")
    evidence_tokens: int | None = Field(DEFAULT_EVIDENCE_TOKENS, ge=1, le=MAX_EVIDENCE_TOKENS,
                                        description="evidence budget of /ask and /consult prompts, in tokens: each "
                                        "retrieved article cut to the clauses matching the question (fewer tokens, "
                                        "sooner first token); a request may ask for less; None: whole articles")
    max_indexes: int = Field(0, ge=0, le=16, description="other indexes a request may name (`index`) that the "
                             "server opens and keeps, least recently used dropped first; 0: only its own")


@dataclass
class AppContext:
    index: Any
    llm: Any
    settings: ServerSettings
    predictor: Any = None
    drafter: Any = None
    agents_llm: Any = None  # a trained policy's model for /agents/search (default: ``llm``)
    structure: Any = None  # a judgment StructurePredictor for /judgment/structure
    support: Any = None  # a citations.support.SupportScorer for /citations/check (None: the lexical model; legalrag serve passes the root's full model)
    gate: LLMGate = field(default_factory=LLMGate)
    open_index: Callable[[Path], Any] | None = None  # opens another index a request names (the launcher's)
    build: str = ""  # the legalrag build this server runs (``warm.build.build_id`` when it started)
    versions: Callable[[], Any] | None = None  # loads the law's versions (a laws.Library) for /law/* and check's as_of
    _versions: list[Any] = field(default_factory=list)  # the versions, once loaded (routes_law.law_versions)
    _versions_lock: threading.Lock = field(default_factory=threading.Lock)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _index_lock: threading.Lock = field(default_factory=threading.Lock)
    _others: "OrderedDict[str, Any]" = field(default_factory=OrderedDict)
    _laws: list[dict[str, Any]] | None = None
    _tokenizer: Any = None

    def held_indexes(self) -> list[str]:
        """The directories of the indexes this server holds: its own first, then the others, oldest use first."""
        return [_key(self.index.path)] + list(self._others)

    def index_for(self, path: str | None, on_load: Callable[[str], None] | None = None) -> tuple[Any, str, float]:
        """The index a request names (None: the server's own) with how it was had (``held``: the server's own or
        one it opened before; ``loaded``: opened now, taking the seconds returned). ``on_load(path)`` is called
        before an index is opened; at most ``settings.max_indexes`` others are kept."""
        if path is None or _key(path) == _key(self.index.path):
            return self.index, "held", 0.0
        key = _key(path)
        with self._index_lock:  # one load at a time; a second request for the same index waits and finds it
            if key in self._others:
                self._others.move_to_end(key)
                return self._others[key], "held", 0.0
            if self.settings.max_indexes < 1 or self.open_index is None:
                raise IndexNotHeld(f"this server holds the index at {self.index.path} and may not open others "
                                   f"(`legalrag serve -o max_indexes=N`, or the serve.max_indexes setting); asked for {path}")
            if on_load is not None:
                on_load(key)
            t0 = time.perf_counter()
            index = self.open_index(Path(key))
            seconds = time.perf_counter() - t0
            self._others[key] = index
            while len(self._others) > self.settings.max_indexes:
                self._others.popitem(last=False)
            return index, "loaded", seconds

    @property
    def lang(self) -> str:
        lang = (self.index.manifest or {}).get("lang")
        return lang if lang in ("zh", "en") else "zh"

    @property
    def model(self) -> str | None:
        return getattr(self.llm, "model_id", None) if self.llm is not None else None

    def need_llm(self, what: str) -> Any:
        if self.llm is None:
            raise NoModel(f"{what} needs a language model and this server has none; search and citation checks "
                          "still work. Start it with `legalrag serve --model qwen2.5-1.5b` (or --model URL#NAME)")
        return self.llm

    def uncached_llm(self, what: str) -> Any:
        """The server's model past its call cache (a request that asks for a fresh answer): the model itself
        when ``llm`` is a ``CachedLLM``, else ``llm``."""
        from legalrag.llm.cache import CachedLLM

        llm = self.need_llm(what)
        return llm.inner if isinstance(llm, CachedLLM) else llm

    def need_agents_llm(self) -> Any:
        return self.agents_llm if self.agents_llm is not None else self.need_llm("the agents search")

    @property
    def agents_model(self) -> str | None:
        llm = self.agents_llm if self.agents_llm is not None else self.llm
        return getattr(llm, "model_id", None) if llm is not None else None

    def check_k(self, k: int) -> None:
        if k > self.settings.max_k:
            raise InputError(f"k={k} is above this server's limit of {self.settings.max_k}", field="k")

    def evidence_budget(self, requested: int | None) -> int | None:
        """The evidence budget of one answer: the request's when it asks for one, at most the server's."""
        limit = self.settings.evidence_tokens
        if requested is None:
            return limit
        if limit is not None and requested > limit:
            raise InputError(f"evidence_tokens={requested} is above this server's evidence budget of {limit} tokens "
                             "(`legalrag serve -o evidence_tokens=N`); ask for that or less", field="evidence_tokens")
        return requested

    def pipeline(self, retriever: str | None, laws: Sequence[str] = (), index: Any = None) -> tuple[Any, Any]:
        """The search pipeline and law filter for a request (over ``index``, default the server's own)."""
        from legalrag.retrieval.pipeline import build_pipeline, law_filter

        from legalrag.retrieval.dated import undated

        index = self.index if index is None else index
        own = undated(index) is undated(self.index)  # the server's own index, also read as of another day
        pipe = build_pipeline(index, retriever=retriever or (self.settings.default_retriever if own else None))
        return pipe, (law_filter(index, list(laws)) if laws else None)

    def laws(self) -> list[dict[str, Any]]:
        with self._lock:
            if self._laws is None:
                counts: dict[str, int] = {}
                for doc in self.index.documents:
                    law = str(doc.metadata.get("law") or "")
                    if law:
                        counts[law] = counts.get(law, 0) + 1
                self._laws = [{"title": t, "articles": n} for t, n in sorted(counts.items(), key=lambda x: -x[1])]
            return self._laws

    def terms(self, query: str) -> list[str]:
        """The query's words as the lexical retrievers see them, for highlighting (longest first)."""
        from legalrag.retrieval.tokenize import tokenizer_for

        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = tokenizer_for(self.lang)
        words = {t for t in self._tokenizer(query) if len(t) > 1 or not t.isascii()}
        return sorted(words, key=lambda t: (-len(t), t))[:40]

    def judgment_drafter(self) -> Any:
        llm = self.need_llm("drafting")
        with self._lock:
            if self.drafter is None:
                from legalrag.judgment.draft import JudgmentDrafter

                self.drafter = JudgmentDrafter(llm, list(self.index.documents))
            return self.drafter


def _key(path: Any) -> str:
    """An index directory as one string, however the request spelled it."""
    return str(Path(path).expanduser().resolve())
