"""Answer a legal question from an index with cited articles, and check every citation.

``answer_question(question, index, llm)`` is the one answer engine (:mod:`legalrag.answer.engine`) over an index,
with its defaults. Each citation says whether it resolved to a corpus article and whether that article was
among the retrieved ones; unresolved citations are kept and flagged, never dropped. The notes a user should
read about how the prompt was fitted are ``serialize.answer_notes``; the notice under every answer is
``lang.legal_notice``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Sequence

from legalrag.answer.engine import question_language
from legalrag.errors import InputError
from legalrag.llm.base import LLM
from legalrag.types import Answer, Hit


def answer_question(question: str, index: Any, llm: LLM, *, k: int | None = None, retriever: str | None = None,
                    lang: str | None = None, max_tokens: int | None = None, max_article_chars: int | None = None,
                    evidence_tokens: int | None | object = ..., style: str | None = None, search: Any = None,
                    select: bool | None = None, time_cap_s: float | None = None,
                    on_text: Callable[[str], None] | None = None,
                    on_retrieved: Callable[[str, Sequence[Hit]], None] | None = None, support: Any = None,
                    versions: Any = None) -> Answer:
    """Retrieve, answer with citations, check them: :class:`legalrag.answer.engine.AnswerEngine` over ``index`` with
    its defaults (arguments given override them; ``evidence_tokens=None`` gives whole articles).
    ``search(question, k) -> hits`` overrides retrieval; ``on_retrieved(query, hits)`` is called when retrieval
    ends (before the model starts); ``on_text`` receives the answer as it is generated (its quoted legal basis
    first); ``select=False`` quotes the retrieval order instead of the selector's choice; ``time_cap_s`` caps the
    generation's seconds; ``support``: the support model of the marks, the conclusion's check and the selector
    (the root's ``wiring.make_support_scorer()``; None: the lexical model, see :func:`engine_for`); ``versions``:
    the law's versions (a ``laws.Library`` or a function loading it), for the currency marks of an answer over an
    index read as of a past day."""
    from legalrag.answer.engine import DEFAULTS, engine_for

    settings = DEFAULTS.but(k=k, max_tokens=max_tokens, max_article_chars=max_article_chars, style=style,
                            select=select, time_cap_s=time_cap_s)
    if evidence_tokens is not ...:
        settings = replace(settings, evidence_tokens=evidence_tokens)
    lang = lang or question_language(question or "", index)
    if lang not in ("zh", "en"):
        raise InputError(f"lang must be 'zh' or 'en', got {lang!r}", field="lang")
    engine = engine_for(llm, index, retriever=retriever, search=search, settings=settings, lang=lang,
                        support=support, versions=versions)
    return engine.answer(question, on_text=on_text, on_retrieved=on_retrieved)
