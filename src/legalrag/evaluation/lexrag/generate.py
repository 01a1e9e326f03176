"""Response generation in LexRAG's three settings, with the dialogue history in the prompt.

- ``zero_shot``: no articles; the model answers from the dialogue alone.
- ``retriever``: the top-k articles a search function returns for the processed query.
- ``reference``: the gold articles (resolved to corpus documents; a turn whose gold did not resolve falls back
  to the ``article_context`` text the data carries, and is marked so).

Any ``LLM`` generates (the embedded model, an endpoint); wrap it in ``CachedLLM`` and an interrupted run
resumes from the call cache: every finished call is answered from the cache, only the rest run again.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from legalrag.evaluation.lexrag.data import ConsultTurn
from legalrag.errors import InputError
from legalrag.llm.base import LLM
from legalrag.types import Document, Hit, Response


class Setting(str, enum.Enum):
    ZERO_SHOT = "zero_shot"
    RETRIEVER = "retriever"
    REFERENCE = "reference"


def call_seconds(result, wall: float) -> float:
    """The model time of a chat call: the original time for a call-cache hit, else its own."""
    if getattr(result, "cached", False):
        return float((getattr(result, "timings", None) or {}).get("original_seconds", wall))
    return float(getattr(result, "seconds", 0.0) or wall)


def parse_settings(names: Iterable[str]) -> list[Setting]:
    out = []
    for name in names:
        try:
            out.append(Setting(name))
        except ValueError:
            raise InputError(f"unknown setting {name!r}; choose from {', '.join(s.value for s in Setting)}") from None
    return out


@dataclass(frozen=True)
class ConsultationResponse(Response):
    """A generated answer to one consultation turn in one setting."""

    turn_id: str = ""
    turn: int = 0
    setting: str = ""
    article_ids: tuple[str, ...] = ()  # the articles in the prompt
    note: str = ""  # e.g. gold fell back to article_context


def prompt_history(history: Sequence[Any], max_chars: int = 1500) -> str:
    from legalrag.answer.processors import full_context

    return full_context(history, "zh", max_chars) if history else "（无，这是第一个问题）"


def _settings(k: int | None, max_tokens: int | None, history_chars: int | None, article_chars: int | None,
              evidence_tokens: int | None | object) -> Any:
    """The answer engine's defaults with what the caller set; ``article_chars`` alone means whole articles cut
    at that many characters (the LexRAG setup), as ``evidence_tokens=None`` does."""
    from dataclasses import replace

    from legalrag.answer.engine import DEFAULTS

    s = DEFAULTS.but(k=k, max_tokens=max_tokens, history_chars=history_chars, max_article_chars=article_chars)
    if evidence_tokens is not ...:
        s = replace(s, evidence_tokens=evidence_tokens)
    elif article_chars is not None:
        s = replace(s, evidence_tokens=None)
    return s


def generate_answer(llm: LLM, turn: ConsultTurn, setting: Setting, documents: Sequence[Document] = (), *,
                    context: str = "", query: str = "", engine: Any = None, answer_settings: Any = None,
                    seconds_before: Mapping[str, float] | None = None, note: str = "",
                    support: Any = None) -> ConsultationResponse:
    """One answer by the answer engine (:mod:`legalrag.answer.engine`) with the turn's history, the question and the
    articles (none in zero-shot; ``context`` is raw article text used when there are no documents). Evidence
    is selected against ``query`` (default: the question)."""
    from legalrag.answer.engine import DEFAULTS, engine_for

    if setting is not Setting.ZERO_SHOT and not documents and not context:
        raise InputError(f"turn {turn.id}: the {setting.value} setting needs articles, and none were given")
    if setting is Setting.ZERO_SHOT:
        documents = ()
    elif not documents:  # the gold's own text, when the gold did not resolve to a corpus article
        documents = (Document(id=f"{turn.id}:article_context", text=context, title="article_context"),)
    hits = [Hit(document=d, score=0.0, rank=i) for i, d in enumerate(documents, 1)]
    if engine is None:
        engine = engine_for(llm, documents=documents, lang="zh", settings=answer_settings or DEFAULTS, support=support)
    answer = engine.answer(turn.question, history=turn.history, hits=hits, query=query or None,
                           settings=answer_settings)
    t = answer.timings
    timings = {**t, **(seconds_before or {}),  # the benchmark's own retrieval time, not the engine's (hits given)
               "model_seconds": answer.usage.saved_seconds if answer.usage.cached_calls else answer.usage.seconds}
    return ConsultationResponse(question=turn.question, text=answer.text, citations=answer.citations,
                                sources=answer.sources, steps=answer.steps, usage=answer.usage, timings=timings,
                                turn_id=turn.id, turn=turn.turn, setting=setting.value,
                                article_ids=tuple(h.id for h in answer.sources if not h.id.endswith(":article_context")),
                                note=note)


def run_generation(turns: Sequence[ConsultTurn], llm: LLM, settings: Sequence[Setting], *,
                   documents: Mapping[str, Document] | Callable[[str], Document] | None = None,
                   search: Callable[[str, int], list[Hit]] | None = None, processor: Callable | None = None,
                   k: int | None = None, max_tokens: int | None = None, history_chars: int | None = None,
                   article_chars: int | None = None, evidence_tokens: int | None | object = ...,
                   resolver: Any = None, style: str | None = None, support: Any = None,
                   progress: bool = False) -> list[ConsultationResponse]:
    """Every turn in every setting, each answered by one answer engine (its defaults unless given).
    ``search`` (with ``processor`` to build the query, default the last question) serves the retriever setting;
    ``documents`` (id -> Document) serves the reference setting; ``resolver`` checks the answers' citations
    (default: one over ``documents``)."""
    from legalrag.answer.processors import last_question, retrieve_turn
    from legalrag.answer.engine import engine_for

    answer_settings = _settings(k, max_tokens, history_chars, article_chars, evidence_tokens).but(style=style)
    settings = list(settings)
    if Setting.RETRIEVER in settings and search is None:
        raise InputError("the retriever setting needs a search function (an index)")
    get = documents.__getitem__ if isinstance(documents, Mapping) else documents
    if Setting.REFERENCE in settings and get is None:
        raise InputError("the reference setting needs the corpus documents to look the gold articles up")
    pool = list(documents.values()) if isinstance(documents, Mapping) else []
    engine = engine_for(llm, resolver=resolver, documents=pool, lang="zh", settings=answer_settings, support=support)
    processor = processor or last_question
    jobs = [(t, s) for t in turns for s in settings]
    it: Any = jobs
    if progress:
        from tqdm import tqdm

        it = tqdm(jobs, desc="generation", unit="answer")
    out = []
    for turn, setting in it:
        docs: list[Document] = []
        before: dict[str, float] = {}
        context, note, query = "", "", ""
        if setting is Setting.RETRIEVER:
            t0 = time.perf_counter()
            query = processor(turn.turns)
            t1 = time.perf_counter()
            _, hits = retrieve_turn(processor, search, turn.turns, answer_settings.k, query=query)  # as chat does
            docs = [h.document for h in hits]
            before = {"processor_s": t1 - t0, "retrieval_s": time.perf_counter() - t1}
        elif setting is Setting.REFERENCE:
            docs = [get(i) for i in turn.gold_ids]
            query = processor(turn.turns) if answer_settings.evidence_tokens is not None else ""
            if turn.unresolved:
                note = f"gold not in the corpus: {', '.join(turn.unresolved)}"
            if not docs:
                context = turn.article_context
                if not context:
                    raise InputError(f"turn {turn.id}: no gold article resolved and no article_context to fall "
                                     f"back on; the reference setting cannot run for it")
                note += "; used article_context"
        out.append(generate_answer(llm, turn, setting, docs, context=context, query=query, engine=engine,
                                   seconds_before=before, note=note))
    return out


def response_row(r: ConsultationResponse) -> dict[str, Any]:
    return {"turn_id": r.turn_id, "turn": r.turn, "setting": r.setting, "question": r.question,
            "response": r.text, "article_ids": list(r.article_ids), "note": r.note, "timings": dict(r.timings),
            "cited": [c.document_id for c in r.citations if c.resolved],
            "usage": r.usage.to_dict()}
