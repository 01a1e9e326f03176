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

The steps have their own modules: the prompt (:mod:`legalrag.answer.prompt`), the model's calls
(:mod:`legalrag.answer.generation`), the guided answer's basis and checks (:mod:`legalrag.answer.guided`), and what
is built once per opened index (:mod:`legalrag.answer.per_index`).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Iterable, Sequence

from legalrag.answer.generation import generate, translate
from legalrag.answer.guided import basis_head, checked_answer, choose_basis, quoted_citations, shown_sources
from legalrag.answer.per_index import SELECTOR_MIN_ARTICLES, resolver_for, shipped_selector
from legalrag.answer.prompt import history_text
from legalrag.errors import InputError
from legalrag.lang import detect_language
from legalrag.llm.base import LLM
from legalrag.types import DEFAULTS, Answer, AnswerSettings, Hit, Search, Step, Turn, Usage


def question_language(question: str, index: Any = None) -> str:
    """"zh" or "en": the language to answer ``question`` in, its own (the index's when it has no letters)."""
    lang = (getattr(index, "manifest", None) or {}).get("lang")
    return answer_language(question, lang if lang in ("zh", "en") else "zh")


def answer_language(question: str, default: str = "zh") -> str:
    """The question's own language (``zh`` or ``en``); ``default`` for a question with no letters at all."""
    if not any(ch.isalpha() for ch in question):
        return default
    return detect_language(question)


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
            basis = choose_basis(search_query or query or question, candidates, selector, s, steps,
                                 corpus_lang=self.corpus_lang, find_limitation=self.limitation)
        hits = shown_sources(candidates, basis, s.k)
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
            result, gen_steps, gen = generate(self.llm, question, hits, lang, s, history_block, query, on_text, basis)
            steps += gen_steps
            hits = gen["hits"]
            text = result.text.strip()
            if basis is not None:
                text, fallback, not_from_law = checked_answer(self.support, question, text, head, basis, lang, steps,
                                                              on_text, result.finish_reason)
        t2 = time.perf_counter()
        retrieved_ids = [h.id for h in candidates] + basis.ids if basis is not None else [h.id for h in hits]
        if basis is None:
            citations = tuple(mark_citations(text, self.resolver, self.support, retrieved_ids))
        else:  # the quoted articles are marked as quoted; the model's own citations are checked as any answer's
            body = "" if fallback else text[len(basis_head(basis, lang)):]
            citations = tuple(quoted_citations(basis, lambda: self.resolver)) + tuple(
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
        """``text`` in the corpus's language, by the model (:func:`legalrag.answer.generation.translate`)."""
        return translate(self.llm, self.corpus_lang, text, steps)

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
