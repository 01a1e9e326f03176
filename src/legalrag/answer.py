"""Answer a legal question from an index with cited articles, and check every citation.

``answer_question(question, index, llm)`` is the one answer engine (:mod:`legalrag.engine`) over an index,
with its defaults. Each citation says whether it resolved to a corpus article and whether that article was
among the retrieved ones; unresolved citations are kept and flagged, never dropped. This module also holds
what the engine and its callers share: the question's language, the per-index citation resolver (built once,
under a lock) and the notes a user should read about how the prompt was fitted.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import replace
from typing import Any, Callable, Sequence

from legalrag.citations import citation_label
from legalrag.errors import InputError
from legalrag.lang import detect_language
from legalrag.llm.base import LLM
from legalrag.types import Answer, Hit

_RESOLVERS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_RESOLVER_LOCK = threading.RLock()


def question_language(question: str, index: Any = None) -> str:
    """"zh" or "en": the index's language when it has one, else whether the question is mostly Chinese."""
    lang = (getattr(index, "manifest", None) or {}).get("lang")
    if lang in ("zh", "en"):
        return lang
    return detect_language(question)


def format_sources(hits: Sequence[Hit], max_chars: int) -> str:
    blocks = []
    for i, h in enumerate(hits, 1):
        text = " ".join(h.document.text.split())
        if len(text) > max_chars:
            text = text[:max_chars] + "…"
        blocks.append(f"[{i}] {citation_label(h.document)}\n{text}")
    return "\n\n".join(blocks)


def resolver_for(index: Any) -> Any:
    """The citation resolver of an index's corpus, built once per opened index."""
    from legalrag.citations import CitationResolver

    with _RESOLVER_LOCK:  # one build per index, even when a request and a warm-up thread ask together
        try:
            return _RESOLVERS[index]
        except (KeyError, TypeError):
            pass
        resolver = CitationResolver.from_documents(index.documents)
        try:
            _RESOLVERS[index] = resolver
        except TypeError:
            pass
        return resolver


DEFAULT_EVIDENCE_TOKENS = 400  # prompt tokens of evidence: ~5 s of prefill on 2 cores with the 1.5B


def answer_question(question: str, index: Any, llm: LLM, *, k: int | None = None, retriever: str | None = None,
                    lang: str | None = None, max_tokens: int | None = None, max_article_chars: int | None = None,
                    evidence_tokens: int | None | object = ..., style: str | None = None, search: Any = None,
                    on_text: Callable[[str], None] | None = None) -> Answer:
    """Retrieve, answer with citations, check them: :class:`legalrag.engine.AnswerEngine` over ``index`` with
    its defaults (arguments given override them; ``evidence_tokens=None`` gives whole articles).
    ``search(question, k) -> hits`` overrides retrieval; ``on_text`` receives the answer as it is generated."""
    from legalrag.engine import DEFAULTS, AnswerEngine

    settings = DEFAULTS.but(k=k, max_tokens=max_tokens, max_article_chars=max_article_chars, style=style)
    if evidence_tokens is not ...:
        settings = replace(settings, evidence_tokens=evidence_tokens)
    lang = lang or question_language(question or "", index)
    if lang not in ("zh", "en"):
        raise InputError(f"lang must be 'zh' or 'en', got {lang!r}", field="lang")
    if search is None:
        engine = AnswerEngine.from_index(index, llm, retriever=retriever, settings=settings, lang=lang)
    else:
        engine = AnswerEngine(llm, search, resolver=lambda: resolver_for(index), lang=lang, settings=settings)
    return engine.answer(question, on_text=on_text)


def answer_notes(answer: Answer) -> list[str]:
    """What the user should know about how the prompt was built (a cut question, articles left out)."""
    notes = []
    for s in answer.steps:
        if s.action == "cut_question":
            notes.append(str(s.output))
        elif s.action == "select_evidence":
            notes += list((s.output or {}).get("notes", []))
        elif s.action in ("drop_source", "shrink_evidence", "shorten_sources"):
            notes.append(f"{s.action.replace('_', ' ')} ({s.input}): the prompt did not fit the context")
    return notes
