"""A reference-based LLM judge for consultation answers, and figures of how far it can be trusted.

The judge (prompt ``consultation_judge_zh``) sees the dialogue history, the question, a reference answer that
stands for a score of 8, and the response. It first compares the response with the reference and names its
shortcomings (the ``analysis`` field comes first in the JSON, so the scores are written after it), then
gives integer scores 1-10 on five dimensions; it is told that longer is not better. Replies are validated
through ``llm.structured`` with bounded re-asks; a reply that never validates is a counted failure that keeps
its raw text, never a silent 0.

Reliability (pure functions over judgements): :func:`spread` (how much the scores vary at all),
:func:`agreement` (two runs with different seeds, or two judges, on the same items) and the mean score of
the reference judged against itself (ideally 8 on every dimension, since the reference defines 8).
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from legalrag.errors import StructuredOutputError
from legalrag.llm.base import LLM
from legalrag.types import Usage

ANALYSIS_MAX_CHARS = 200
DIMENSIONS = ("factuality", "user_satisfaction", "clarity", "logical_coherence", "completeness")


class JudgeVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    # bounded: a small judge otherwise repeats itself past max_tokens and never closes the JSON
    analysis: str = Field(max_length=ANALYSIS_MAX_CHARS,
                          description="Shortcomings of the response compared with the reference, written first")
    factuality: int = Field(ge=1, le=10)
    user_satisfaction: int = Field(ge=1, le=10)
    clarity: int = Field(ge=1, le=10)
    logical_coherence: int = Field(ge=1, le=10)
    completeness: int = Field(ge=1, le=10)


@dataclass(frozen=True)
class Judgement:
    """The judge's verdict on one item, or a failure with every raw reply."""

    item_id: str
    scores: Mapping[str, int] | None
    analysis: str = ""
    attempts: int = 0
    raw: tuple[str, ...] = ()
    error: str | None = None
    seconds: float = 0.0
    usage: Usage = field(default_factory=Usage)

    @property
    def failed(self) -> bool:
        return self.scores is None

    def to_dict(self) -> dict[str, Any]:
        return {"item_id": self.item_id, "scores": dict(self.scores) if self.scores else None,
                "analysis": self.analysis, "attempts": self.attempts, "failed": self.failed,
                "error": self.error, "raw": list(self.raw) if self.failed else [], "seconds": self.seconds,
                "usage": self.usage.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Judgement":
        return cls(str(d["item_id"]), d.get("scores"), d.get("analysis", ""), int(d.get("attempts", 0)),
                   tuple(d.get("raw") or ()), d.get("error"), float(d.get("seconds", 0.0)))


def judge_messages(history: str, question: str, reference: str, response: str) -> list[dict[str, str]]:
    from legalrag.prompts import load_prompt

    return load_prompt("consultation_judge_zh").render(history=history, question=question, reference=reference,
                                                       response=response or "（空回答）")


def judge_one(llm: LLM, item_id: str, *, history: str, question: str, reference: str, response: str,
              retries: int = 2, max_tokens: int = 400, temperature: float = 0.0, seed: int | None = None) -> Judgement:
    from legalrag.llm.structured import structured_call

    messages = judge_messages(history, question, reference, response)
    options: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature}
    if seed is not None:
        options["seed"] = seed
    t0 = time.perf_counter()
    try:
        reply = structured_call(llm, messages, JudgeVerdict, retries, **options)
    except StructuredOutputError as exc:
        return Judgement(item_id, None, attempts=retries + 1, raw=tuple(exc.raw), error=str(exc),
                         seconds=time.perf_counter() - t0)
    usage = Usage()
    for r in reply.results:
        usage = usage + Usage.of(r)
    v = reply.value
    # seconds: model time of the calls (from the cache when resumed), else wall time
    from legalrag.evaluation.lexrag.generate import call_seconds

    model_seconds = sum(call_seconds(r, 0.0) for r in reply.results)
    return Judgement(item_id, {d: getattr(v, d) for d in DIMENSIONS}, v.analysis.strip(), reply.attempts,
                     reply.raw, None, model_seconds or time.perf_counter() - t0, usage)


