"""The QA modes as bounded loops that return their whole trajectory.

- simple: query agent -> search agent -> summary (one pass);
- multi: query agent -> [search -> judge -> refine] up to ``max_rounds`` -> summary;
- multiple choice (``answer_mcq``): the same, ending in a letter and a short rationale; plus the closed-book
  ``zero-shot`` and ``cot`` baselines.
Nothing configured, every source failing or nothing found still ends in a valid QAResult that says what could
not be established.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from legalrag.agents.qa.evidence import usable
from legalrag.agents.qa.injection import Injection, flag_injected, screen
from legalrag.agents.qa.judge_agent import judge
from legalrag.agents.qa.language import language_name, message, source_langs, target_lang, text_lang
from legalrag.agents.qa.mcq import choose, choose_cot
from legalrag.agents.qa.models import SearchIntent
from legalrag.agents.qa.query_agent import plan_queries
from legalrag.agents.qa.search_agent import run_searches
from legalrag.agents.qa.summary_agent import check_source_citations, summarise_evidence
from legalrag.errors import InputError, LegalRagError
from legalrag.io import write_jsonl
from legalrag.llm.base import LLM
from legalrag.llm.usage import MeteredLLM
from legalrag.search.base import SearchResult, SearchSource
from legalrag.serialize import citation_to_dict, step_to_dict
from legalrag.types import Answer, Hit, Response, Step, Usage

class QAMode(str, enum.Enum):
    """``simple``: one search pass then an answer; ``multi``: search, judge the evidence, refine, answer."""

    SIMPLE = "simple"
    MULTI = "multi"


MODES = tuple(m.value for m in QAMode)
MAX_QUESTION_CHARS = 20_000  # a question, not a document: longer text belongs in the searched sources
MCQ_MODES = ("zero-shot", "cot", "simple", "multi")


@dataclass(frozen=True)
class QAResult(Response):
    """An answer (``text``) with numbered citations checked against the evidence it was given: ``evidence`` are
    the search results as found (URL, date, source type), ``sources`` the same as hits, in the same order."""

    mode: str = "simple"
    evidence: tuple[SearchResult, ...] = ()
    unsupported: tuple[str, ...] = ()
    not_established: tuple[str, ...] = ()
    choice: str | None = None  # multiple choice only
    problems: tuple[str, ...] = field(default_factory=tuple)  # sources that could not be used
    injections: tuple[dict, ...] = ()  # text addressed to the model found in sources (removed before use)

    @classmethod
    def build(cls, *, evidence: Sequence[SearchResult] = (), usage: Usage = Usage(), seconds: float = 0.0,
              **fields: Any) -> "QAResult":
        hits = tuple(Hit(document=r.to_document(), score=r.score, rank=i, retriever=r.source_type.value)
                     for i, r in enumerate(evidence, 1))
        return cls(evidence=tuple(evidence), sources=hits, usage=usage, timings={"total_s": seconds}, **fields)

    @property
    def answer(self) -> str:
        return self.text

    @property
    def citation_precision(self) -> float | None:
        """Share of the answer's citations that resolve to a retrieved source (None without citations)."""
        return sum(c.resolved for c in self.citations) / len(self.citations) if self.citations else None

    def to_answer(self) -> Answer:
        return Answer(question=self.question, text=self.text, citations=self.citations, sources=self.sources,
                      steps=self.steps, usage=self.usage, timings={"total_s": self.seconds})

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "mode": self.mode, "answer": self.answer, "choice": self.choice,
                "sources": [{"n": i, **r.to_dict()} for i, r in enumerate(self.evidence, 1)],
                "citations": [citation_to_dict(c) for c in self.citations], "unsupported": list(self.unsupported),
                "not_established": list(self.not_established), "problems": list(self.problems),
                "injections": list(self.injections),
                "citation_precision": self.citation_precision, "llm_calls": self.llm_calls,
                "seconds": round(self.seconds, 3), "steps": [step_to_dict(s) for s in self.steps]}


