"""The one answer engine: retrieve, select evidence, fit the prompt to the context, generate, check citations.

``legalrag ask``, ``legalrag chat`` (a consultation: history and a query processor around the engine), the
consultation benchmark's generation, ``POST /ask``, ``POST /consult`` and the web pages all answer through
:class:`AnswerEngine`, with one set of defaults (:class:`AnswerSettings`). An answer is an ``Answer`` whose
``usage`` (calls, prompt and completion tokens, seconds) and ``timings`` (``retrieval_s``, ``ttft_s``,
``generation_s``, ``citation_check_s``, ``total_s``; ``prefill_s`` / ``decode_s`` where the runtime reports
them) are filled in; every citation is checked against the corpus, unresolved ones are kept and flagged.

The guided answer (the default style) is built around its legal basis (:mod:`legalrag.answer.basis`): the
decisive-article selector (``answer.select``; ``AnswerSettings.select``) chooses at most three of the retrieved
candidates, each is quoted verbatim at its decisive clause with its exceptions, and that basis is printed (and
streamed) first; the model, given only the quotes (``prompts/answer_quoted.md``), writes the conclusion, the
steps and when to see a lawyer. Then the checks: a conclusion the support model does not find in the quotes, or
a selection whose every candidate is under the selector's threshold, gives the honest fallback (the most
relevant articles with their clauses and what to check; ``Answer.fallback``); each period or amount the model
states that no quote gives is marked not from the law (``Answer.not_from_law``); a repeated-line loop and the
time cap (``AnswerSettings.time_cap_s``) stop generation, and the answer says so. ``timings["first_output_s"]``
is when the basis was shown.

The other prompts (``prompts/answer.md`` with no articles, or the shorter ``answer_brief.md``) put the fixed instructions first (a
runtime's prompt cache keeps them between calls), then the dialogue so far, the evidence and the question. Each
article enters the prompt cut to the clauses that match the query, within ``evidence_tokens``; when the prompt
still does not fit the model's context, the evidence budget halves, then the lowest-ranked articles drop
(each step recorded in the trajectory).
"""

from __future__ import annotations

import re
import threading
import time
import weakref
from typing import Any, Callable, Iterable, Sequence

from legalrag.citecheck import citation_label
from legalrag.errors import InputError
from legalrag.lang import detect_language
from legalrag.llm.base import LLM, ChatRequest, PromptTooLongError
from legalrag.types import DEFAULTS, STYLES, Answer, AnswerSettings, Hit, Search, Step, Turn, Usage

_RESOLVERS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_RESOLVER_LOCK = threading.RLock()
_DATED_RESOLVERS: dict[tuple[Any, str], Any] = {}  # (index, day) -> the resolver of the texts in force that day


def question_language(question: str, index: Any = None) -> str:
    """"zh" or "en": the language to answer ``question`` in, its own (the index's when it has no letters)."""
    lang = (getattr(index, "manifest", None) or {}).get("lang")
    return answer_language(question, lang if lang in ("zh", "en") else "zh")


def answer_language(question: str, default: str = "zh") -> str:
    """The question's own language (``zh`` or ``en``); ``default`` for a question with no letters at all."""
    if not any(ch.isalpha() for ch in question):
        return default
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
    """The citation resolver of an index's corpus, built once per opened index. An index read as of a past day
    (``retrieval.dated.DatedIndex`` with ``as_of``) resolves to the texts in force that day, built once per day
    (the last few days kept)."""
    from legalrag.citecheck import CitationResolver

    day = getattr(index, "as_of", None)
    if day:
        from legalrag.laws.select import in_force_filter

        key = (getattr(index, "base", index), day)
        with _RESOLVER_LOCK:
            if key not in _DATED_RESOLVERS:
                _DATED_RESOLVERS[key] = CitationResolver.from_documents(index.documents, keep=in_force_filter(day))
                while len(_DATED_RESOLVERS) > 8:
                    _DATED_RESOLVERS.pop(next(iter(_DATED_RESOLVERS)))
            return _DATED_RESOLVERS[key]
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


ROLE_LABELS = {"zh": {"user": "用户", "assistant": "助手"}, "en": {"user": "User", "assistant": "Assistant"}}


def check_turns(turns: Sequence[Turn]) -> list[Turn]:
    turns = list(turns)
    for i, t in enumerate(turns):
        if t.role not in ("user", "assistant"):
            raise InputError(f"turn {i + 1} has role {t.role!r}; use 'user' or 'assistant'")
    if not any(t.role == "user" and t.content.strip() for t in turns):
        raise InputError("the conversation has no user question")
    return turns


