"""Answer a legal question from an index with cited articles, and check every citation.

``answer_question(question, index, llm)``: retrieve the top ``k`` articles, ask the model to answer from them
(prompt template ``prompts/ask.md``, Chinese or English), then parse every citation in the answer with
:mod:`legalrag.citations` and resolve it against the whole corpus. Each citation says whether it resolved to
a corpus article and whether that article was among the retrieved ones; unresolved citations are kept and
flagged, never dropped. When the sources do not fit the model's context window, the least relevant ones are
dropped (and recorded in the trajectory) rather than failing.
"""

from __future__ import annotations

import time
import weakref
from typing import Any, Callable, Sequence

from legalrag.citations import citation_label
from legalrag.errors import InputError
from legalrag.lang import detect_language
from legalrag.llm.base import LLM, ChatRequest, PromptTooLongError
from legalrag.types import Answer, Hit, Step

_RESOLVERS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


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


def build_messages(question: str, hits: Sequence[Hit], *, lang: str, evidence_tokens: int | None = DEFAULT_EVIDENCE_TOKENS,
                   max_article_chars: int = 600, n_ctx: int | None = None, max_tokens: int = 512,
                   terms: Callable[[str], list[str]] | None = None) -> tuple[list[dict[str, str]], list[Step]]:
    """The ask prompt: fixed instructions first (so a runtime's prompt cache keeps them between calls), then
    the evidence, then the question. ``evidence_tokens`` is the evidence budget (None: whole articles cut at
    ``max_article_chars``, the old behaviour). With ``n_ctx`` known, a question too long for the context is
    cut to fit (noted in the returned steps) and the budget shrinks to what is left."""
    from legalrag.evidence import MIN_EVIDENCE_ROOM, cut_to_tokens, prompt_evidence
    from legalrag.llm.tokens import estimate_message_tokens, estimate_tokens
    from legalrag.prompts import load_prompt

    prompt = load_prompt("ask")
    steps: list[Step] = []
    room = None
    if n_ctx:
        fixed = estimate_message_tokens(prompt.render(question="", sources="", language=lang))
        room = n_ctx - max_tokens - fixed
        reserve = MIN_EVIDENCE_ROOM if hits else 0  # one short piece of evidence with its article name
        q_tokens = estimate_tokens(question)
        if q_tokens > room - reserve:
            keep = max(16, room - reserve)
            cut = cut_to_tokens(question, keep)
            note = (f"the question was cut from about {q_tokens} to {keep} tokens to fit the model's context of "
                    f"{n_ctx} tokens (with max_tokens {max_tokens}); ask a shorter question or use a model "
                    "with a larger context")
            steps.append(Step("ask", "cut_question", input=q_tokens, output=note))
            question, q_tokens = cut, keep
        room -= q_tokens
    if evidence_tokens is None:
        sources = format_sources(hits, max_article_chars)
    else:
        sources, step = prompt_evidence(question, hits, budget=evidence_tokens, lang=lang, agent="ask", room=room,
                                        terms=terms)
        steps.append(step)
    messages = prompt.render(question=question, sources=sources or "(none)", language=lang)
    return messages, steps


def generate_answer(llm: LLM, question: str, hits: Sequence[Hit], *, lang: str, max_tokens: int = 512,
                    max_article_chars: int = 600, evidence_tokens: int | None = DEFAULT_EVIDENCE_TOKENS,
                    temperature: float = 0.0, seed: int | None = 0,
                    on_text: Callable[[str], None] | None = None) -> tuple[Any, list[Step], dict[str, float]]:
    """The model's answer from ``hits``, the steps and timings; drops the lowest-ranked sources (whole articles) or halves the
    evidence budget if the prompt is still too long. ``on_text`` receives the answer as it is generated
    (token by token when the backend can stream). The timings carry the runtime's own (prompt_ms,
    predicted_ms, prompt_n where it reports them) and ``ttft_s``, the seconds to the first piece."""
    steps: list[Step] = []
    hits = list(hits)
    chars, budget = max_article_chars, evidence_tokens
    n_ctx = getattr(llm, "n_ctx", None)
    n_ctx = n_ctx if isinstance(n_ctx, int) else None
    while True:
        messages, prep = build_messages(question, hits, lang=lang, evidence_tokens=budget, max_article_chars=chars,
                                        n_ctx=n_ctx, max_tokens=max_tokens)
        first: list[float] = []

        def on_piece(piece: str) -> None:
            if not first:
                first.append(time.perf_counter())
            if on_text is not None:
                on_text(piece)

        try:
            t0 = time.perf_counter()
            request = ChatRequest(messages=tuple(messages), max_tokens=max_tokens, temperature=temperature, seed=seed)
            from legalrag.llm.stream import stream_chat

            result = stream_chat(llm, request, on_piece)
        except PromptTooLongError as exc:
            if budget is not None and budget > 2 * 64:
                budget //= 2
                steps.append(Step("ask", "shrink_evidence", input=budget, output=str(exc)))
                continue
            if len(hits) > 1:
                dropped = hits.pop()
                steps.append(Step("ask", "drop_source", input=dropped.id, output=str(exc)))
                continue
            if budget is None and chars > 100:
                chars //= 2
                steps.append(Step("ask", "shorten_sources", input=chars, output=str(exc)))
                continue
            raise
        t1 = time.perf_counter()
        steps += prep
        steps.append(Step("ask", "generate", input={"sources": [h.id for h in hits], "lang": lang},
                          output=result.text, seconds=t1 - t0,
                          tokens=result.prompt_tokens + result.completion_tokens))
        result_timings = dict(result.timings)
        result_timings["ttft_s"] = (first[0] if first else t1) - t0
        return result, steps, result_timings