def save_trace(path: str | Path, result: QAResult) -> None:
    """The trajectory as JSONL, one step per line."""
    write_jsonl(path, [step_to_dict(s) for s in result.steps])


class _Run:
    """Shared state of one run: the counting LLM, the steps so far and a clock."""

    def __init__(self, llm: LLM):
        self.llm = MeteredLLM(llm)
        self.steps: list[Step] = []
        self.injections: list[Injection] = []
        self.t0 = time.perf_counter()

    def screened(self, kept: list[SearchResult], offset: int) -> list[SearchResult]:
        """``kept`` with text addressed to the model removed (numbered after ``offset`` earlier sources)."""
        t = time.perf_counter()
        clean, found = screen(kept, offset)
        self.injections.extend(found)
        if found:
            self.step("judge", "screen", len(kept), [f.to_dict() for f in found], t)
        return clean

    def step(self, agent: str, action: str, inp: Any, out: Any, t: float, error: str | None = None) -> None:
        self.steps.append(Step(agent=agent, action=action, input=inp, output=out,
                               seconds=time.perf_counter() - t, error=error))


def _gather(run: _Run, question: str, sources: Mapping[str, SearchSource], mode: str, max_rounds: int,
            clarifications: Sequence[str], k: int, fetch_top: int) -> tuple[list[SearchResult], list[str]]:
    """Query planning, search and (multi mode) judging; the usable evidence and the gaps still open."""
    t = time.perf_counter()
    qlang = text_lang(question)
    langs = source_langs(sources, qlang)
    intents, err = plan_queries(run.llm, question, list(sources), clarifications, langs=langs)
    run.step("query", "plan", question, [i.model_dump() for i in intents], t, err)
    any_lang = target_lang("any", langs, qlang)
    evidence: list[SearchResult] = []
    gaps: list[str] = []
    rounds = 1 if mode == "simple" else max(1, max_rounds)
    for rnd in range(1, rounds + 1):
        found, search_steps = run_searches(intents, sources, k=k, fetch_top=fetch_top, seen=evidence)
        run.steps.extend(search_steps)
        t = time.perf_counter()
        kept, dropped = usable(found)
        run.step("judge", "filter", len(found), {"kept": len(kept), "dropped": dropped}, t)
        evidence.extend(run.screened(kept, len(evidence)))
        if mode == "simple":
            break
        t = time.perf_counter()
        try:
            verdict = judge(run.llm, question, evidence[:8], query_lang=any_lang)
        except LegalRagError as exc:
            run.step("judge", "verdict", rnd, None, t, str(exc))
            break
        run.step("judge", "verdict", rnd, verdict.model_dump(), t)
        gaps = [f"{m}: {verdict.reason}" for m in verdict.missing] if not verdict.sufficient else []
        if verdict.sufficient or rnd == rounds:
            break
        next_query = verdict.next_query.strip() or question[:300]
        if any(next_query == i.query for i in intents):
            run.step("judge", "stop", rnd, "refined query repeats an earlier one", time.perf_counter())
            break
        if text_lang(next_query) != any_lang:
            run.step("judge", "stop", rnd, f"refined query {next_query!r} is not in {language_name(any_lang)}",
                     time.perf_counter())
            break
        intents = [SearchIntent(query=next_query, source="any", priority=1)]
    return evidence, gaps


def _not_established(sources: Mapping[str, SearchSource], problems: Sequence[str], evidence, gaps,
                     lang: str = "en") -> list[str]:
    notes = list(problems)
    if not sources:
        notes.append(message("no_source", lang))
    elif not evidence:
        notes.append(message("no_evidence", lang))
    notes.extend(message("missing", lang, gap=g) for g in gaps)
    return notes


