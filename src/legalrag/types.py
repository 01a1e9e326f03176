"""The one vocabulary every stage reads and writes: small frozen dataclasses.

Metadata is a plain mapping (law title, article number, section header, URL, dates...). Dataclasses are frozen
so a stage cannot change what an earlier stage returned; use ``dataclasses.replace`` to derive a new value.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from legalrag.errors import InputError


class DocumentKind(str, enum.Enum):
    STATUTE = "statute"
    JUDGMENT = "judgment"
    USER_DOCUMENT = "user_document"
    WEB = "web"


@dataclass(frozen=True)
class Document:
    """A retrievable unit: a statute article, a judgment (or a section of one), a chunk of a user file, a web page."""

    id: str
    text: str
    title: str = ""
    kind: DocumentKind = DocumentKind.STATUTE
    source: str = ""  # file path or URL the document came from
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["kind"] = self.kind.value
        d["metadata"] = dict(self.metadata)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Document":
        return cls(
            id=str(d["id"]),
            text=d.get("text", ""),
            title=d.get("title", ""),
            kind=DocumentKind(d.get("kind", "statute")),
            source=d.get("source", ""),
            metadata=dict(d.get("metadata") or {}),
        )


@dataclass(frozen=True)
class Hit:
    """A document a retriever or reranker returned for a query, with its score and 1-based rank.

    ``retriever`` names the stage that produced the score; ``sources`` records, for fused results, every
    retriever that found the document and the rank it gave (e.g. ``{"bm25": 3, "dense:e5-small": 1}``).
    """

    document: Document
    score: float
    rank: int
    retriever: str = ""
    sources: Mapping[str, int] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.document.id



# A search function: (query, k) -> hits, best first. What the answer engine and the conversation processors call.
Search = Callable[[str, int], Sequence["Hit"]]

@dataclass(frozen=True)
class Query:
    """A question or a statement of facts; ``gold_ids`` are set only in evaluation data."""

    text: str
    id: str = ""
    gold_ids: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    """One turn of a multi-turn consultation."""

    role: str  # "user" or "assistant"
    content: str


@dataclass(frozen=True)
class Citation:
    """A citation found in generated text and what it resolved to.

    ``resolved`` is False when no corpus document (or retrieved source) matches; such citations are shown
    to the user as unverified, never dropped.
    """

    text: str  # as written in the answer
    canonical: str = ""  # normalised form, e.g. 中华人民共和国刑法第二百六十四条
    resolved: bool = False
    document_id: str | None = None
    in_retrieved: bool = False
    document_text: str = ""
    note: str = ""  # why it did not resolve (unknown law, ambiguous title...), or what it resolved to
    # The support mark (``citations.marks``): "supported" (resolves, among the evidence, its text supports the
    # sentence citing it), "exists" (exists, not shown to support it: ``mark_reason`` says why), "not_found",
    # "repealed" (``successor`` names the law in force) or "no_corpus" (a jurisdiction the corpus does not
    # cover); "" when only existence was checked.
    mark: str = ""
    mark_reason: str = ""  # not_retrieved | does_not_bear | no_claim | unknown_law | unknown_article | ...
    claim: str = ""  # the words the article was checked against
    support: float | None = None  # the support model's probability
    successor: str = ""  # for a repealed law: its successor (and articles, where known)
    clause: str = ""  # the article's clause the support model names, verbatim: the supporting one, or the closest
    clause_reason: str = ""  # in plain words, why that clause is not taken as support ("" when supported)
    # the currency mark beside the support mark (``citecheck.currency.currency_to_dict``: status current, amended,
    # renumbered, repealed, not_in_force or unknown, as of the day the answer speaks of); None when not read
    currency: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Step:
    """One step of an agent's trajectory: what it decided, with what input, and what came back."""

    agent: str
    action: str
    input: Any = None
    output: Any = None
    seconds: float = 0.0
    tokens: int = 0
    error: str | None = None


@dataclass(frozen=True)
class Usage:
    """LLM calls, tokens and seconds of a run: the one accounting type. Add two with ``+``."""

    calls: int = 0
    cached_calls: int = 0  # answered from the call cache
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0  # wall time spent in calls (cache lookups included)
    saved_seconds: float = 0.0  # model time the cache hits would have cost

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(self.calls + other.calls, self.cached_calls + other.cached_calls,
                     self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens,
                     self.seconds + other.seconds, self.saved_seconds + other.saved_seconds)

    def __sub__(self, other: "Usage") -> "Usage":
        """What was spent since ``other`` (an earlier reading of the same counter)."""
        return Usage(self.calls - other.calls, self.cached_calls - other.cached_calls,
                     self.prompt_tokens - other.prompt_tokens, self.completion_tokens - other.completion_tokens,
                     self.seconds - other.seconds, self.saved_seconds - other.saved_seconds)

    @classmethod
    def of(cls, result: Any, seconds: float | None = None) -> "Usage":
        """The usage of one chat result (``llm.base.ChatResult``)."""
        cached = bool(getattr(result, "cached", False))
        secs = float(seconds if seconds is not None else getattr(result, "seconds", 0.0) or 0.0)
        saved = float((getattr(result, "timings", None) or {}).get("original_seconds", 0.0)) if cached else 0.0
        return cls(calls=1, cached_calls=int(cached), prompt_tokens=int(getattr(result, "prompt_tokens", 0) or 0),
                   completion_tokens=int(getattr(result, "completion_tokens", 0) or 0), seconds=secs,
                   saved_seconds=saved)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "seconds": round(self.seconds, 3), "saved_seconds": round(self.saved_seconds, 3),
                "total_tokens": self.total_tokens}


