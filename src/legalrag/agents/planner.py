"""The planner loop (LegalMALR multi-agent retrieval): a bounded loop that picks a rewriting agent per round.

Each round the planner sees the original query, its earlier decisions, the reformulations so far and the
titles of the pooled articles, then picks one agent or ``exit`` (JSON: action + reason). Every reformulation
is retrieved (``first_stage_k`` from the first-stage retriever, cut to ``pool_k`` by an optional light
reranker) and merged into a de-duplicated pool. Bounds and rules:

- at most ``max_rounds`` agent rounds, then a forced exit;
- an exit before any reformulation was retrieved is refused and counted; the round goes to the next unused
  agent in ``fallback_order``;
- a planner reply that is not valid JSON or names an unknown agent is repaired (aliases, fuzzy matching) or
  re-asked up to ``retries`` times; a final failure falls back like a refused exit; all of it is recorded;
- coverage stop: when a round adds fewer than ``min_new_fraction`` new articles to the pool, the loop ends;
- a query in another language than the corpus is refused (``on_language_mismatch="refuse"``) or rewritten
  into the corpus language (``"rewrite"``, the default), and the step says so.

Fused mode (``fused=True``, one call per round instead of two or three): the planner's reply also carries the
chosen agent's queries (``{"action", "reason", "queries"}``, prompt ``mas_planner_fused_*``; see
``agents/fused.py``), capped at the agent's ``MAX_QUERIES``. Its prompt gives the pool's size, not its titles
(shown titles, a 1.5B model copied them as queries). The bounds and rules above hold; where the loop
falls back (an unusable reply, a refused exit) the fallback agent's own rewriter writes its queries, as in
the two-call mode. A reply that names an agent but never gives usable queries counts as that agent's failed
rewrite. The trajectory has the same steps (a planner step whose record is the fused call, then the agent's
``rewrite`` step with the queries and no calls of its own).

The final ranking fuses every retrieved list (the original query's first) by reciprocal rank; a
``final_reranker`` (e.g. the listwise LLM reranker) may reorder the pool. ``MASRetriever`` wraps the loop as
a Retriever. The whole trajectory is returned as ``Step``s and can be written as JSONL.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from legalrag.agents.actions import ACTIONS, EXIT, PLANNER_SCHEMA, normalise_action, parse_decision
from legalrag.agents.fused import FUSED_SCHEMA, parse_fused
from legalrag.agents.rewrite import LANGUAGE_RULES, Agent, rewrite
from legalrag.errors import InputError, StructuredOutputError
from legalrag.io import write_jsonl
from legalrag.lang import detect_language
from legalrag.llm.base import LLM
from legalrag.llm.structured import CallRecord, structured_call
from legalrag.prompts import render_prompt
from legalrag.serialize import step_to_dict
from legalrag.rerank.base import Reranker
from legalrag.retrieval.base import DocumentFilter, Retriever
from legalrag.types import Hit, Response, Step, Usage

__all__ = ["ACTIONS", "EXIT", "PLANNER_SCHEMA", "AgentSearchResult", "MASRetriever", "PlannerConfig", "PlannerLoop",
           "detect_language", "normalise_action", "parse_decision", "write_trajectory"]

@dataclass(frozen=True)
class PlannerConfig:
    lang: str = "zh"  # corpus language; prompts use it
    max_rounds: int = 4
    first_stage_k: int = 30
    pool_k: int = 10
    include_original: bool = True  # retrieve the original query too (round 0)
    planner_temperature: float = 0.6
    rewriter_temperature: float = 0.8
    planner_max_tokens: int = 96
    rewriter_max_tokens: int = 160
    retries: int = 2
    min_new_fraction: float = 0.1  # coverage stop: a round adding fewer new articles than this share ends the loop
    max_pool_titles: int = 30
    rrf_k: int = 60
    final_rerank_depth: int = 30
    on_language_mismatch: str = "rewrite"  # or "refuse"
    fallback_order: tuple[str, ...] = ("single_element", "supplementary_element", "multi_element",
                                       "supportive_law", "semantic_abnormality")
    seed: int | None = 0  # fixed by default: runs are reproducible and the call cache can serve reruns
    # Run these agents in order without consulting the planner (e.g. ("single_element",) = one-round rewriting).
    script: tuple[str, ...] | None = None
    fused: bool = False  # one call per round: the planner's reply carries the agent's queries
    fused_max_tokens: int = 256

    def __post_init__(self) -> None:
        if self.lang not in ("zh", "en"):
            raise InputError(f"lang must be 'zh' or 'en', got {self.lang!r}")
        if not 1 <= self.max_rounds <= 10:
            raise InputError(f"max_rounds must be between 1 and 10, got {self.max_rounds}")
        if not 1 <= self.pool_k <= self.first_stage_k:
            raise InputError(f"need 1 <= pool_k ({self.pool_k}) <= first_stage_k ({self.first_stage_k})")
        if self.on_language_mismatch not in ("rewrite", "refuse"):
            raise InputError("on_language_mismatch must be 'rewrite' or 'refuse'")
        for name in (*self.fallback_order, *(self.script or ())):
            try:
                Agent(name)
            except ValueError:
                raise InputError(f"unknown agent {name!r}; choose from {[a.value for a in Agent]}") from None


@dataclass(frozen=True)
class AgentSearchResult(Response):
    """The loop's final ranking (``sources``) for ``question``, with its pool, trajectory and usage."""

    pool: tuple[Hit, ...] = ()  # every pooled article, fused order
    reformulations: tuple[str, ...] = ()
    retrieval_calls: int = 0
    rounds: int = 0
    refused_exits: int = 0
    repairs: int = 0
    failures: int = 0
    stop_reason: str = ""

    @property
    def query(self) -> str:
        return self.question

    @property
    def hits(self) -> tuple[Hit, ...]:
        return self.sources

    def summary(self) -> dict[str, Any]:
        return {"query": self.query, "rounds": self.rounds, "pool_size": len(self.pool),
                "retrieval_calls": self.retrieval_calls, "llm_calls": self.llm_calls, "tokens": self.tokens,
                "seconds": round(self.seconds, 3), "refused_exits": self.refused_exits, "repairs": self.repairs,
                "failures": self.failures, "stop_reason": self.stop_reason,
                "reformulations": list(self.reformulations)}

    def write_trajectory(self, path: str | Path) -> None:
        write_trajectory(path, self.steps, self.summary())