def run_qa(question: str, llm: LLM, sources: Mapping[str, SearchSource], *, mode: str = "simple",
           max_rounds: int = 3, clarifications: Sequence[str] = (), k: int = 4, fetch_top: int = 3,
           problems: Sequence[str] = (), max_sources: int = 6, max_answer_tokens: int = 400,
           on_text: Callable[[str], None] | None = None) -> QAResult:
    """An answer with numbered citations to retrieved sources, or a statement of what could not be established.
    ``on_text`` receives the summary as it is generated (the searching and judging before it are not text)."""
    if mode not in MODES:
        raise InputError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}", field="mode")
    if not question.strip():
        raise InputError("the question is empty", field="question")
    if len(question) > MAX_QUESTION_CHARS:
        raise InputError(f"the question is {len(question):,} characters; the limit is {MAX_QUESTION_CHARS:,}. Ask "
                         "the question itself and put long material in a document folder (--docs)", field="question")
    run = _Run(llm)
    evidence, gaps = _gather(run, question, sources, mode, max_rounds, clarifications, k, fetch_top) \
        if sources else ([], [])
    return _answer(run, question, mode, evidence[:max_sources], gaps, _not_established(
        sources, problems, evidence, gaps, text_lang(question)), problems, max_answer_tokens, on_text)


answer_question = run_qa  # the former name (it collided with legalrag.answer.question.answer_question); use run_qa


def answer_with_evidence(question: str, llm: LLM, evidence: Sequence[SearchResult], *,
                         max_answer_tokens: int = 400, screen_injections: bool = True) -> QAResult:
    """The answering stage alone, over ``evidence`` as if it had been retrieved (error pages dropped, text
    addressed to the model removed): for evaluating answers and their citations on fixed sources.
    ``screen_injections=False`` leaves that text in (to measure what the screen is worth)."""
    run = _Run(llm)
    t = time.perf_counter()
    kept, dropped = usable(evidence)
    run.step("judge", "filter", len(evidence), {"kept": len(kept), "dropped": dropped}, t)
    if screen_injections:
        kept = run.screened(kept, 0)
    notes = [] if kept else [message("no_evidence", text_lang(question))]
    return _answer(run, question, "evidence", kept, [], notes, (), max_answer_tokens)


def _answer(run: _Run, question: str, mode: str, evidence: list[SearchResult], gaps: list[str], notes: list[str],
            problems: Sequence[str], max_answer_tokens: int,
            on_text: Callable[[str], None] | None = None) -> QAResult:
    """The summary over ``evidence`` (the numbering it cites), its citations checked and planted ones flagged."""
    lang = text_lang(question)
    injections = [i for i in run.injections if i.source <= len(evidence)]
    failed = None
    if evidence:
        t = time.perf_counter()
        try:
            text = summarise_evidence(run.llm, question, evidence, gaps="; ".join(gaps), max_tokens=max_answer_tokens,
                                      on_text=on_text)
        except LegalRagError as exc:  # the model failed or hung: the run ends with what it found, and says so
            failed = str(exc)
            run.step("summary", "answer", len(evidence), None, t, failed)
        else:
            citations, unsupported = check_source_citations(text, evidence)
            citations = flag_injected(citations, injections)
            run.step("summary", "answer", len(evidence), {"chars": len(text), "citations": len(citations),
                                                          "unsupported": len(unsupported)}, t)
    if failed is not None:
        notes = [*notes, message("model_failed", lang, error=failed)]
    if not evidence or failed is not None:
        sep = "" if lang == "zh" else " "
        text, citations, unsupported = sep.join([message("no_answer", lang), *notes]), [], []
    return QAResult.build(question=question, mode=mode, text=text, evidence=evidence, citations=tuple(citations),
                          unsupported=tuple(unsupported), not_established=tuple(notes), steps=tuple(run.steps),
                          usage=run.llm.usage, seconds=time.perf_counter() - run.t0, problems=tuple(problems),
                          injections=tuple(i.to_dict() for i in injections))


