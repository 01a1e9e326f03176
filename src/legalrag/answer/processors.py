"""Multi-turn consultations: turn a conversation into the query retrieval should run for the last turn.

Processors (the LexRAG conversation strategies), each ``processor(turns) -> str``:

- ``last_question``: the last user turn alone (cheap; loses context such as "and what if he refuses?");
- ``all_questions``: every user turn, oldest first (keeps the thread of questions, drops the answers);
- ``full_context``: every turn, user and assistant, labelled (most context, longest query);
- ``LLMRewrite(llm)``: the model rewrites the last question into a standalone one (prompt template
  ``conversation_rewrite_<lang>``); an empty or failed rewrite falls back to ``all_questions``;
- ``ContextFusion`` (``fused``): no LLM; one search for the last question and one for each earlier turn, fused
  with decaying weights, with the earlier turns' laws as a prior (``retrieve_turn`` runs any processor);
- ``FollowUp`` (``carry``, :mod:`legalrag.answer.carry`): no LLM; ``fused`` plus the last question with its context
  and the articles the consultation has established (retrieved or cited earlier), carried at full weight while a
  follow-up detector says the topic holds and at a low weight when the question moves on;
- ``Auto`` (``auto``): no LLM; ``carry`` for an elliptical follow-up (it names no legal matter of its own and
  refers back, or is short: :func:`legalrag.answer.carry.elliptical`), ``fused`` for one that raises a point of its
  own (a new party, claim or procedural step).

``make_processor(name, llm=None)`` builds one by name, as the CLI does. ``Consultation`` holds a multi-turn
consultation: each question is turned into a query by the processor, retrieved, and answered from the
retrieved articles with every citation checked against the corpus (unresolved ones are kept and flagged).
As in ``legalrag ask``, each article enters the prompt cut to the clauses that match the query, within an
evidence budget (``evidence_tokens``, :mod:`legalrag.answer.evidence`); the citation check reads the whole articles.
"""

from __future__ import annotations

import enum
from typing import Any, Callable, Sequence

from legalrag.errors import InputError
from legalrag.llm.base import LLM, ChatRequest
from legalrag.answer.prompt import check_turns as _check
from legalrag.answer.prompt import full_context
from legalrag.answer.carry import SearchCache, fuse_turns
from legalrag.types import Hit, Search, Turn, Usage

Processor = Callable[[Sequence[Turn]], str]


class ProcessorName(str, enum.Enum):
    """How a consultation's dialogue becomes a search query each turn."""

    LAST = "last"  # the last question only
    ALL_QUESTIONS = "all_questions"  # every user question so far
    FULL_CONTEXT = "full_context"  # the whole dialogue
    REWRITE = "rewrite"  # the LLM rewrites the dialogue into one standalone question
    FUSED = "fused"  # one search per earlier turn, fused with decaying weights and a prior for their laws
    CARRY = "carry"  # fused, plus the articles the consultation established, carried while the topic holds
    AUTO = "auto"  # carry when the follow-up is elliptical (names no legal matter of its own), fused otherwise


PROCESSORS = tuple(p.value for p in ProcessorName)
def _user_turns(turns: Sequence[Turn]) -> list[str]:
    return [" ".join(t.content.split()) for t in turns if t.role == "user" and t.content.strip()]


def last_question(turns: Sequence[Turn]) -> str:
    return _user_turns(_check(turns))[-1]


def all_questions(turns: Sequence[Turn]) -> str:
    return " ".join(_user_turns(_check(turns)))


