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

from legalrag.consultation.data import ConsultTurn
from legalrag.errors import InputError
from legalrag.llm.base import LLM, ChatRequest
from legalrag.types import Document, Hit, Response, Usage


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


def history_text(history: Sequence[Any], max_chars: int = 1500) -> str:
    from legalrag.conversation import full_context

    return full_context(history, "zh", max_chars) if history else "（无，这是第一个问题）"


def article_text(doc: Document, max_chars: int = 400) -> str:
    from legalrag.citations import citation_label

    text = " ".join(doc.text.split())
    if len(text) > max_chars:
        text = text[:max_chars] + "…"
    return f"{citation_label(doc)}：{text}"


def evidence_text(query: str, docs: Sequence[Document], budget: int) -> str:
    """The articles cut to the clauses that best match ``query`` within ``budget`` tokens, as ``ask`` and a
    consultation put them in the prompt (:mod:`legalrag.evidence`), under the same titles as ``sources_text``."""
    from legalrag.evidence import prompt_evidence

    hits = [Hit(document=d, score=0.0, rank=i) for i, d in enumerate(docs, 1)]
    return prompt_evidence(query, hits, budget=budget, lang="zh", agent="generate")[0]


def sources_text(docs: Sequence[Document], max_chars: int = 400) -> str:
    return "\n".join(f"[{i}] {article_text(d, max_chars)}" for i, d in enumerate(docs, 1))


def generate_answer(llm: LLM, turn: ConsultTurn, setting: Setting, documents: Sequence[Document] = (), *,
                    context: str = "", max_tokens: int = 300, history_chars: int = 1500, article_chars: int = 400,
                    evidence_tokens: int | None = None, query: str = "",
                    seconds_before: Mapping[str, float] | None = None, note: str = "") -> ConsultationResponse:
    """One answer: the prompt ``consultation_generate_zh`` with the history, the question and the articles
    (none in zero-shot; ``context`` is raw article text used when there are no documents). Each article is
    cut to its first ``article_chars`` characters, or, with ``evidence_tokens``, all of them together to the
    clauses that best match ``query`` (default: the question) within that many tokens."""
    from legalrag.prompts import load_prompt

    if setting is not Setting.ZERO_SHOT and not documents and not context:
        raise InputError(f"turn {turn.id}: the {setting.value} setting needs articles, and none were given")
    if setting is Setting.ZERO_SHOT:
        sources = ""
    elif evidence_tokens is not None and documents:
        sources = evidence_text(query or turn.question, documents, evidence_tokens)
    else:
        sources = sources_text(documents, article_chars) or context
    messages = load_prompt("consultation_generate_zh").render(
        history=history_text(turn.history, history_chars), question=turn.question, sources=sources)
    t0 = time.perf_counter()
    result = llm.chat(ChatRequest(messages=tuple(messages), max_tokens=max_tokens, temperature=0.0))
    seconds = time.perf_counter() - t0
    # model_seconds: what the call cost when it ran (kept by the call cache), so a resumed run still reports it
    timings = {**(seconds_before or {}), "generation": seconds, "model_seconds": call_seconds(result, seconds)}
    return ConsultationResponse(question=turn.question, text=result.text.strip(), usage=Usage.of(result, seconds),
                                timings=timings, turn_id=turn.id, turn=turn.turn, setting=setting.value,
                                article_ids=tuple(d.id for d in documents), note=note)


def run_generation(turns: Sequence[ConsultTurn], llm: LLM, settings: Sequence[Setting], *,
                   documents: Mapping[str, Document] | Callable[[str], Document] | None = None,
                   search: Callable[[str, int], list[Hit]] | None = None, processor: Callable | None = None,
                   k: int = 5, max_tokens: int = 300, history_chars: int = 1500, article_chars: int = 400,
                   evidence_tokens: int | None = None, progress: bool = False) -> list[ConsultationResponse]:
    """Every turn in every setting. ``search`` (with ``processor`` to build the query, default the last
    question) serves the retriever setting; ``documents`` (id -> Document) serves the reference setting.
    ``evidence_tokens``: select evidence from the articles against the processed query instead of cutting
    each to ``article_chars``."""
    from legalrag.conversation import last_question

    settings = list(settings)
    if Setting.RETRIEVER in settings and search is None:
        raise InputError("the retriever setting needs a search function (an index)")
    get = documents.__getitem__ if isinstance(documents, Mapping) else documents
    if Setting.REFERENCE in settings and get is None:
        raise InputError("the reference setting needs the corpus documents to look the gold articles up")
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
            docs = [h.document for h in search(query, k)]
            before = {"processor": t1 - t0, "retrieval": time.perf_counter() - t1}
        elif setting is Setting.REFERENCE:
            docs = [get(i) for i in turn.gold_ids]
            query = processor(turn.turns) if evidence_tokens is not None else ""
            if turn.unresolved:
                note = f"gold not in the corpus: {', '.join(turn.unresolved)}"
            if not docs:
                context = turn.article_context
                if not context:
                    raise InputError(f"turn {turn.id}: no gold article resolved and no article_context to fall "
                                     f"back on; the reference setting cannot run for it")
                note += "; used article_context"
        out.append(generate_answer(llm, turn, setting, docs, context=context, max_tokens=max_tokens,
                                   history_chars=history_chars, article_chars=article_chars,
                                   evidence_tokens=evidence_tokens, query=query, seconds_before=before, note=note))
    return out


def response_row(r: ConsultationResponse) -> dict[str, Any]:
    return {"turn_id": r.turn_id, "turn": r.turn, "setting": r.setting, "question": r.question,
            "response": r.text, "article_ids": list(r.article_ids), "note": r.note, "timings": dict(r.timings),
            "usage": r.usage.to_dict()}