def full_context(turns: Sequence[Turn], lang: str = "zh", max_chars: int = 2000) -> str:
    """Every turn labelled by role; older turns are dropped first when over ``max_chars``."""
    labels = ROLE_LABELS.get(lang, ROLE_LABELS["en"])
    lines = [f"{labels[t.role]}: {' '.join(t.content.split())}" for t in check_turns(turns) if t.content.strip()]
    while len(lines) > 1 and sum(len(x) + 1 for x in lines) > max_chars:
        lines.pop(0)
    return "\n".join(lines)


def history_text(turns: Sequence[Turn], lang: str, max_chars: int) -> str:
    return full_context(turns, lang, max_chars) if turns else ""


def build_messages(question: str, hits: Sequence[Hit], *, lang: str, settings: AnswerSettings = DEFAULTS,
                   history: str = "", query: str | None = None, n_ctx: int | None = None,
                   terms: Callable[[str], list[str]] | None = None,
                   basis: Any = None) -> tuple[list[dict[str, str]], list[Step]]:
    """The answer prompt and the steps that record how it was fitted: with ``n_ctx`` known, a question too long
    for the context is cut (noted) and the evidence budget shrinks to what is left. Evidence is selected
    against ``query`` (the processor's standalone question in a consultation; default the question). With a
    quoted ``basis`` (``answer.basis.Basis``) the evidence is its quotes only (``prompts/answer_quoted.md``)."""
    from legalrag.answer.evidence import MIN_EVIDENCE_ROOM, keep_last_tokens, prompt_evidence
    from legalrag.llm.tokens import estimate_message_tokens, estimate_tokens
    from legalrag.prompts import load_prompt

    prompt = load_prompt(QUOTED_PROMPT if basis is not None else STYLES[settings.style])
    steps: list[Step] = []
    room = None
    if n_ctx:
        fixed = estimate_message_tokens(prompt.render(question="", sources="x", history=history, language=lang))
        room = n_ctx - settings.max_tokens - fixed
        reserve = MIN_EVIDENCE_ROOM if hits else 0  # one short piece of evidence with its article name
        q_tokens = estimate_tokens(question)
        if q_tokens > room - reserve:
            keep = max(16, room - reserve)
            note = (f"the question was cut from about {q_tokens} to its last {keep} tokens to fit the model's "
                    f"context of {n_ctx} tokens (with max_tokens {settings.max_tokens}); ask a shorter question or use a "
                    "model with a larger context")
            steps.append(Step("answer", "cut_question", input=q_tokens, output=note))
            question, q_tokens = keep_last_tokens(question, keep), keep  # the question is at a paste's end
        room -= q_tokens
    if basis is not None:
        from legalrag.answer.basis import prompt_quotes
        from legalrag.answer.evidence import select_evidence

        if hits and settings.evidence_tokens is not None:  # a budget too small for any evidence is refused alike
            select_evidence(query or question, list(hits)[:1], budget=settings.evidence_tokens, label=lambda h: citation_label(h.document), lang=lang,
                            setting="evidence_tokens (--evidence-tokens)")
        sources = prompt_quotes(basis)
    elif not hits:
        sources = ""
    elif settings.evidence_tokens is None:
        sources = format_sources(hits, settings.max_article_chars)
    else:
        sources, step = prompt_evidence(query or question, hits, budget=settings.evidence_tokens, lang=lang,
                                        agent="answer", room=room, terms=terms)
        steps.append(step)
    return prompt.render(question=question, sources=sources, history=history, language=lang), steps


QUOTED_PROMPT = "answer_quoted"  # the guided answer around a quoted basis: conclusion, steps, when to see a lawyer
_CONCLUSION = re.compile(r"(?:结论|Conclusion)\s*[:：]\s*(.+)", re.I)


def conclusion_of(text: str) -> str:
    """The conclusion an answer states on its ``结论：`` line ("" when it has none: a text that states no
    conclusion line is not judged, it is marked like any answer's citations)."""
    m = _CONCLUSION.search(text)
    return m.group(1).strip()[:300] if m else ""


def basis_head(basis: Any, lang: str) -> str:
    """The printed basis at the head of an answer (with the line break after it)."""
    from legalrag.answer.basis import basis_block

    return basis_block(basis, lang) + "\n"