def _gather_mcq(run: _Run, question: str, choices: Mapping[str, str], sources: Mapping[str, SearchSource],
                k: int, per_option: int, max_sources: int) -> tuple[list[SearchResult], dict[str, list[str]]] | None:
    """Evidence for a multiple-choice question without a planning call: the stem, and the stem followed by each
    choice (a choice names the rule it tests), searched in every source; per choice its best ``per_option``
    new results, then the stem's, pooled up to ``max_sources``. ``(evidence, result ids by letter)``; None when
    a source is in another language than the question (the query agent must then write the queries)."""
    qlang = text_lang(question)
    langs = source_langs(sources, qlang)
    if any(lang != qlang for lang in langs.values()):
        return None
    queries = {"": question, **{letter: f"{question} {text}" for letter, text in choices.items()}}
    found: dict[str, list[SearchResult]] = {}
    for key, query in queries.items():
        results, steps = run_searches([SearchIntent(query=query, source="any", priority=1)], sources, k=k,
                                      fetch_top=0)
        run.steps.extend(steps)
        found[key] = results
    evidence: list[SearchResult] = []
    by_option: dict[str, list[str]] = {letter: [] for letter in choices}
    seen: set[str] = set()
    for letter in choices:  # each choice's best articles first, so every choice is checked against some
        for r in found[letter][:per_option]:
            by_option[letter].append(r.id)
            if r.id not in seen and len(evidence) < max_sources:
                seen.add(r.id)
                evidence.append(r)
    for letter in choices:  # the rest of each choice's results, as far as they are shown
        for r in found[letter][per_option:]:
            if r.id in seen:
                by_option[letter].append(r.id)
    for r in found[""]:
        if r.id not in seen and len(evidence) < max_sources:
            seen.add(r.id)
            evidence.append(r)
    t = time.perf_counter()
    kept, dropped = usable(evidence)
    run.step("judge", "filter", len(evidence), {"kept": len(kept), "dropped": dropped}, t)
    return run.screened(kept, 0), by_option


def answer_mcq(question: str, choices: Mapping[str, str], llm: LLM, sources: Mapping[str, SearchSource] | None = None,
               *, mode: str = "simple", max_rounds: int = 2, k: int = 3, fetch_top: int = 3,
               max_sources: int = 8, per_option: int = 2) -> QAResult:
    """A letter and a one-or-two-sentence rationale in the question's language; ``mode`` is zero-shot, cot,
    simple or multi. With sources, simple mode searches the stem and the stem with each choice (no planning
    call) when the sources are in the question's language, and the answer step sees which articles were found
    for which choice; multi mode adds the query agent's search, judge and refine rounds."""
    if mode not in MCQ_MODES:
        raise InputError(f"unknown mode {mode!r}; use one of {', '.join(MCQ_MODES)}", field="mode")
    if len(choices) < 2:
        raise InputError("a multiple-choice question needs at least two choices", field="choices")
    run = _Run(llm)
    sources = sources or {}
    evidence: list[SearchResult] = []
    gaps: list[str] = []
    t = time.perf_counter()
    if mode == "zero-shot":
        letter, rationale, err = choose(run.llm, question, choices, None)
    elif mode == "cot":
        letter, rationale = choose_cot(run.llm, question, choices)
        err = None if letter else "no answer letter in the reasoning"
    else:
        by_option: dict[str, list[str]] | None = None
        if sources:
            pooled = _gather_mcq(run, question, choices, sources, k, per_option, max_sources)
            if pooled is not None:
                evidence, by_option = pooled
            if pooled is None or mode == "multi":
                more, gaps = _gather(run, question, sources, mode, max_rounds, (), k, fetch_top)
                known = {r.id for r in evidence}
                evidence = (evidence + [r for r in more if r.id not in known])[:max_sources]
        t = time.perf_counter()
        letter, rationale, err = choose(run.llm, question, choices, evidence, max_chars=300, by_option=by_option)
    run.step("answer", mode, question, {"choice": letter, "rationale": rationale}, t, err)
    citations, unsupported = check_source_citations(rationale, evidence) if evidence else ([], [])
    notes = _not_established(sources, (), evidence, gaps, text_lang(question)) if mode in MODES else []
    return QAResult.build(question=question, mode=mode, text=rationale, evidence=evidence,
                          citations=tuple(citations), unsupported=tuple(unsupported), not_established=tuple(notes),
                          steps=tuple(run.steps), choice=letter, usage=run.llm.usage,
                          seconds=time.perf_counter() - run.t0)
