"""The consultation: a multi-turn conversation in which each question is turned into a search by a query
processor (:mod:`legalrag.answer.processors`; chat's default is :data:`DEFAULT_PROCESSOR`) and answered by the one
answer engine with the earlier turns as history."""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable, Sequence

from legalrag.answer.processors import (DEFAULT_PROCESSOR, Processor, make_processor, named_processor, retrieve_turn,
                                        turn_trace)
from legalrag.errors import InputError
from legalrag.llm.base import LLM
from legalrag.types import Answer, Document, Hit, Step, Turn, Usage


class Consultation:
    """A multi-turn consultation: each question is turned into a retrieval query by the processor, then answered
    by the one answer engine (:class:`legalrag.answer.engine.AnswerEngine`) with the earlier turns as history.

    ``engine`` may be given ready; otherwise one is built over ``search(query, k) -> hits`` and ``llm`` with
    ``settings`` (default: the engine's defaults; ``k``, ``max_tokens``, ``evidence_tokens`` override them) and
    ``support`` (the support model, the root's ``wiring.make_support_scorer()``; None: the lexical model)."""

    def __init__(self, search: Callable[[str, int], list[Hit]] | None = None, llm: LLM | None = None, *,
                 documents: Iterable[Document] = (), processor: str | Processor = DEFAULT_PROCESSOR,
                 lang: str = "zh", resolver: Any = None, engine: Any = None, settings: Any = None,
                 k: int | None = None, max_tokens: int | None = None, evidence_tokens: int | None | object = ...,
                 support: Any = None):
        from dataclasses import replace

        from legalrag.answer.engine import DEFAULTS, engine_for

        if engine is None:
            if llm is None or search is None:
                raise InputError("a consultation needs a search function and an LLM, or an answer engine")
            settings = (settings or DEFAULTS).but(k=k, max_tokens=max_tokens)
            if evidence_tokens is not ...:
                settings = replace(settings, evidence_tokens=evidence_tokens)
            engine = engine_for(llm, search=search, resolver=resolver, documents=documents, lang=lang,
                                settings=settings, support=support)
        self.engine, self.lang = engine, engine.lang
        llm = engine.llm
        if isinstance(processor, str):
            options = {}
            if processor in ("carry", "auto"):  # the articles earlier answers cite are established too
                from legalrag.answer.carry import cited_documents

                options["cited"] = cited_documents(lambda: self.engine.resolver)
            name, processor = processor, make_processor(processor, llm, self.lang, **options)
            if not hasattr(processor, "name"):
                processor = named_processor(processor, name)
        self.processor = processor
        self.processor_name = getattr(processor, "name", None) or getattr(processor, "__name__", "custom")
        self.turns: list[Turn] = []
        self.last_trace: dict[str, Any] = {}  # what the last turn searched and carried (turn_trace)

    def ask(self, question: str, on_text: Callable[[str], None] | None = None,
            on_query: Callable[[str], None] | None = None,
            on_retrieved: Callable[[str, Sequence[Hit]], None] | None = None) -> Answer:
        """Answer ``question`` in the context of the earlier turns; ``on_text`` receives the answer as it is
        generated, ``on_query`` the retrieval query the processor made, before the search."""
        question = " ".join((question or "").split())
        if not question:
            raise InputError("the question is empty", field="question")
        engine, turns = self.engine, self.turns + [Turn("user", question)]
        t0 = time.perf_counter()
        query = self.processor(turns)
        t1 = time.perf_counter()
        if on_query is not None:
            on_query(query)
        steps = [Step(agent="conversation", action=self.processor_name, input=question, output=query,
                      seconds=t1 - t0, tokens=getattr(self.processor, "tokens", 0))]
        usage = getattr(self.processor, "last_usage", None) or Usage()
        fused = getattr(self.processor, "retrieve", None) is not None  # one search per turn, fused
        searched, t_search = [query], t1

        def prepare(text: str) -> str:  # the engine's own search text: a long paste's end, in the corpus's language
            nonlocal usage, t_search
            text, spent = engine.corpus_query(engine.search_text(question, text), steps)
            usage, searched[0], t_search = usage + spent, text, time.perf_counter()
            return text

        hits = None
        if engine.search is not None:  # the retrieval the consultation benchmark measures (retrieve_turn)
            _, hits = retrieve_turn(self.processor, engine.search, turns, engine.settings.k, query=query,
                                    prepare=prepare)
            steps.append(Step(agent="retriever", action=self.processor_name if fused else "retrieve",
                              input=searched[0], output=[h.id for h in hits], seconds=time.perf_counter() - t_search))
        self.last_trace = turn_trace(self.processor, turns, query, hits if fused else None)
        answer = engine.answer(question, history=self.turns, query=query, hits=hits, on_text=on_text,
                               on_retrieved=on_retrieved, steps_before=tuple(steps), usage_before=usage,
                               searched=not fused, started=t1)
        self.turns = turns + [Turn("assistant", answer.text)]
        return replace_timings(answer, processor_s=t1 - t0)


def replace_timings(answer: Answer, **extra: float) -> Answer:
    """``answer`` with ``extra`` timings added (the whole run's seconds include them)."""
    from dataclasses import replace

    timings = {**answer.timings, **extra}
    timings["total_s"] = answer.timings.get("total_s", 0.0) + sum(extra.values())
    return replace(answer, timings=timings)