def write_trajectory(path: str | Path, steps: Sequence[Step], summary: dict[str, Any] | None = None) -> None:
    """One JSON object per step (and a final ``{"summary": ...}`` line), written atomically."""
    rows = [step_to_dict(s) for s in steps]
    if summary is not None:
        rows.append({"summary": summary})
    write_jsonl(path, rows)


@dataclass(frozen=True)
class _Decision:
    """A round's decision: ``action`` None = unusable reply; ``queries`` None = the agent's rewriter writes them
    (two-call mode, scripts, fallbacks), a tuple = the fused reply's (empty with ``rewrite_error``)."""

    action: str | None
    reason: str
    record: CallRecord
    queries: tuple[str, ...] | None = None
    rewrite_error: str | None = None


@dataclass
class _State:
    lists: list[list[Hit]] = field(default_factory=list)
    pool: dict[str, Hit] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    reformulations: list[str] = field(default_factory=list)
    used: list[str] = field(default_factory=list)
    retrieval_calls: int = 0
    agent_retrievals: int = 0
    usage: Usage = field(default_factory=Usage)
    refused_exits: int = 0
    repairs: int = 0
    failures: int = 0
    on_step: Callable[[Step], None] | None = None  # sees each step as it is recorded (live progress)

    def add(self, step: Step) -> None:
        self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)

    def count(self, rec: CallRecord) -> None:
        self.usage = self.usage + rec.usage
        self.repairs += len(rec.repairs)


