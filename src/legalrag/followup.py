"""The ``carry`` conversation processor: a follow-up keeps the articles the consultation has established while
the topic holds, and lets them go when the new question moves on.

Real consultations move: each later turn tends to raise a new point in a few elliptical words ("那最多能要几个月？",
"他这样合法吗？"). Searching the last question alone loses what "那" refers to; searching every question together
drowns the new point in the old ones. ``carry`` (no LLM call) fuses, by weighted reciprocal rank
(:func:`legalrag.conversation.fuse_turns`):

- the last question (weight 1) and the last question behind the previous one (``context_weight``: what "那" and
  "他" refer to, in the words the user used);
- the earlier questions and answers, with decaying weights, as ``fused`` does, and their laws as a prior;
- the **established articles**: the top ``carry_top`` articles this processor retrieved for each earlier turn
  (recomputed from the history, so a stateless HTTP call gets the same result as a live chat) and the articles
  the earlier answers cite (``cited``: answer text -> documents, e.g. through the corpus's citation resolver).
  They enter as one more ranked list whose weight a follow-up detector sets: ``carry_same`` when the new question
  looks like the same issue, narrower (its own top hits meet the established articles, it is too short to carry
  a point of its own, or it is written in another language than the earlier turns), else ``carry_new``; on a new
  point the earlier turns' searches are weighed down by ``history_new`` (a factor) and the law prior drops to
  ``law_prior_new``.

:attr:`FollowUp.last_trace` says, after each call, which queries were searched, which established articles
were carried into the top ``k`` and what the detector decided; the CLI, ``POST /consult`` and the web chat show it.
History is bounded: only the last ``max_turns`` earlier turns are searched or carried, so a 30-turn consultation
costs the same per turn as a five-turn one.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from legalrag.errors import InputError
from legalrag.types import Document, Hit, Search, Turn

Cited = Callable[[str], Sequence[Document]]

_CJK = re.compile(r"[\u4e00-\u9fff]")
# Words that carry no point of their own in a follow-up: openers, pronouns, question words, particles.
_FILLER = re.compile(r"那么|那如果|如果|还有|另外|对了|这样|这种|这个|那个|这些|他们|她们|它们|我们|什么|怎么|怎样|如何|"
                     r"哪些|多少|是否|能否|可以|可不可以|能不能|会不会|应该|需要|的话|情况|吗|呢|吧|啊|了|的|是|"
                     r"[那这他她它我你您要能会还又再也都就]|[\s，。？！?!,.、：:；;“”\"'（）()]")


def content_chars(question: str) -> int:
    """How many characters of ``question`` are left once openers, pronouns and question words are removed."""
    return len(_FILLER.sub("", question))


@dataclass(frozen=True)
class FollowUpTrace:
    """What the processor did for the last turn: shown to the user beside the answer."""

    searched: tuple[str, ...] = ()  # the query texts of the new question (the last question, and with context)
    carried: tuple[str, ...] = ()  # established articles (ids) that made the top k
    established: tuple[str, ...] = ()  # every established article (ids) offered, most recent turn first
    same_issue: bool | None = None  # the detector's decision; None on a first question
    reason: str = ""

    def to_dict(self, titles: dict[str, str] | None = None) -> dict[str, Any]:
        titles = titles or {}
        return {"searched": list(self.searched), "same_issue": self.same_issue, "reason": self.reason,
                "carried": [{"id": i, "title": titles.get(i, i)} for i in self.carried]}


@dataclass
class _Memo:
    hits: "OrderedDict[tuple, list[Hit]]" = field(default_factory=OrderedDict)


class FollowUp:
    """``carry``: the last question, its context, the earlier turns, and the established articles, fused."""

    name = "carry"

    def __init__(self, *, context_weight: float = 0.5, question_decay: float = 0.2, answer_weight: float = 0.25,
                 law_prior: float = 2.0, carry_same: float = 1.0, carry_new: float = 0.25, carry_top: int = 3,
                 law_prior_new: float = 0.5, history_new: float = 0.25,
                 short_question: int = 6, overlap_top: int = 10, max_turns: int = 4, law_top: int = 5,
                 depth: int = 100, rrf_k: int = 60, cited: Cited | None = None, cache_size: int = 1024):
        for label, value in (("context_weight", context_weight), ("question_decay", question_decay),
                             ("answer_weight", answer_weight), ("law_prior", law_prior), ("carry_same", carry_same),
                             ("carry_new", carry_new), ("short_question", short_question),
                             ("law_prior_new", law_prior_new), ("history_new", history_new)):
            if value < 0:
                raise InputError(f"{label} must be 0 or more, got {value}")
        for label, value in (("carry_top", carry_top), ("overlap_top", overlap_top), ("max_turns", max_turns),
                             ("law_top", law_top), ("depth", depth), ("rrf_k", rrf_k)):
            if value < 1:
                raise InputError(f"{label} must be at least 1, got {value}")
        self.context_weight, self.question_decay, self.answer_weight = context_weight, question_decay, answer_weight
        self.law_prior, self.carry_same, self.carry_new, self.carry_top = law_prior, carry_same, carry_new, carry_top
        self.short_question, self.overlap_top, self.max_turns = short_question, overlap_top, max_turns
        self.law_top, self.depth, self.rrf_k, self.cited = law_top, depth, rrf_k, cited
        self.law_prior_new, self.history_new = law_prior_new, history_new
        self._cache: OrderedDict[tuple[int, str], list[Hit]] = OrderedDict()
        self._memo: OrderedDict[tuple, tuple[list[Hit], FollowUpTrace]] = OrderedDict()
        self._cited_memo: OrderedDict[str, list[Document]] = OrderedDict()
        self._cache_size = cache_size
        self.searches = 0
        self.last_trace = FollowUpTrace()

    def params(self) -> dict[str, Any]:
        return {"context_weight": self.context_weight, "question_decay": self.question_decay,
                "answer_weight": self.answer_weight, "law_prior": self.law_prior, "carry_same": self.carry_same,
                "carry_new": self.carry_new, "carry_top": self.carry_top, "short_question": self.short_question,
                "overlap_top": self.overlap_top, "max_turns": self.max_turns, "law_prior_new": self.law_prior_new,
                "history_new": self.history_new}

    # -- the query text (for processors that make one string; shown to the user) --------------------------------
    def __call__(self, turns: Sequence[Turn]) -> str:
        from legalrag.conversation import _questions_answers

        questions, _ = _questions_answers(turns)
        return self._context_query(questions) or questions[-1]

    def _context_query(self, questions: Sequence[str]) -> str | None:
        if len(questions) < 2 or self.context_weight <= 0:
            return None
        return f"{questions[-2]} {questions[-1]}"

    # -- every text a call searches (so a benchmark can run them once, in one batch) ----------------------------
    def queries(self, turns: Sequence[Turn]) -> list[tuple[str, float, bool]]:
        from legalrag.conversation import _questions_answers

        questions, answers = _questions_answers(turns)
        out: dict[str, tuple[str, float, bool]] = {}
        for n in range(max(1, len(questions) - self.max_turns), len(questions) + 1):
            for item in self._runs(questions[:n], answers[:n - 1]):
                out.setdefault(item[0], item)
        return list(out.values())

    def _runs(self, questions: Sequence[str], answers: Sequence[str]) -> list[tuple[str, float, bool]]:
        out = [(questions[-1], 1.0, True)]
        context = self._context_query(questions)
        if context:
            out.append((context, self.context_weight, False))
        for j, q in enumerate(reversed(questions[:-1][-self.max_turns:]), 1):
            out.append((q, self.question_decay ** j, False))
        for j, a in enumerate(reversed(answers[-self.max_turns:]), 1):
            out.append((a, self.answer_weight * self.question_decay ** (j - 1), False))
        return [x for x in out if x[1] > 0]

    def _search(self, search: Search, text: str) -> list[Hit]:
        key = (id(search), text)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        hits = list(search(text, self.depth))
        self.searches += 1
        self._cache[key] = hits
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return hits

    def _cited(self, answer: str) -> list[Document]:
        if self.cited is None or not answer:
            return []
        if answer not in self._cited_memo:
            self._cited_memo[answer] = list(self.cited(answer))
            if len(self._cited_memo) > self._cache_size:
                self._cited_memo.popitem(last=False)
        return self._cited_memo[answer]

    # -- the follow-up detector ---------------------------------------------------------------------------------
    def same_issue(self, questions: Sequence[str], last_hits: Sequence[Hit], established: Sequence[str]) -> tuple[bool, str]:
        """Whether the last question continues the established issue (then its articles are carried at full
        weight) or raises a new point, and why."""
        question = questions[-1]
        if not _CJK.search(question) and any(_CJK.search(q) for q in questions[:-1]):
            return True, "written in another language than the earlier turns"
        if content_chars(question) <= self.short_question:
            return True, "too short to raise a point of its own"
        own = {h.id for h in last_hits[:self.overlap_top]}
        shared = [i for i in established if i in own]
        if shared:
            return True, f"its own search finds {len(shared)} established article(s)"
        return False, "a new point: its own search meets none of the established articles"

    # -- retrieval ----------------------------------------------------------------------------------------------
    def retrieve(self, search: Search, turns: Sequence[Turn], k: int = 10) -> list[Hit]:
        """The top ``k`` for the last question of ``turns``; :attr:`last_trace` says what was carried."""
        from legalrag.conversation import _questions_answers

        questions, answers = _questions_answers(turns)
        hits, trace = self._retrieve(search, tuple(questions), tuple(answers[:len(questions) - 1]), k)
        self.last_trace = trace
        return hits

    def _retrieve(self, search: Search, questions: tuple[str, ...], answers: tuple[str, ...],
                  k: int) -> tuple[list[Hit], FollowUpTrace]:
        from legalrag.conversation import fuse_turns

        key = (id(search), questions, answers, k)
        if key in self._memo:
            self._memo.move_to_end(key)
            return self._memo[key]
        runs = [(self._search(search, text), weight, last) for text, weight, last in self._runs(questions, answers)]
        context = self._context_query(questions)
        searched = (questions[-1],) + ((context,) if context else ())
        if len(questions) == 1:
            hits = fuse_turns(runs, k, rrf_k=self.rrf_k)
            result = (hits, FollowUpTrace(searched=searched))
        else:
            established: dict[str, Document] = {}
            start = max(1, len(questions) - self.max_turns)
            for n in range(len(questions) - 1, start - 1, -1):  # the most recent earlier turn first
                for d in self._cited(answers[n - 1] if n - 1 < len(answers) else ""):
                    established.setdefault(d.id, d)
                earlier, _ = self._retrieve(search, questions[:n], answers[:n - 1], max(k, self.carry_top))
                for h in earlier[:self.carry_top]:
                    established.setdefault(h.id, h.document)
            same, reason = self.same_issue(questions, runs[0][0], list(established))
            weight = self.carry_same if same else self.carry_new
            if not same:  # a new point: the earlier turns and their laws count for less
                runs = [(h, w if last else w * self.history_new, last) for h, w, last in runs]
            carry = [Hit(d, 0.0, r, "carried") for r, d in enumerate(established.values(), 1)]
            if carry and weight > 0:
                runs.append((carry, weight, False))
            hits = fuse_turns(runs, k, rrf_k=self.rrf_k, law_prior=self.law_prior if same else self.law_prior_new,
                              law_top=self.law_top)
            carried = tuple(h.id for h in hits if h.id in established)
            result = (hits, FollowUpTrace(searched, carried, tuple(established), same, reason))
        self._memo[key] = result
        if len(self._memo) > self._cache_size:
            self._memo.popitem(last=False)
        return result


def cited_documents(resolver: Any) -> Cited:
    """``answer text -> documents`` it cites that resolve in the corpus, through a ``CitationResolver`` (or a
    zero-argument function that returns one, called on first use)."""
    state: dict[str, Any] = {}

    def cited(text: str) -> list[Document]:
        if "resolver" not in state:
            state["resolver"] = resolver() if callable(resolver) and not hasattr(resolver, "lookup") else resolver
        r = state["resolver"]
        out: dict[str, Document] = {}
        for m in r.extract(text):
            doc = r.lookup(m.citation).document
            if doc is not None:
                out.setdefault(doc.id, doc)
        return list(out.values())

    return cited