def _shown(candidates: Sequence[Hit], basis: Any, k: int) -> list[Hit]:
    """The articles an answer shows as its sources (``k`` of them): the articles of its basis first, in the basis's
    order, then the best-ranked other candidates."""
    if basis is None:
        return list(candidates[:k])
    by_id = {h.id: h for h in candidates}
    first = [by_id[i] for i in basis.ids if i in by_id]
    taken = {h.id for h in first}
    return first + [h for h in candidates if h.id not in taken][:max(0, k - len(first))]


class AnswerEngine:
    """Answers questions over ``search(query, k) -> hits`` with ``llm``; ``resolver`` (or a zero-argument
    function returning one, called on a background thread so the corpus is read while the model generates)
    checks the citations and marks each supported / exists / not found / repealed (``support``: a
    ``citecheck.support.SupportScorer``, the root's ``wiring.make_support_scorer()`` on every path that answers;
    None: the lexical model, ``SupportScorer()``). Build one with :func:`engine_for`, the
    one place an engine is made (``ask``, ``chat``, ``serve``'s routes, the MCP tools, the answer and
    consultation benchmarks)."""

    def __init__(self, llm: LLM, search: Search | None = None, *, resolver: Any = None, lang: str = "zh",
                 settings: AnswerSettings = DEFAULTS, support: Any = None, corpus_lang: str | None = None,
                 min_score: float | None = None, guard: bool = True, selector: Any = None, limitation: Any = None,
                 as_of: str | None = None, versions: Any = None):
        """``lang``: the answer language when the caller names none and the question's own cannot be told;
        ``corpus_lang``: the language searched in (a question in another language is translated by ``llm``
        first; default ``lang``); ``min_score``: best-hit score under which "not covered" is answered instead
        (calibrated per scorer, ``guard.RELEVANCE_THRESHOLDS``); ``guard=False`` turns the checks of
        :mod:`legalrag.answer.guard` off; ``support``: the support scorer of the citation marks and of the
        conclusion's check; ``selector``: the decisive-article selector (``answer.select.ArticleSelector``) or a
        zero-argument function making one on first use (a failure is a notice and the unselected path); None: the
        legal basis follows the retrieval order; ``limitation``: the limitation-period article (a ``Document``, or
        a zero-argument function finding it), quoted for a question about making a claim; ``as_of``: the past day
        the answer speaks of (the index's, ``retrieval.dated``; None: today): where a law's oldest version held
        answered for it, a note says so, and with ``versions`` (a ``laws.Library``, or a zero-argument function
        loading it) each citation carries its currency mark as of that day (``citecheck.currency``)."""
        if lang not in ("zh", "en"):
            raise InputError(f"lang must be 'zh' or 'en', got {lang!r}", field="lang")
        self.llm, self.search, self.lang, self.settings = llm, search, lang, settings
        if support is None:  # the lexical model: a library call without the composition root still answers
            from legalrag.citecheck.support import SupportScorer

            support = SupportScorer()
        self.support = support
        self.corpus_lang, self.min_score, self.guard = corpus_lang or lang, min_score, guard
        self._selector, self._selector_notice = selector, ""
        self._limitation = limitation
        self.as_of, self._versions = as_of, versions
        self._lazy_lock = threading.Lock()
        self._resolver: Any = None
        self._resolver_error: BaseException | None = None
        self._ready = threading.Event()
        if callable(resolver) and not hasattr(resolver, "resolve"):
            threading.Thread(target=self._warm, args=(resolver,), name="legalrag-resolver", daemon=True).start()
        else:
            self._resolver = resolver
            self._ready.set()

    def _warm(self, make: Callable[[], Any]) -> None:
        try:
            self._resolver = make()
        except BaseException as exc:  # re-raised in the caller's thread when the resolver is needed
            self._resolver_error = exc
        finally:
            self._ready.set()

    @property
    def resolver(self) -> Any:
        self._ready.wait()
        if self._resolver_error is not None:
            raise self._resolver_error
        return self._resolver

    def answer(self, question: str, *, history: Sequence[Turn] = (), query: str | None = None,
               hits: Sequence[Hit] | None = None, on_text: Callable[[str], None] | None = None,
               on_retrieved: Callable[[str, Sequence[Hit]], None] | None = None, lang: str | None = None,
               settings: AnswerSettings | None = None, steps_before: Sequence[Step] = (),
               usage_before: Usage = Usage(), searched: bool = False, started: float | None = None) -> Answer:
        """Answer ``question`` (after ``history``, the earlier turns): retrieve for ``query`` (default the
        question) unless ``hits`` are given, generate (``on_text`` receives the text as it is generated), check
        every citation. ``steps_before`` / ``usage_before``: what the caller spent first (a query rewrite);
        ``searched``: the given hits are this engine's search for the question (:meth:`search_text`), so the
        "not covered" check applies to them as to its own; ``started``: when retrieval began (``time.perf_counter``),
        default now."""
        from legalrag.citecheck.marks import mark_citations
        from legalrag.answer.guard import injection_verdict, keep_question, outside_corpus, question_tail

        s = settings or self.settings
        question = " ".join((question or "").split()) if "\n" not in (question or "") else (question or "").strip()
        if not question:
            raise InputError("the question is empty; ask something, e.g. legalrag ask \"公司不签劳动合同怎么办？\"",
                             field="question")
        lang = lang or answer_language(question, self.lang)
        t0 = started if started is not None else time.perf_counter()
        steps = list(steps_before)
        if self.guard:
            verdict = injection_verdict(question, lang)
            if verdict is not None:
                return self._declined(question, verdict, steps, usage_before, t0, on_text)
            question, cut = keep_question(question, lang)
            if cut is not None:  # search for the question at the paste's end, not for its first pages
                steps.append(Step("guard", "cut_message", output=cut))
                query = question_tail(query or question)
        usage = usage_before
        # the guided answer quotes its legal basis and the model writes the rest; asked for whole articles
        # (evidence_tokens None, `--evidence-tokens 0`) the model reads them whole, as before the basis
        quoted = s.style == "guided" and s.evidence_tokens is not None
        selector = self.selector(steps) if quoted and s.select else None
        search_query = None
        if hits is None:
            if self.search is None:
                raise InputError("this answer engine has no search function; pass hits= or build it from an index")
            text = query or question
            if self.guard and self.corpus_lang == "zh" and detect_language(text) != "zh":
                # a message in another language is judged on its words before the model translates it
                from legalrag.answer.scope import scope_verdict

                verdict = scope_verdict(text, None, lang)
                if verdict is not None:
                    return self._declined(question, verdict, steps, usage, t0, on_text)
            search_query, spent = self.corpus_query(text, steps)
            usage = usage + spent
            t_search = time.perf_counter()
            hits = list(self.search(search_query, max(s.k, s.candidates) if selector is not None else s.k))
            steps.append(Step("retriever", "retrieve", input=search_query, output=[h.id for h in hits],
                              seconds=time.perf_counter() - t_search))
            searched = True
        if self.guard and (searched or not history):  # the scope decision, before the model (answer/scope.py):
            from legalrag.answer.scope import scope_verdict  # a first turn's hits given or fused: its words only

            verdict = scope_verdict(query or question, hits if searched else None, lang)
            if verdict is not None:
                return self._declined(question, verdict, steps, usage, t0, on_text, hits)
        candidates = list(hits)
        if self.as_of:  # a law's oldest version held answered for an earlier day: say so
            from legalrag.laws.select import held_notes

            notes = held_notes((h.document for h in candidates), self.as_of)
            if notes:
                steps.append(Step("retriever", "versions_held", input=self.as_of, output={"notes": list(notes)}))
        basis = None
        if quoted and candidates:
            # chosen and quoted against what was searched (a question in another language: its translation)
            basis = self._basis(search_query or query or question, candidates, selector, lang, s, steps)
        hits = _shown(candidates, basis, s.k)
        if on_retrieved is not None:
            on_retrieved(query or question, hits)
        t1 = time.perf_counter()
        history_block = history_text(history, lang, s.history_chars)
        fallback, not_from_law, first_output = "", (), None
        if basis is not None and basis.low:  # no candidate decides the question: no conclusion to draw
            from legalrag.answer.basis import fallback_text

            fallback, text = "low_probability", fallback_text(basis, lang, "low_probability")
            steps.append(Step("answer", "fallback", input=basis.ids, output=fallback))
            if on_text is not None:
                on_text(text)
            first_output = time.perf_counter()
            result, gen = None, {"ttft_s": 0.0, "runtime": {}, "hits": hits}
        else:
            head = ""
            if basis is not None:
                from legalrag.answer.basis import basis_block

                head = basis_block(basis, lang)
                if on_text is not None:
                    on_text(basis_head(basis, lang))
                first_output = time.perf_counter()
            result, gen_steps, gen = self._generate(question, hits, lang, s, history_block, query, on_text, basis)
            steps += gen_steps
            hits = gen["hits"]
            text = result.text.strip()
            if basis is not None:
                text, fallback, not_from_law = self._checked(question, text, head, basis, lang, steps, on_text,
                                                             result.finish_reason)
        t2 = time.perf_counter()
        retrieved_ids = [h.id for h in candidates] + basis.ids if basis is not None else [h.id for h in hits]
        if basis is None:
            citations = tuple(mark_citations(text, self.resolver, self.support, retrieved_ids))
        else:  # the quoted articles are marked as quoted; the model's own citations are checked as any answer's
            body = "" if fallback else text[len(basis_head(basis, lang)):]
            citations = tuple(self._quoted_citations(basis)) + tuple(
                mark_citations(body, self.resolver, self.support, retrieved_ids) if body.strip() else ())
        citations = self._current(citations)
        t3 = time.perf_counter()
        steps.append(Step("answer", "check_citations", output=[c.canonical or c.text for c in citations],
                          seconds=t3 - t2))
        ttft = t1 - t0 + gen["ttft_s"] if result is not None else (first_output or t2) - t0
        timings = {"retrieval_s": t1 - t0, "ttft_s": ttft, "generation_s": t2 - t1,
                   "citation_check_s": t3 - t2, "total_s": t3 - t0}
        if first_output is not None:  # the quoted basis (or the fallback) is shown before the model writes
            timings["first_output_s"] = first_output - t0
        if result is not None and "prompt_ms" in gen["runtime"] and not result.cached:  # llama.cpp's own split
            timings["prefill_s"] = gen["runtime"]["prompt_ms"] / 1000
            timings["decode_s"] = gen["runtime"].get("predicted_ms", 0.0) / 1000
            timings["prompt_tokens_evaluated"] = float(gen["runtime"].get("prompt_n", result.prompt_tokens))
        if result is not None:
            usage = usage + Usage.of(result, t2 - t1)
        return Answer(question=question, text=text, citations=citations, sources=tuple(hits),
                      steps=tuple(steps), usage=usage, timings=timings,
                      basis=basis.quotes if basis is not None else (), fallback=fallback,
                      not_from_law=tuple(not_from_law))

    def _current(self, citations: tuple) -> tuple:
        """Each citation with its currency mark as of the past day the answer speaks of (none as of today: the
        answer reads the law in force, so every citation of it is current)."""
        if not self.as_of or self._versions is None:
            return citations
        from legalrag.citecheck.currency import with_currency

        with self._lazy_lock:
            if callable(self._versions) and not hasattr(self._versions, "law"):
                self._versions = self._versions()
        return with_currency(citations, self._versions, self.as_of)

    # -- the quoted basis ------------------------------------------------------------------------------------

    def _quoted_citations(self, basis: Any) -> list[Any]:
        """One citation per quoted article, resolved like any citation, marked ``supported`` with the reason
        ``quoted``: its claim is its own article's text (not a judgement of the support model)."""
        from dataclasses import replace as _replace

        from legalrag.citecheck.marks import explain_all

        out = []
        for q in basis.quotes:
            found = explain_all(q.citation, self.resolver)
            if not found:
                continue
            c = found[0].citation
            if c.resolved and c.document_id == q.document_id:
                c = _replace(c, in_retrieved=True, mark="supported", mark_reason="quoted", claim=q.text)
            out.append(c)
        return out

    def selector(self, steps: list[Step] | None = None) -> Any:
        """The decisive-article selector, made on first use; None (with a ``select`` step saying why, and the
        fix) when it cannot be loaded: the answer then follows the retrieval order."""
        with self._lazy_lock:
            if callable(self._selector) and not hasattr(self._selector, "select"):
                make, self._selector = self._selector, None
                try:
                    self._selector = make()
                except Exception as exc:  # a missing or altered model file: refused, answered unselected
                    self._selector_notice = (f"the article selector could not be loaded, so the legal basis "
                                             f"follows the retrieval order: {exc}")
            selector, notice = self._selector, self._selector_notice
        if notice and steps is not None:
            steps.append(Step("select", "unavailable", output=notice, error=notice))
        return selector

    def limitation(self) -> Any:
        """The limitation-period article of the corpus (found once), or None."""
        with self._lazy_lock:
            if callable(self._limitation):
                make, self._limitation = self._limitation, None
                try:
                    self._limitation = make()
                except Exception:  # a corpus without it: no limitation article is added
                    self._limitation = None
            return self._limitation

    def _basis(self, question: str, hits: list[Hit], selector: Any, lang: str, s: AnswerSettings,
               steps: list[Step]) -> Any:
        from legalrag.answer.basis import build_basis, is_claim

        selection = None
        if selector is not None:
            try:
                selection = selector.select(question, hits, k=s.basis_articles)
            except Exception as exc:  # a selector that fails on this question: the retrieval order, said so
                steps.append(Step("select", "select", input=question, error=f"the selector failed ({exc}); the "
                                  "legal basis follows the retrieval order"))
            else:
                steps.append(Step("select", "select", input={"candidates": len(hits), "threshold": selection.threshold},
                                  output=[{"id": d.hit.id, "probability": round(d.probability, 4), "rank": d.rank}
                                          for d in selection.ranked[:10]], seconds=selection.seconds))
        limitation = self.limitation() if is_claim(question) else None
        basis = build_basis(question, hits, selection, lang=self.corpus_lang, limitation=limitation,
                            k=s.basis_articles)  # clauses split in the corpus language
        steps.append(Step("answer", "basis", input={"selected": basis.selected, "low": basis.low},
                          output=[{"id": q.document_id, "citation": q.citation, "role": q.role,
                                   "probability": q.probability, "spans": [list(x) for x in q.spans]}
                                  for q in basis.quotes]))
        return basis

    def _checked(self, question: str, text: str, head: str, basis: Any, lang: str, steps: list[Step],
                 on_text: Callable[[str], None] | None, finish: str) -> tuple[str, str, list[str]]:
        """The model's part checked against the quotes: a conclusion the quotes do not support gives the honest
        fallback; each period or amount no quote gives is marked; a loop or a time cap that cut the text is
        said. Returns the answer's text, the fallback reason (or "") and the marked amounts."""
        from legalrag.answer.basis import fallback_text, unquoted_amounts, unquoted_note
        from legalrag.llm.stream import FINISH_LOOP, FINISH_TIME

        quotes = [q.text for q in basis.quotes]
        conclusion = conclusion_of(text)
        if conclusion:
            supported, _ = self._supports(conclusion, quotes, steps)
            if supported is False:
                from dataclasses import replace as _replace

                related = _replace(basis, quotes=tuple(_replace(q, role="related") for q in basis.quotes))
                out = fallback_text(related, lang, "not_supported")
                steps.append(Step("answer", "fallback", input=conclusion, output="not_supported"))
                if on_text is not None:
                    on_text("\n\n" + ("〔上面的结论不能由所引法条得出，已撤回；下面是最相关的法条和需要核对的事项。〕\n"
                                      if lang == "zh" else "[The conclusion above does not follow from the quoted "
                                      "provisions and is withdrawn; the most relevant provisions and what to check "
                                      "follow.]\n"))
                return out, "not_supported", []
        notes = []
        if finish == FINISH_LOOP:
            notes.append("〔回答开始重复同一句话，已在此截断。〕" if lang == "zh" else
                         "[The answer started repeating itself and was cut here.]")
        elif finish == FINISH_TIME:
            notes.append("〔回答超过了时间上限，已在此截断。〕" if lang == "zh" else
                         "[The answer ran past its time limit and was cut here.]")
        found = unquoted_amounts(text, quotes, question)
        note = unquoted_note(found, text, lang)
        if found:
            steps.append(Step("answer", "not_from_law", input=quotes, output=[a.text for a in found]))
            notes.append(note)
        tail = "\n\n" + "\n".join(notes) if notes else ""
        if tail and on_text is not None:
            on_text(tail)
        return head + "\n" + text + tail, "", [a.text for a in found]

    def _supports(self, conclusion: str, quotes: list[str], steps: list[Step]) -> tuple[bool | None, float]:
        """Whether the support model says one of the quotes supports the conclusion (None: it could not say)."""
        t0 = time.perf_counter()
        try:
            from legalrag.answer.basis import CONCLUSION_FLOOR

            pairs = [(conclusion, q) for q in quotes] + [(conclusion, "".join(quotes))]
            probs = [float(p) for p in self.support.scores(pairs)]
            threshold = CONCLUSION_FLOOR  # a conclusion paraphrases its quotes: the floor, not the marks' threshold
        except Exception as exc:  # the support model failed: the conclusion is kept, the check recorded as failed
            steps.append(Step("answer", "support_conclusion", input=conclusion, error=f"not checked: {exc}",
                              seconds=time.perf_counter() - t0))
            return None, 0.0
        best = max(probs) if probs else 0.0
        steps.append(Step("answer", "support_conclusion", input=conclusion,
                          output={"support": round(best, 4), "threshold": threshold}, seconds=time.perf_counter() - t0))
        return best >= threshold, best

    def _declined(self, question: str, verdict: Any, steps: list[Step], usage: Usage, t0: float,
                  on_text: Callable[[str], None] | None, hits: Sequence[Hit] = ()) -> Answer:
        """The one-line answer of a guard (injection, not covered), recorded as a ``guard`` step."""
        steps.append(Step("guard", verdict.action, input=verdict.reason, output=verdict.text))
        if on_text is not None:
            on_text(verdict.text)
        total = time.perf_counter() - t0
        return Answer(question=question, text=verdict.text, citations=(), sources=tuple(hits), steps=tuple(steps),
                      usage=usage, timings={"retrieval_s": total, "ttft_s": total, "generation_s": 0.0,
                                            "citation_check_s": 0.0, "total_s": total})

    def search_text(self, question: str, query: str | None = None, lang: str | None = None) -> str:
        """What :meth:`answer` searches for ``question`` before translation: ``query`` (default the question), or
        its last sentences when the question is a paste too long to answer whole (``guard.keep_question``)."""
        from legalrag.answer.guard import keep_question, question_tail

        if self.guard:
            kept, cut = keep_question(question, lang or answer_language(question, self.lang))
            if cut is not None:
                return question_tail(query or kept)
        return query or question

    def corpus_query(self, text: str, steps: list[Step]) -> tuple[str, Usage]:
        """``text`` in the corpus's language: itself, or translated by the model (recorded in ``steps``)."""
        if detect_language(text) == self.corpus_lang:
            return text, Usage()
        return self._translate(text, steps)

    def _translate(self, text: str, steps: list[Step]) -> tuple[str, Usage]:
        """``text`` in the corpus's language, by the model (one short call); the text itself when the model
        returns nothing usable."""
        from legalrag.prompts import load_prompt

        t0 = time.perf_counter()
        messages = load_prompt("translate_query").render(text=text[:2000], language=self.corpus_lang)
        result = self.llm.chat(ChatRequest(messages=tuple(messages), max_tokens=200, temperature=0.0, seed=0))
        out = " ".join(result.text.strip().strip('"“”').split())
        # a translation, not an answer: in the corpus's language and not far shorter than the text (a CJK
        # character carries about as much as four Latin letters)
        ok = bool(out) and detect_language(out) == self.corpus_lang and len(out) * (4 if self.corpus_lang == "zh"
                                                                                     else 1) >= len(text) / 3
        steps.append(Step("answer", "translate", input=text, output=out if ok else None,
                          seconds=time.perf_counter() - t0, tokens=result.prompt_tokens + result.completion_tokens,
                          error=None if ok else "the translation was not in the corpus's language; searched as asked"))
        return (out if ok else text), Usage.of(result, time.perf_counter() - t0)

    def _generate(self, question: str, hits: list[Hit], lang: str, s: AnswerSettings, history: str,
                  query: str | None, on_text: Callable[[str], None] | None,
                  basis: Any = None) -> tuple[Any, list[Step], dict]:
        """The model's answer (cut at a repeated-line loop or at ``s.time_cap_s``); on a prompt too long for the
        context: halve the evidence, then drop the lowest-ranked articles, then shorten whole articles (a
        quoted basis is short: its prompt is sent as it is)."""
        from legalrag.llm.stream import stream_chat

        steps: list[Step] = []
        n_ctx = getattr(self.llm, "n_ctx", None)
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
                result = stream_chat(self.llm, request, on_piece, time_cap_s=s.time_cap_s, cut_loops=True)
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