@dataclass(frozen=True)
class Response:
    """The shape every answer-like result shares: the question, the text, its checked citations, the sources
    it was grounded on, the trajectory, LLM usage and timings. Capability results (``Answer``, ``QAResult``,
    ``DraftResult``, ...) extend it with their own fields; the CLI and the HTTP app print and serialise the
    shared part with the same functions (``legalrag.serialize``)."""

    question: str = ""
    text: str = ""
    citations: tuple[Citation, ...] = ()
    sources: tuple[Hit, ...] = ()
    steps: tuple[Step, ...] = ()
    usage: Usage = field(default_factory=Usage)
    timings: Mapping[str, float] = field(default_factory=dict)

    @property
    def unresolved(self) -> tuple[Citation, ...]:
        return tuple(c for c in self.citations if not c.resolved)

    @property
    def llm_calls(self) -> int:
        return self.usage.calls

    @property
    def tokens(self) -> int:
        return self.usage.total_tokens

    @property
    def seconds(self) -> float:
        """Wall seconds of the whole run (``timings["total_s"]``, the one key every result gives it)."""
        return float(self.timings.get("total_s", 0.0))


@dataclass(frozen=True)
class Quoted:
    """One article of an answer's legal basis: its id, its name as the corpus names it, and its decisive clause
    quoted verbatim (``spans``: the ``[start, end)`` offsets of each quoted piece in the article's text; the
    pieces are joined with ``…`` in ``text``). ``probability``: the selector's, None on the unselected path;
    ``role``: ``decisive`` (selected), ``limitation`` (the limitation-period article of a claim) or ``related``
    (listed by an honest fallback)."""

    document_id: str
    citation: str
    text: str
    spans: tuple[tuple[int, int], ...] = ()
    probability: float | None = None
    role: str = "decisive"
    exceptions: int = 0


@dataclass(frozen=True)
class Answer(Response):
    """A generated answer (``ask``, ``chat``) grounded on retrieved hits (``sources``). ``basis``: the quoted
    legal basis printed at its head (not generated); ``fallback``: why it is the honest fallback (the most
    relevant articles and what to check, no conclusion), empty otherwise; ``not_from_law``: each period,
    amount or deadline the answer states that no quoted clause gives (marked in the text too)."""

    basis: tuple[Quoted, ...] = ()
    fallback: str = ""
    not_from_law: tuple[str, ...] = ()

    @property
    def hits(self) -> tuple[Hit, ...]:
        return self.sources


# -- how an answer is built (read by the CLI's help without importing the answer engine) ----------------

# prompt tokens of evidence. Chosen by the evidence-budget curve (bench/results/evidence-curve.json): the smallest
# budget at which no answer metric of the 1.5B fell below the largest budget's; it halves the first-token time
DEFAULT_EVIDENCE_TOKENS = 200
STYLES = {"guided": "answer", "brief": "answer_brief"}


@dataclass(frozen=True)
class AnswerSettings:
    """How an answer is built. ``evidence_tokens=None`` gives whole articles cut at ``max_article_chars``;
    ``style`` is ``guided`` (conclusion, legal basis with the decisive clause, what to do, when to see a
    lawyer) or ``brief`` (conclusion and reasons)."""

    k: int = 6
    evidence_tokens: int | None = DEFAULT_EVIDENCE_TOKENS
    max_article_chars: int = 600
    max_tokens: int = 512
    history_chars: int = 1500
    temperature: float = 0.0
    seed: int | None = 0
    style: str = "guided"
    select: bool = True  # the decisive-article selector chooses the basis (False: the retrieval order)
    candidates: int = 30  # articles retrieved for the selector to choose from
    basis_articles: int = 3  # the most articles a legal basis quotes
    time_cap_s: float = 90.0  # generation stops after this many seconds (said in the answer)

    def __post_init__(self) -> None:
        if self.k < 1:
            raise InputError(f"k must be at least 1, got {self.k}", field="k")
        if self.evidence_tokens is not None and self.evidence_tokens < 1:
            raise InputError(f"evidence_tokens must be a positive number of tokens (or None for whole articles), "
                             f"got {self.evidence_tokens}", field="evidence_tokens")
        if self.max_tokens < 1:
            raise InputError(f"max_tokens must be positive, got {self.max_tokens}", field="max_tokens")
        if self.time_cap_s <= 0:
            raise InputError(f"time_cap_s must be a positive number of seconds, got {self.time_cap_s}",
                             field="time_cap_s")
        if not 1 <= self.basis_articles <= 3:
            raise InputError(f"basis_articles must be 1, 2 or 3, got {self.basis_articles}", field="basis_articles")
        if self.candidates < 1:
            raise InputError(f"candidates must be at least 1, got {self.candidates}", field="candidates")
        if self.style not in STYLES:
            raise InputError(f"unknown answer style {self.style!r}; choose {' or '.join(STYLES)}", field="style")

    def but(self, **changes: Any) -> "AnswerSettings":
        """These settings with ``changes`` (None values ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


DEFAULTS = AnswerSettings()