def judge_many(items: Sequence[Mapping[str, str]], llm: LLM, *, progress: bool = False,
               **options: Any) -> list[Judgement]:
    """``items``: dicts with ``item_id``, ``history``, ``question``, ``reference``, ``response``."""
    it: Iterable = items
    if progress:
        from tqdm import tqdm

        it = tqdm(items, desc="judge", unit="answer")
    return [judge_one(llm, x["item_id"], history=x["history"], question=x["question"], reference=x["reference"],
                      response=x["response"], **options) for x in it]


# -- summaries and reliability ------------------------------------------------------------------------------

def summarise_judgements(judgements: Sequence[Judgement]) -> dict[str, Any]:
    """Mean score per dimension over the judgements that validated, their mean (``overall``), and failures."""
    ok = [j for j in judgements if not j.failed]
    out: dict[str, Any] = {d: (statistics.fmean(j.scores[d] for j in ok) if ok else None) for d in DIMENSIONS}
    out["overall"] = statistics.fmean(out[d] for d in DIMENSIONS) if ok else None
    out.update({"n": len(judgements), "judged": len(ok), "failures": len(judgements) - len(ok),
                "re_asked": sum(1 for j in ok if j.attempts > 1)})
    return out


def spread(judgements: Sequence[Judgement]) -> dict[str, dict[str, float]]:
    """Per dimension: standard deviation, number of distinct scores, and the share of the most common score
    (a judge that gives everything 8 has std 0 and mode share 1: it cannot rank anything)."""
    ok = [j for j in judgements if not j.failed]
    out = {}
    for d in DIMENSIONS:
        values = [j.scores[d] for j in ok]
        if not values:
            continue
        mode_share = max(values.count(v) for v in set(values)) / len(values)
        out[d] = {"std": statistics.pstdev(values), "distinct": len(set(values)), "mode_share": mode_share,
                  "min": min(values), "max": max(values)}
    return out


def _pearson(a: Sequence[float], b: Sequence[float]) -> float | None:
    if len(a) < 2:
        return None
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    va, vb = sum((x - ma) ** 2 for x in a), sum((y - mb) ** 2 for y in b)
    if va == 0 or vb == 0:
        return None  # a constant side has no correlation
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / math.sqrt(va * vb)


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1  # ties share their mean rank
        i = j + 1
    return ranks


def spearman(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Spearman's rank correlation (ties share their mean rank); None when either side is constant."""
    return _pearson(_ranks(a), _ranks(b))


def agreement(a: Sequence[Judgement], b: Sequence[Judgement]) -> dict[str, dict[str, float | None]]:
    """Per dimension, over items both judged: Pearson and Spearman correlation, mean absolute difference,
    the share of items within one point, and exact agreement. Items are paired by ``item_id``."""
    by_id = {j.item_id: j for j in b if not j.failed}
    pairs = [(x, by_id[x.item_id]) for x in a if not x.failed and x.item_id in by_id]
    out: dict[str, dict[str, float | None]] = {}
    for d in [*DIMENSIONS, "overall"]:
        if d == "overall":
            xs = [statistics.fmean(p.scores[k] for k in DIMENSIONS) for p, _ in pairs]
            ys = [statistics.fmean(q.scores[k] for k in DIMENSIONS) for _, q in pairs]
        else:
            xs = [float(p.scores[d]) for p, _ in pairs]
            ys = [float(q.scores[d]) for _, q in pairs]
        diffs = [abs(x - y) for x, y in zip(xs, ys)]
        out[d] = {"n": len(pairs), "pearson": _pearson(xs, ys), "spearman": spearman(xs, ys),
                  "mean_abs_diff": statistics.fmean(diffs) if diffs else None,
                  "within_1": sum(x <= 1 for x in diffs) / len(diffs) if diffs else None,
                  "exact": sum(x == 0 for x in diffs) / len(diffs) if diffs else None}
    return out