def engine_for(llm: LLM, index: Any = None, *, retriever: str | None = None, search: Search | None = None,
               filter: Any = None, resolver: Any = None, documents: Iterable[Any] | None = None,
               settings: AnswerSettings = DEFAULTS, lang: str | None = None, support: Any = None,
               selector: Any = None, versions: Any = None) -> AnswerEngine:
    """The answer engine of every path that answers (the one place an :class:`AnswerEngine` is built).

    Retrieval: ``search(query, k) -> hits`` when given (a caller's own pipeline, e.g. the server's, which
    reports each search); else, with ``index``, the index's pipeline (its default component unless
    ``retriever`` names another, ``filter`` applied), with the "not covered" floor calibrated for that
    component (``guard.RELEVANCE_THRESHOLDS``); else none (the caller passes the hits to ``answer``).
    Citations: checked by ``resolver`` (or a zero-argument function making one), else the index's resolver
    (:func:`resolver_for`), else one over ``documents``. Languages: the corpus is the index's (``zh`` or
    ``en``; ``zh`` when it records neither), else ``lang``; ``lang`` (the answer language when a question's own
    cannot be told) defaults to the corpus's. The legal basis: chosen by ``selector`` (an
    ``answer.select.ArticleSelector``, or a zero-argument function making one), else, over an index with
    ``settings.select`` and at least ``SELECTOR_MIN_ARTICLES`` articles (the national corpus it was trained on),
    by the shipped selector loaded on first use (:func:`shipped_selector`; a missing or altered file is a notice
    and the retrieval order); else the retrieval order; the limitation-period article is found in the index's
    (or ``documents``') corpus. ``support``: the support model of the marks, the conclusion's check and the
    selector (the root's ``wiring.make_support_scorer()``; None: the lexical model for the marks and the check,
    and for the shipped selector the full model over the index's own dense encoder). An index read as of a past
    day (``retrieval.dated``) gives the engine that day (``as_of``); ``versions`` (a ``laws.Library`` or a function
    loading it) then gives each citation its currency mark as of that day."""
    min_score = None
    docs = list(documents) if documents is not None else None
    if search is None and index is not None:
        from legalrag.answer.guard import RELEVANCE_THRESHOLDS
        from legalrag.retrieval.pipeline import build_pipeline, resolve_component

        component = resolve_component(index, retriever)
        pipeline = build_pipeline(index, retriever=component)
        min_score = RELEVANCE_THRESHOLDS.get(component)
        search = (lambda q, k: list(pipeline.search(q, k=k, filter=filter))) if filter is not None else \
            (lambda q, k: list(pipeline.search(q, k=k)))
    corpus = None
    if index is not None:
        corpus = (index.manifest.get("lang") if getattr(index, "manifest", None) else None) or "zh"
        corpus = corpus if corpus in ("zh", "en") else "zh"
    lang = lang or corpus or "zh"
    if resolver is None and index is not None:
        resolver = lambda: resolver_for(index)  # noqa: E731 (built on a thread while the model generates)
    elif resolver is None and docs is not None:
        from legalrag.citecheck import CitationResolver

        resolver = lambda: CitationResolver.from_documents(docs)  # noqa: E731
    limitation = None
    if index is not None or documents is not None:
        from legalrag.answer.basis import limitation_article

        pool = index.documents if index is not None else docs
        limitation = lambda: limitation_article(pool)  # noqa: E731 (found on first use)
    if selector is None and settings.select and index is not None and len(index.documents) >= SELECTOR_MIN_ARTICLES:
        selector = lambda: shipped_selector(index, support)  # noqa: E731 (loaded on the first question)
    return AnswerEngine(llm, search, resolver=resolver, lang=lang, settings=settings, support=support,
                        corpus_lang=corpus, min_score=min_score, selector=selector, limitation=limitation,
                        as_of=getattr(index, "as_of", None), versions=versions)


