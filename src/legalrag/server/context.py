"""What every route reads: the collaborators handed to ``create_app`` and the server's settings."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, Field

from legalrag.answer import DEFAULT_EVIDENCE_TOKENS
from legalrag.errors import InputError
from legalrag.server.bodies import MAX_EVIDENCE_TOKENS
from legalrag.server.streaming import LLMGate, NoModel


class Settings(BaseModel):
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
    evidence_tokens: int | None = Field(DEFAULT_EVIDENCE_TOKENS, ge=1, le=MAX_EVIDENCE_TOKENS,
                                        description="evidence budget of /ask and /consult prompts, in tokens: each "
                                        "retrieved article cut to the clauses matching the question (fewer tokens, "
                                        "sooner first token); a request may ask for less; None: whole articles")


@dataclass
class AppContext:
    index: Any
    llm: Any
    settings: Settings
    predictor: Any = None
    drafter: Any = None
    agents_llm: Any = None  # a trained policy's model for /agents/search (default: ``llm``)
    structure: Any = None  # a judgment StructurePredictor for /judgment/structure
    support: Any = None  # a citations.support.SupportScorer for /citations/check (default: the lexical model)
    gate: LLMGate = field(default_factory=LLMGate)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _laws: list[dict[str, Any]] | None = None
    _tokenizer: Any = None

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
                          "still work. Start it with `legalrag serve --model qwen2.5-1.5b` (or --endpoint URL "
                          "--endpoint-model NAME)")
        return self.llm

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
                             "(`legalrag serve --evidence-tokens`); ask for that or less", field="evidence_tokens")
        return requested

    def pipeline(self, retriever: str | None, laws: Sequence[str] = ()) -> tuple[Any, Any]:
        """The search pipeline and law filter for a request."""
        from legalrag.retrieval.pipeline import build_pipeline, law_filter

        pipe = build_pipeline(self.index, retriever=retriever or self.settings.default_retriever)
        return pipe, (law_filter(self.index, list(laws)) if laws else None)

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