class LLMRewrite:
    """Rewrite the last question into a standalone question with the LLM."""

    name = "rewrite"

    def __init__(self, llm: LLM, lang: str = "zh", max_tokens: int = 128, temperature: float = 0.0,
                 max_history_chars: int = 1500):
        if lang not in ("zh", "en"):
            raise InputError(f"lang must be 'zh' or 'en', got {lang!r}")
        self.llm, self.lang, self.max_tokens, self.temperature = llm, lang, max_tokens, temperature
        self.max_history_chars = max_history_chars
        self.last_error: str | None = None
        self.last_usage: Usage | None = None
        self.tokens = 0

    def __call__(self, turns: Sequence[Turn]) -> str:
        from legalrag.prompts import render_prompt

        turns = _check(turns)
        question = last_question(turns)
        last_user = max(i for i, t in enumerate(turns) if t.role == "user" and t.content.strip())
        history = turns[:last_user]
        self.last_error = None
        self.last_usage: Usage | None = None
        if not history:
            return question  # nothing to resolve
        messages = render_prompt(f"conversation_rewrite_{self.lang}", question=question,
                                   history=full_context(history, self.lang, self.max_history_chars))
        result = self.llm.chat(ChatRequest(messages=tuple(messages), max_tokens=self.max_tokens,
                                           temperature=self.temperature))
        self.tokens += result.prompt_tokens + result.completion_tokens
        self.last_usage = Usage.of(result)
        text = " ".join(result.text.strip().strip('"“”').split())
        for prefix in ("改写后的独立问题：", "改写后的问题：", "Standalone question:"):
            text = text.removeprefix(prefix).strip()
        if not text:
            self.last_error = "the model returned an empty rewrite; used all questions instead"
            return all_questions(turns)
        return text


def make_processor(name: str, llm: LLM | None = None, lang: str = "zh", **options: Any) -> Processor:
    """The processor called ``name``; ``options`` go to :class:`ContextFusion` for ``fused`` and to
    :class:`legalrag.answer.carry.FollowUp` for ``carry`` (e.g. ``cited``: answer text -> the documents it cites)."""
    if name == "fused":
        options.pop("cited", None)
        return ContextFusion(**options)
    if name == "carry":
        from legalrag.answer.carry import FollowUp

        return FollowUp(**options)
    if name == "auto":
        return Auto(**options)
    if name in ("last", "last_question"):  # last_question: the LexRAG name
        return last_question
    if name == "all_questions":
        return all_questions
    if name == "full_context":
        return lambda turns: full_context(turns, lang)
    if name == "rewrite":
        if llm is None:
            raise InputError("the 'rewrite' processor needs an LLM")
        return LLMRewrite(llm, lang=lang)
    raise InputError(f"unknown conversation processor {name!r}; choose one of {', '.join(PROCESSORS)}")



# -- fused: one search per turn ------------------------------------------------------------------------------
# Later consultation turns lean on earlier ones ("那利息呢？"). Instead of one query string, ContextFusion searches
# once for the last question (weight 1), once for each earlier question (question_decay ** j for the question j
# turns back) and once for each earlier answer (answer_weight * question_decay ** (j - 1)), and fuses the ranked
# lists by weighted reciprocal rank (score = sum of weight / (rrf_k + rank)). The earlier turns' top law_top hits
# then vote, with their weights, for the laws the consultation is about; each fused document's score is
# multiplied by 1 + law_prior * the share of its law, which keeps a follow-up inside the topic without letting an
# old question outrank the new one (the drift an LLM rewrite showed by carrying an old topic into a new
# question). It works with any search function search(query, k) -> hits (every index component, pipeline or
# reranker) and remembers the lists of the texts it searched, so in a live consultation a turn costs the
# search of the new question and of the last answer. The defaults were chosen by cross-validation over
# dialogues on the 100 invented turns of bench/data/consultations (bench/consultation/bench_consultation_query.py).



def _questions_answers(turns: Sequence[Turn]) -> tuple[list[str], list[str]]:
    """(user questions, assistant answers), oldest first, whitespace collapsed, empty ones dropped."""
    turns = _check(turns)
    questions = _user_turns(turns)
    answers = [" ".join(t.content.split()) for t in turns if t.role == "assistant" and t.content.strip()]
    return questions, answers


