"""Evidence selection: each retrieved article cut to the clauses that match the question, under a token budget.

On a 2-core CPU every prompt token costs about 13 ms of prefill, so handing the model whole articles is the
largest avoidable cost of ``ask``. ``select_evidence`` splits each article into clauses (sentences, ``；``
parts, numbered items such as ``（一）``, paragraphs), scores them against the question with BM25 over the
clauses of all retrieved articles, and keeps, in rank order, each article's name and its best clause first,
then the next-best clauses anywhere while the budget lasts. Kept clauses stay in their original order, with
``…`` where text was left out; a clause from a later paragraph is prefixed with its paragraph number
(``第二款：`` / ``para. 2:``) and numbered items keep their numbers, so the model can still cite precisely.
The full article text is untouched in the hits: the citation checker and the UI read it from there.

Token counts are estimates (CJK characters and other characters counted separately, calibrated on the
bundled Qwen tokenizer to err on the high side), so no tokenizer call is needed to build a prompt.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

from legalrag.clauses import split_clauses
from legalrag.errors import InputError
from legalrag.llm.tokens import estimate_tokens
from legalrag.types import Hit, Step

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_ZH_NUM = "一二三四五六七八九十"
GAP = "…"
MIN_CLAUSE_TOKENS = 12  # below this a cut clause says nothing
MIN_EVIDENCE_ROOM = MIN_CLAUSE_TOKENS + 40  # one short clause with its article's name
K1, B = 1.2, 0.75


def _paragraph_label(n: int, lang: str) -> str:
    if lang != "zh":
        return f"para. {n}:"
    return f"第{_ZH_NUM[n - 1] if n <= 10 else n}款："


def default_terms(lang: str) -> Callable[[str], list[str]]:
    """Matching terms without a word segmenter: CJK character bigrams (and single characters of one-character
    runs), lower-cased words elsewhere. Pass the index's tokenizer instead to match the way retrieval did."""

    def terms(text: str) -> list[str]:
        out = [w.lower() for w in _WORD.findall(_CJK_RUN.sub(" ", text)) if len(w) > 1 or not w.isascii()]
        for run in _CJK_RUN.findall(text):
            out.extend(run[i:i + 2] for i in range(len(run) - 1)) if len(run) > 1 else out.append(run)
        return out

    return terms


@dataclass(frozen=True)
class Evidence:
    """What the model sees of one retrieved article."""

    hit: Hit
    label: str
    text: str
    tokens: int
    clauses_kept: int
    clauses_total: int

    @property
    def complete(self) -> bool:
        return self.clauses_kept == self.clauses_total


@dataclass(frozen=True)
class Selection:
    evidence: tuple[Evidence, ...]
    budget: int
    tokens: int
    dropped: tuple[str, ...] = ()  # ids of retrieved articles left out entirely
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass
class _Clause:
    hit_index: int
    position: int
    paragraph: int
    text: str
    score: float
    tokens: int


def _bm25_scores(query: list[str], clauses: list[list[str]]) -> list[float]:
    if not clauses:
        return []
    n = len(clauses)
    avg = sum(map(len, clauses)) / n or 1.0
    df = Counter(t for c in clauses for t in set(c))
    q = set(query)
    scores = []
    for c in clauses:
        tf = Counter(t for t in c if t in q)
        s = 0.0
        for t, f in tf.items():
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            s += idf * f * (K1 + 1) / (f + K1 * (1 - B + B * len(c) / avg))
        scores.append(s)
    return scores


def cut_to_tokens(text: str, tokens: int) -> str:
    """``text`` shortened to about ``tokens`` estimated tokens, ending in ``…``."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) + 1 <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + GAP


def keep_last_tokens(text: str, tokens: int) -> str:
    """The end of ``text`` in about ``tokens`` estimated tokens, starting with ``…`` (a question is at the end of
    what a user pastes)."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[len(text) - mid:]) + 1 <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return GAP + text[len(text) - lo:]


