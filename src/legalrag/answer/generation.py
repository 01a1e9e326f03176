"""The answer engine's calls to the model: a question translated into the corpus's language, and the answer to
the fitted prompt, streamed, cut at a repeated-line loop or at the time cap; when the prompt is still too long for
the model's context, the evidence budget halves, then the lowest-ranked articles drop (each step recorded in the
trajectory)."""

from __future__ import annotations

import time
from typing import Any, Callable

from legalrag.answer.prompt import build_messages
from legalrag.lang import detect_language
from legalrag.llm.base import LLM, ChatRequest, PromptTooLongError
from legalrag.types import AnswerSettings, Hit, Step, Usage


def generate(llm: LLM, question: str, hits: list[Hit], lang: str, s: AnswerSettings, history: str,
             query: str | None, on_text: Callable[[str], None] | None,
             basis: Any = None) -> tuple[Any, list[Step], dict]:
    """The model's answer (cut at a repeated-line loop or at ``s.time_cap_s``); on a prompt too long for the
    context: halve the evidence, then drop the lowest-ranked articles, then shorten whole articles (a
    quoted basis is short: its prompt is sent as it is)."""
    from legalrag.llm.stream import stream_chat

    steps: list[Step] = []
    n_ctx = getattr(llm, "n_ctx", None)
    n_ctx = n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None
    while True:
        messages, prep = build_messages(question, hits, lang=lang, settings=s, history=history, query=query,
                                        n_ctx=n_ctx, basis=basis)
        first: list[float] = []

        def on_piece(piece: str) -> None:
            if not first:
                first.append(time.perf_counter())
            if on_text is not None:
                on_text(piece)

        t0 = time.perf_counter()
        request = ChatRequest(messages=tuple(messages), max_tokens=s.max_tokens, temperature=s.temperature,
                              seed=s.seed)
        try:
            result = stream_chat(llm, request, on_piece, time_cap_s=s.time_cap_s, cut_loops=True)
        except PromptTooLongError as exc:
            if basis is not None:
                raise
            if s.evidence_tokens is not None and s.evidence_tokens > 2 * 64:
                s = s.but(evidence_tokens=s.evidence_tokens // 2)
                steps.append(Step("answer", "shrink_evidence", input=s.evidence_tokens, output=str(exc)))
            elif len(hits) > 1:
                steps.append(Step("answer", "drop_source", input=hits.pop().id, output=str(exc)))
            elif s.evidence_tokens is None and s.max_article_chars > 100:
                s = s.but(max_article_chars=s.max_article_chars // 2)
                steps.append(Step("answer", "shorten_sources", input=s.max_article_chars, output=str(exc)))
            else:
                raise
            continue
        t1 = time.perf_counter()
        steps += prep
        steps.append(Step("answer", "generate", input={"sources": basis.ids if basis is not None else
                                                       [h.id for h in hits], "lang": lang},
                          output=result.text, seconds=t1 - t0,
                          tokens=result.prompt_tokens + result.completion_tokens,
                          error={"loop": "stopped: the answer repeated a line",
                                 "time_cap": f"stopped after the time cap of {s.time_cap_s:g} s"}.get(
                                     result.finish_reason)))
        return result, steps, {"ttft_s": (first[0] if first else t1) - t0, "runtime": dict(result.timings),
                               "hits": hits}


def translate(llm: LLM, corpus_lang: str, text: str, steps: list[Step]) -> tuple[str, Usage]:
    """``text`` in the corpus's language, by the model (one short call); the text itself when the model
    returns nothing usable."""
    from legalrag.prompts import load_prompt

    t0 = time.perf_counter()
    messages = load_prompt("translate_query").render(text=text[:2000], language=corpus_lang)
    result = llm.chat(ChatRequest(messages=tuple(messages), max_tokens=200, temperature=0.0, seed=0))
    out = " ".join(result.text.strip().strip('"“”').split())
    # a translation, not an answer: in the corpus's language and not far shorter than the text (a CJK
    # character carries about as much as four Latin letters)
    ok = bool(out) and detect_language(out) == corpus_lang and len(out) * (4 if corpus_lang == "zh"
                                                                           else 1) >= len(text) / 3
    steps.append(Step("answer", "translate", input=text, output=out if ok else None,
                      seconds=time.perf_counter() - t0, tokens=result.prompt_tokens + result.completion_tokens,
                      error=None if ok else "the translation was not in the corpus's language; searched as asked"))
    return (out if ok else text), Usage.of(result, time.perf_counter() - t0)