class ContextFusion:
    """Weighted reciprocal-rank fusion of one search per turn, with a prior for the earlier turns' laws."""

    name = "fused"

    # Defaults: the weights cross-validation chose on all 100 invented turns with the hybrid retriever
    # (docs/lab/consultation.md); with BM25 alone it chose 0.2 / 0.75 / 16.
    def __init__(self, question_decay: float = 0.2, answer_weight: float = 0.25, law_prior: float = 4.0, *,
                 law_top: int = 5, depth: int = 100, rrf_k: int = 60, max_turns: int = 4, cache_size: int = 512):
        for label, value in (("question_decay", question_decay), ("answer_weight", answer_weight),
                             ("law_prior", law_prior)):
            if value < 0:
                raise InputError(f"{label} must be 0 or more, got {value}")
        for label, value in (("law_top", law_top), ("depth", depth), ("rrf_k", rrf_k), ("max_turns", max_turns)):
            if value < 1:
                raise InputError(f"{label} must be at least 1, got {value}")
        self.question_decay, self.answer_weight, self.law_prior = question_decay, answer_weight, law_prior
        self.law_top, self.depth, self.rrf_k, self.max_turns = law_top, depth, rrf_k, max_turns
        self._cache = SearchCache(cache_size)  # (text, depth) -> hits
        self.searches = 0  # searches actually run (the rest came from the cache)

    def params(self) -> dict[str, Any]:
        return {"question_decay": self.question_decay, "answer_weight": self.answer_weight,
                "law_prior": self.law_prior, "law_top": self.law_top, "depth": self.depth, "rrf_k": self.rrf_k,
                "max_turns": self.max_turns}

    def __call__(self, turns: Sequence[Turn]) -> str:
        return " ".join(_questions_answers(turns)[0])

    def queries(self, turns: Sequence[Turn]) -> list[tuple[str, float, bool]]:
        """(text, weight, is the last question) for each search; earlier turns beyond ``max_turns`` are dropped."""
        questions, answers = _questions_answers(turns)
        out = [(questions[-1], 1.0, True)]
        for j, q in enumerate(reversed(questions[:-1][-self.max_turns:]), 1):
            out.append((q, self.question_decay ** j, False))
        for j, a in enumerate(reversed(answers[-self.max_turns:]), 1):
            out.append((a, self.answer_weight * self.question_decay ** (j - 1), False))
        return [x for x in out if x[1] > 0]

    def _search(self, search: Search, text: str) -> list[Hit]:
        hits = self._cache.get(search, (text, self.depth))
        if hits is None:
            hits = list(search(text, self.depth))
            self.searches += 1
            self._cache.put(search, (text, self.depth), hits)
        return hits

    def retrieve(self, search: Search, turns: Sequence[Turn], k: int = 10) -> list[Hit]:
        """The fused top ``k`` for the last question of ``turns``."""
        runs = [(self._search(search, text), weight, last) for text, weight, last in self.queries(turns)]
        return fuse_turns(runs, k, rrf_k=self.rrf_k, law_prior=self.law_prior, law_top=self.law_top)


class Auto:
    """``auto``: each follow-up is searched by ``carry`` when it is elliptical and by ``fused`` when it raises a
    point of its own (:func:`legalrag.answer.carry.elliptical`, a rule on the question's own words, not on how
    any data set's follow-ups were worded). A first question is searched alone, as both do. :attr:`last_trace`
    says which was used and why. ``short``: the rule's threshold; ``carry`` / ``fused``: options of each."""

    name = "auto"

    def __init__(self, *, short: int = 6, cited: Any = None, carry: dict[str, Any] | None = None,
                 fused: dict[str, Any] | None = None):
        from legalrag.answer.carry import FollowUp, FollowUpTrace, elliptical

        elliptical("", short=short)  # checks short
        self.short = short
        self.carry = FollowUp(cited=cited, **(carry or {}))
        self.fused = ContextFusion(**(fused or {}))
        self._trace, self._elliptical = FollowUpTrace, elliptical
        self.last_trace = FollowUpTrace()
        self.last_choice = ""

    @property
    def searches(self) -> int:
        return self.carry.searches + self.fused.searches

    @property
    def depth(self) -> int:  # how deep each text is searched (a benchmark searches each text once, this deep)
        return max(self.carry.depth, self.fused.depth)

    def params(self) -> dict[str, Any]:
        return {"short": self.short, "carry": self.carry.params(), "fused": self.fused.params()}

    def choose(self, turns: Sequence[Turn]) -> tuple[str, str]:
        """(``carry`` or ``fused``, why) for the last question of ``turns``."""
        questions, _ = _questions_answers(turns)
        if len(questions) < 2:
            return "fused", "the first question: searched alone"
        lean, why = self._elliptical(questions[-1], short=self.short)
        return ("carry" if lean else "fused"), why

    def __call__(self, turns: Sequence[Turn]) -> str:
        return (self.carry if self.choose(turns)[0] == "carry" else self.fused)(turns)

    def queries(self, turns: Sequence[Turn]) -> list[tuple[str, float, bool]]:
        """Every text either processor searches for ``turns`` (``carry``'s recompute earlier turns too)."""
        out = {q[0]: q for q in self.carry.queries(turns)}
        for q in self.fused.queries(turns):
            out.setdefault(q[0], q)
        return list(out.values())

    def retrieve(self, search: Search, turns: Sequence[Turn], k: int = 10) -> list[Hit]:
        choice, why = self.choose(turns)
        self.last_choice = choice
        if choice == "carry":
            hits = self.carry.retrieve(search, turns, k)
            t = self.carry.last_trace
            self.last_trace = self._trace(t.searched, t.carried, t.established, t.same_issue,
                                          f"carried: {why}" + (f"; {t.reason}" if t.reason else ""))
            return hits
        hits = self.fused.retrieve(search, turns, k)
        question = _questions_answers(turns)[0][-1]
        first = len(_questions_answers(turns)[0]) < 2
        self.last_trace = self._trace((question,)) if first else self._trace(
            (question,), same_issue=False, reason=f"fused, nothing carried: {why}")
        return hits