class PlannerLoop:
    """Run the planner loop for one query at a time; collaborators are passed in."""

    def __init__(self, llm: LLM, retriever: Retriever, *, light_reranker: Reranker | None = None,
                 final_reranker: Reranker | None = None, config: PlannerConfig | None = None):
        self.llm, self.retriever = llm, retriever
        self.light_reranker, self.final_reranker = light_reranker, final_reranker
        self.config = config or PlannerConfig()

    # ---- retrieval ----------------------------------------------------------------------------------
    def _retrieve(self, state: _State, text: str, source: str, filter: DocumentFilter | None) -> None:
        cfg = self.config
        start = time.perf_counter()
        error = None
        try:
            hits = self.retriever.retrieve(text, k=cfg.first_stage_k, filter=filter)
            if self.light_reranker is not None and hits:
                hits = self.light_reranker.rerank(text, hits, k=cfg.pool_k)
            hits = list(hits)[: cfg.pool_k]
        except Exception as exc:  # a retrieval failure is an observation, not a crash
            hits, error = [], f"{type(exc).__name__}: {exc}"
        state.retrieval_calls += 1
        before = len(state.pool)
        for h in hits:
            state.pool.setdefault(h.id, h)
        state.lists.append(hits)
        state.add(Step(agent="retriever", action="retrieve", input={"query": text, "source": source},
                                output={"ids": [h.id for h in hits], "new": len(state.pool) - before,
                                        "pool_size": len(state.pool)},
                                seconds=time.perf_counter() - start, error=error))

    # ---- planner ------------------------------------------------------------------------------------
    def _seed(self, state: _State) -> int | None:
        return None if self.config.seed is None else self.config.seed + 101 * len(state.steps)

    def _decide(self, state: _State, query: str) -> _Decision:
        cfg = self.config
        messages = render_prompt(f"mas_planner_{cfg.lang}", **self._planner_context(state, query))
        rec = CallRecord()
        try:  # a planner reply that never parses ends the round as a recorded failure, never the run
            action, reason = structured_call(self.llm, messages, parse_decision, schema=PLANNER_SCHEMA,
                                             temperature=cfg.planner_temperature, max_tokens=cfg.planner_max_tokens,
                                             retries=cfg.retries, seed=self._seed(state), record=rec).value
        except StructuredOutputError:
            action, reason = None, ""
        state.count(rec)
        return _Decision(action, reason, rec)

    def _decide_fused(self, state: _State, query: str, query_lang: str) -> _Decision:
        cfg = self.config
        seed = self._seed(state)
        # The pool's size but not its titles: shown titles, the 1.5B model copied them into its queries.
        messages = render_prompt(f"mas_planner_fused_{cfg.lang}", language_rule=LANGUAGE_RULES[(cfg.lang, query_lang)],
                                 **self._planner_context(state, query, titles=False))
        rec = CallRecord()
        named: list[str] = []

        def parse(value: Any, r: CallRecord):
            return parse_fused(value, r, query=query, named=named)

        try:
            reply = structured_call(self.llm, messages, parse, schema=FUSED_SCHEMA,
                                    temperature=cfg.planner_temperature, max_tokens=cfg.fused_max_tokens,
                                    retries=cfg.retries, seed=seed, record=rec).value
        except StructuredOutputError:
            state.count(rec)
            if named:  # an agent was chosen but never given usable queries: its rewrite failed
                return _Decision(named[-1], "", rec, queries=(), rewrite_error=(
                    f"no usable queries after {rec.attempts} attempts: {'; '.join(rec.errors)}"))
            return _Decision(None, "", rec)
        state.count(rec)
        return _Decision(reply.action, reply.reason, rec, queries=reply.queries)

    def _planner_context(self, state: _State, query: str, titles: bool = True) -> dict[str, Any]:
        """The planner prompts' variables; ``titles=False`` leaves out the pool's titles (and their fusion)."""
        cfg = self.config
        none = "（无）" if cfg.lang == "zh" else "(none)"
        context: dict[str, Any] = dict(
            query=query, decisions="\n".join(f"{i}. {d}" for i, d in enumerate(state.decisions, 1)) or none,
            reformulations="\n".join(f"- {q}" for q in state.reformulations) or none, pool_size=len(state.pool))
        if titles:
            names = [h.document.title or h.id for h in self._fused(state)[: cfg.max_pool_titles]]
            context["pool_titles"] = "\n".join(f"- {t}" for t in names) or none
        return context

    def _fallback(self, state: _State) -> str | None:
        for name in self.config.fallback_order:
            if name not in state.used:
                return name
        return None

    # ---- fusion -------------------------------------------------------------------------------------
    def _fused(self, state: _State) -> list[Hit]:
        scores: dict[str, float] = {}
        for hits in state.lists:
            for h in hits:
                scores[h.id] = scores.get(h.id, 0.0) + 1.0 / (self.config.rrf_k + h.rank)
        order = sorted(scores, key=lambda i: -scores[i])  # stable: first-seen order breaks ties
        return [replace(state.pool[i], score=scores[i], rank=r, retriever="mas") for r, i in enumerate(order, 1)]

    # ---- the loop -----------------------------------------------------------------------------------
    def run(self, query: str, filter: DocumentFilter | None = None,
            on_step: Callable[[Step], None] | None = None) -> AgentSearchResult:
        cfg = self.config
        query = " ".join(str(query).split())
        if not query:
            raise InputError("the query is empty; give a question or a statement of facts")
        t0 = time.perf_counter()
        state = _State(on_step=on_step)
        query_lang = detect_language(query)
        if query_lang != cfg.lang:
            if cfg.on_language_mismatch == "refuse":
                raise InputError(f"the query looks {_LANG_NAMES[query_lang]} but the corpus is "
                                 f"{_LANG_NAMES[cfg.lang]}; ask in {_LANG_NAMES[cfg.lang]} or allow rewriting "
                                 "(on_language_mismatch='rewrite')")
            state.add(Step(agent="planner", action="language", input={"query_lang": query_lang},
                                    output={"corpus_lang": cfg.lang,
                                            "handling": f"reformulations are written in {_LANG_NAMES[cfg.lang]}"}))
        if cfg.include_original:
            self._retrieve(state, query, "original", filter)

        stop_reason = "max_rounds"
        rounds = 0
        script = list(cfg.script or ())
        while rounds < (len(script) if cfg.script is not None else cfg.max_rounds):
            if cfg.script is not None:
                decision = _Decision(script[rounds], "scripted", CallRecord())
            elif cfg.fused:
                decision = self._decide_fused(state, query, query_lang)
            else:
                decision = self._decide(state, query)
            action, reason, rec, queries = decision.action, decision.reason, decision.record, decision.queries
            error = None
            if action is None:
                state.failures += 1
                action = self._fallback(state) if state.agent_retrievals == 0 else EXIT
                error = f"planner reply unusable ({'; '.join(rec.errors)}); fell back to {action!r}"
            elif action == EXIT and state.agent_retrievals == 0:
                state.refused_exits += 1
                fallback = self._fallback(state)
                error = f"exit refused: no reformulation retrieved yet; running {fallback!r} instead"
                action, queries = fallback, None
            output: dict[str, Any] = {"reason": reason, **rec.as_dict()}
            if cfg.fused and cfg.script is None:
                output["fused"] = True
            state.add(Step(agent="planner", action=action or EXIT,
                                    input={"round": rounds + 1, "pool_size": len(state.pool)},
                                    output=output, seconds=rec.usage.seconds,
                                    tokens=rec.usage.total_tokens, error=error))
            if action is None or action == EXIT:
                stop_reason = "planner_exit" if action == EXIT else "agents_exhausted"
                break
            rounds += 1
            state.decisions.append(f"{action}: {reason}" if reason else action)
            state.used.append(action)
            if queries is None:  # the agent's own rewriter writes the queries
                rw = rewrite(self.llm, action, query, lang=cfg.lang, query_lang=query_lang,
                             temperature=cfg.rewriter_temperature, max_tokens=cfg.rewriter_max_tokens,
                             retries=cfg.retries, seed=None if cfg.seed is None else cfg.seed + rounds)
                for r in (rw.record, *rw.extra_records):
                    state.count(r)
                queries, rw_error, analysis = rw.queries, rw.error, rw.analysis
                rw_output, rw_seconds, rw_tokens = rw.record.as_dict(), rw.seconds, rw.tokens
            else:  # written by the fused planner call, whose record is on the planner step
                rw_error, analysis = decision.rewrite_error, None
                rw_output, rw_seconds, rw_tokens = {"fused": True}, 0.0, 0
            if rw_error:
                state.failures += 1
            state.add(Step(agent=action, action="rewrite", input={"query": query},
                                    output={"queries": list(queries), "analysis": analysis, **rw_output},
                                    seconds=rw_seconds, tokens=rw_tokens, error=rw_error))
            before = len(state.pool)
            retrieved = 0
            for q in queries:
                state.reformulations.append(q)
                self._retrieve(state, q, action, filter)
                retrieved += len(state.lists[-1])
                state.agent_retrievals += 1
            new = len(state.pool) - before
            if retrieved and new < cfg.min_new_fraction * retrieved:
                state.add(Step(agent="planner", action="stop",
                                        output={"reason": "coverage", "new": new, "retrieved": retrieved}))
                stop_reason = "coverage"
                break
        else:
            state.add(Step(agent="planner", action=EXIT, output={"reason": "max_rounds"}))

        pool = self._fused(state)
        hits = pool
        if self.final_reranker is not None and pool:
            start = time.perf_counter()
            stats = getattr(self.final_reranker, "stats", None)
            before = stats.usage if stats is not None else Usage()
            head = self.final_reranker.rerank(query, pool[: cfg.final_rerank_depth])
            hits = head + [replace(h, rank=len(head) + i) for i, h in enumerate(pool[cfg.final_rerank_depth:], 1)]
            spent = (stats.usage - before) if stats is not None else Usage()
            state.usage = state.usage + spent
            state.add(Step(agent=getattr(self.final_reranker, "name", "reranker"), action="rerank",
                                    output={"ids": [h.id for h in head], "llm_calls": spent.calls},
                                    seconds=time.perf_counter() - start, tokens=spent.total_tokens))
        return AgentSearchResult(
            question=query, sources=tuple(hits), pool=tuple(pool), steps=tuple(state.steps),
            reformulations=tuple(state.reformulations), retrieval_calls=state.retrieval_calls,
            usage=state.usage, timings={"total_s": time.perf_counter() - t0}, rounds=rounds,
            refused_exits=state.refused_exits, repairs=state.repairs, failures=state.failures,
            stop_reason=stop_reason)


_LANG_NAMES = {"zh": "Chinese", "en": "English"}


class MASRetriever:
    """The planner loop as a Retriever; the last run's result (trajectory included) is kept in ``last``."""

    name = "mas"

    def __init__(self, loop: PlannerLoop):
        self.loop = loop
        self.last: AgentSearchResult | None = None

    def retrieve(self, query: str, k: int = 10, filter: DocumentFilter | None = None) -> list[Hit]:
        self.last = self.loop.run(query, filter=filter)
        return list(self.last.hits[:k])