def select_evidence(question: str, hits: Sequence[Hit], *, budget: int, label: Callable[[Hit], str],
                    lang: str = "zh", terms: Callable[[str], list[str]] | None = None,
                    setting: str = "evidence_tokens") -> Selection:
    """Cut ``hits`` to the clauses that best match ``question`` within ``budget`` estimated tokens (labels
    and separators included). ``setting`` names the budget in the error raised when it cannot hold even the
    first article's name and a short piece of its best clause."""
    if not hits:
        return Selection((), budget, 0)
    terms = terms or default_terms(lang)
    per_hit: list[list[_Clause]] = []
    flat: list[_Clause] = []
    for i, h in enumerate(hits):
        cl = [_Clause(i, j, para, text, 0.0, estimate_tokens(text))
              for j, (para, text) in enumerate(split_clauses(h.document.text, lang))]
        per_hit.append(cl)
        flat.extend(cl)
    for c, s in zip(flat, _bm25_scores(terms(question), [terms(c.text) for c in flat])):
        c.score = s
    labels = [f"[{i}] {label(h)}" for i, h in enumerate(hits, 1)]
    header_cost = [estimate_tokens(lb) + 2 for lb in labels]
    need = header_cost[0] + 2 + MIN_CLAUSE_TOKENS  # the name, its separators and one short clause
    if budget < need:
        raise InputError(f"{setting} = {budget} is too small for any evidence: the first retrieved article's "
                         f"name and a short clause need about {need} tokens. Raise it to at least {need} (a few "
                         "hundred keeps several articles)", field=setting)

    chosen: dict[int, dict[int, str]] = {}  # hit -> position -> text (maybe cut)
    used = 0
    # Pass 1: every article, in rank order, gets its name and its best clause (ties: the earliest clause),
    # cut to a fair share of the budget so that one long clause cannot crowd out the articles after it.
    share = max(MIN_CLAUSE_TOKENS, budget // len(hits) - max(header_cost))
    cut_positions: set[tuple[int, int]] = set()
    for i, clauses in enumerate(per_hit):
        if not clauses:
            continue
        best = max(clauses, key=lambda c: (c.score, -c.position))
        room = min(share, budget - used - header_cost[i] - 2)
        if room < MIN_CLAUSE_TOKENS:
            continue
        text = best.text if best.tokens <= room else cut_to_tokens(best.text, room)
        if text is not best.text:
            cut_positions.add((i, best.position))
        chosen[i] = {best.position: text}
        used += header_cost[i] + estimate_tokens(text) + 2
    # Pass 2: cut clauses made whole, then the other clauses of the kept articles, best first (earlier
    # ranks win ties), while the budget lasts.
    rest = sorted((c for c in flat if c.hit_index in chosen and (c.position not in chosen[c.hit_index]
                                                                 or (c.hit_index, c.position) in cut_positions)),
                  key=lambda c: (-c.score, c.hit_index, c.position))
    for c in rest:
        if (c.hit_index, c.position) in cut_positions:
            cost = c.tokens - estimate_tokens(chosen[c.hit_index][c.position])
        else:
            cost = c.tokens + 1 + (0 if c.paragraph == 1 else 3)
        if used + cost <= budget:
            chosen[c.hit_index][c.position] = c.text
            used += cost

    evidence = []
    for i, h in enumerate(hits):
        if i not in chosen:
            continue
        clauses = per_hit[i]
        parts, last, last_para = [], -1, 0
        for c in clauses:
            if c.position not in chosen[i]:
                continue
            if c.position != last + 1:
                parts.append(GAP)
            if c.paragraph > 1 and (c.paragraph != last_para or c.position != last + 1):
                parts.append(_paragraph_label(c.paragraph, lang))
            parts.append(chosen[i][c.position])
            last, last_para = c.position, c.paragraph
        if last != len(clauses) - 1 and not parts[-1].endswith(GAP):
            parts.append(GAP)
        sep = "" if lang == "zh" else " "
        text = sep.join(parts).replace(GAP + sep + GAP, GAP)
        evidence.append(Evidence(h, label(h), text, header_cost[i] + estimate_tokens(text), len(chosen[i]),
                                 len(clauses)))
    dropped = tuple(h.id for i, h in enumerate(hits) if i not in chosen)
    notes = (f"{len(dropped)} retrieved article(s) left out: the evidence budget of {budget} tokens was used up",) \
        if dropped else ()
    return Selection(tuple(evidence), budget, sum(e.tokens for e in evidence), dropped, notes)


def format_evidence(selection: Selection) -> str:
    """The numbered source blocks of the prompt."""
    return "\n\n".join(f"[{i}] {e.label}\n{e.text}" for i, e in enumerate(selection.evidence, 1))


def prompt_evidence(question: str, hits: Sequence[Hit], *, budget: int, lang: str, agent: str,
                    room: int | None = None, label: Callable[[Hit], str] | None = None,
                    terms: Callable[[str], list[str]] | None = None,
                    setting: str = "evidence_tokens (--evidence-tokens)") -> tuple[str, Step]:
    """The evidence block of a prompt and the ``select_evidence`` step that records it (what ``ask`` and a
    consultation both put before the question). ``room`` is what the model's context leaves for evidence
    once the rest of the prompt and the answer are counted: the budget shrinks to it, though never below one
    short clause (a prompt still too long is then the runtime's clear error, not an empty prompt)."""
    if label is None:
        from legalrag.citecheck import citation_label

        def label(h: Hit) -> str:
            return citation_label(h.document)

    if room is not None:
        budget = min(budget, max(room, MIN_EVIDENCE_ROOM))
    selection = select_evidence(question, hits, budget=budget, label=label, lang=lang, terms=terms, setting=setting)
    step = Step(agent, "select_evidence", input={"budget": budget, "sources": [h.id for h in hits]},
                output={"tokens": selection.tokens, "kept": [e.hit.id for e in selection.evidence],
                        "clauses": [[e.clauses_kept, e.clauses_total] for e in selection.evidence],
                        "dropped": list(selection.dropped), "notes": list(selection.notes)})
    return format_evidence(selection), step