def retrieve_turn(processor: Callable, search: Search, turns: Sequence[Turn], k: int, *, query: str | None = None,
                  prepare: Callable[[str], str] | None = None) -> tuple[str, list[Hit]]:
    """(query text, hits) for the last question of ``turns``, as ``chat`` retrieves and the consultation benchmark
    measures: a processor that retrieves by itself (``fused``, ``carry``) does so through ``search``; any other
    one makes a query string that ``search`` runs (``prepare(text)`` first, when given: the answer engine's
    search text). ``query``: the processor's text for ``turns`` when the caller has made it already."""
    query = processor(turns) if query is None else query
    retrieve = getattr(processor, "retrieve", None)
    if retrieve is not None:
        return query, list(retrieve(search, turns, k))
    return query, list(search(prepare(query) if prepare is not None else query, k))


def named_processor(function: Callable, name: str) -> Callable:
    """A plain processor function under the name a user chose (``last`` for ``last_question``)."""
    def processor(turns: Sequence[Turn]) -> str:
        return function(turns)

    processor.name = name  # type: ignore[attr-defined]
    return processor


def turn_trace(processor: Callable, turns: Sequence[Turn], query: str, hits: Sequence[Hit] | None) -> dict[str, Any]:
    """What a turn searched and carried, as the CLI, ``POST /consult`` and the web chat show it: ``searched``
    (the query texts of the new question; ``fused`` also searches each earlier turn, counted in
    ``earlier_searches``), ``carried`` (established articles of earlier turns kept in this turn's results, with
    their titles) and the follow-up detector's decision (``same_issue``, ``reason``; ``None`` without one)."""
    trace = getattr(processor, "last_trace", None)
    titles = {h.id: h.document.title or h.id for h in hits or ()}
    if trace is not None and hasattr(trace, "to_dict") and trace.searched:
        return {**trace.to_dict(titles), "earlier_searches": max(len(processor.queries(turns)) - len(trace.searched), 0)}
    if hasattr(processor, "queries") and hits is not None:  # fused: one search per turn
        texts = [text for text, _, _ in processor.queries(turns)]
        return {"searched": texts[:1], "carried": [], "same_issue": None, "reason": "",
                "earlier_searches": len(texts) - 1}
    return {"searched": [query], "carried": [], "same_issue": None, "reason": "", "earlier_searches": 0}


# Chat's, the web chat's and /consult's default: best on the development parts (the STARD-grounded and the topic-shift
# consultations, pooled) with every retriever; not the best at turn 5 on LexRAG's published consultations, where
# `fused` and `auto` lead with the dense retriever (docs/lab/consultation-sets.md).
DEFAULT_PROCESSOR = "carry"