_SELECTORS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
# the shipped selector learned its priors and neighbours on the national corpus (55,515 articles, ids by position):
# an index far smaller (a sample, a user's own documents) keeps the retrieval order
SELECTOR_MIN_ARTICLES = 10_000


def index_encoder(index: Any) -> Any:
    """The encoder of an index's loaded dense component (the one the support pair model shares), or None."""
    for name in getattr(index, "names", ()):
        try:
            comp = index.retriever(name) if name.startswith("dense") else None
        except Exception:
            comp = None
        enc = getattr(comp, "encoder", None)
        if enc is not None and hasattr(enc, "encode_queries"):
            return enc
    return None


def shipped_selector(index: Any, support: Any = None) -> Any:
    """The shipped decisive-article selector for ``index`` (one per opened index), its support model over the
    index's dense encoder; raises (a ``ModelError`` naming the file and the fix) when a file is missing or
    altered."""
    from legalrag.answer.select import load_selector

    with _RESOLVER_LOCK:
        try:
            return _SELECTORS[index]
        except (KeyError, TypeError):
            pass
        selector = load_selector(support=support, encoder=index_encoder(index) if support is None else None,
                                 index=index)  # the articles' vectors from the index: 0.1 s, not 10 s, a question
        try:
            _SELECTORS[index] = selector
        except TypeError:
            pass
        return selector