def answer_question(question: str, index: Any, llm: LLM, *, k: int = 8, retriever: str | None = None,
                    lang: str | None = None, max_tokens: int = 512, max_article_chars: int = 600,
                    evidence_tokens: int | None = DEFAULT_EVIDENCE_TOKENS, search: Any = None,
                    on_text: Callable[[str], None] | None = None) -> Answer:
    """Retrieve, answer with citations, check them. ``search(question, k) -> hits`` overrides retrieval;
    ``on_text`` receives the answer text as it is generated. ``evidence_tokens`` bounds the evidence in the
    prompt (each article cut to the clauses matching the question); None gives whole articles cut at
    ``max_article_chars``. The answer's citations are checked against the full articles."""
    question = (question or "").strip()
    if not question:
        raise InputError("the question is empty; ask something, e.g. legalrag ask \"公司不签劳动合同怎么办？\"")
    if k < 1:
        raise InputError(f"k must be >= 1, got {k}")
    if evidence_tokens is not None and evidence_tokens < 1:
        raise InputError(f"evidence_tokens must be a positive number of tokens, got {evidence_tokens}",
                         field="evidence_tokens")
    lang = lang or question_language(question, index)
    if lang not in ("zh", "en"):
        raise InputError(f"lang must be 'zh' or 'en', got {lang!r}")
    t0 = time.perf_counter()
    if search is None:
        from legalrag.retrieval.pipeline import build_pipeline

        pipe = build_pipeline(index, retriever=retriever)
        hits = list(pipe.search(question, k=k))
    else:
        hits = list(search(question, k))
    t1 = time.perf_counter()
    steps = [Step("ask", "retrieve", input=question, output=[h.id for h in hits], seconds=t1 - t0)]
    result, gen_steps, gen_timings = generate_answer(llm, question, hits, lang=lang, max_tokens=max_tokens,
                                                     max_article_chars=max_article_chars,
                                                     evidence_tokens=evidence_tokens, on_text=on_text)
    steps += gen_steps
    t2 = time.perf_counter()
    from legalrag.citations import check_citations

    citations = tuple(check_citations(result.text, resolver_for(index), [h.id for h in hits]))
    t3 = time.perf_counter()
    steps.append(Step("ask", "check_citations", output=[c.canonical or c.text for c in citations], seconds=t3 - t2))
    timings = {"retrieval_s": t1 - t0, "generation_s": t2 - t1, "citation_check_s": t3 - t2, "total_s": t3 - t0,
               "ttft_s": t1 - t0 + gen_timings["ttft_s"],
               "prompt_tokens": float(result.prompt_tokens), "completion_tokens": float(result.completion_tokens),
               "cached": float(result.cached)}
    if "prompt_ms" in gen_timings and not result.cached:  # the runtime's own split (llama.cpp)
        timings["prefill_s"] = gen_timings["prompt_ms"] / 1000
        timings["decode_s"] = gen_timings.get("predicted_ms", 0.0) / 1000
        # tokens actually evaluated: fewer than prompt_tokens when the runtime reused a cached prefix
        timings["prompt_tokens_evaluated"] = float(gen_timings.get("prompt_n", result.prompt_tokens))
    return Answer(question=question, text=result.text, citations=citations, sources=tuple(hits), steps=tuple(steps),
                  timings=timings)


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


def answer_to_dict(question: str, answer: Answer, model: str = "") -> dict[str, Any]:
    """The ``legalrag ask --json`` shape."""
    from legalrag.serialize import citation_to_dict

    t = answer.timings
    return {
        "question": question,
        "answer": answer.text,
        "model": model,
        "citations": [citation_to_dict(c) for c in answer.citations],
        "retrieved": [{"rank": h.rank, "id": h.id, "label": citation_label(h.document), "score": h.score}
                      for h in answer.hits],
        "timings": {k: round(t[k], 3) for k in ("retrieval_s", "ttft_s", "prefill_s", "decode_s", "generation_s",
                                                 "citation_check_s", "total_s") if k in t},
        "usage": {"prompt_tokens": int(t.get("prompt_tokens", 0)),
                  "prompt_tokens_evaluated": int(t.get("prompt_tokens_evaluated", t.get("prompt_tokens", 0))),
                  "completion_tokens": int(t.get("completion_tokens", 0)), "cached": bool(t.get("cached", 0))},
        "notes": answer_notes(answer),
        "unresolved": sum(not c.resolved for c in answer.citations),
        "not_retrieved": sum(c.resolved and not c.in_retrieved for c in answer.citations),
    }
