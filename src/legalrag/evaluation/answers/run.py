"""Answer benchmark questions as ``ask`` does, score each answer, write one JSON line per answer (resumable).

``retriever``: :func:`legalrag.answer.question.answer_question` over the index with its defaults (the index's default
component, the engine's evidence budget), the very call ``legalrag ask`` makes. ``reference``: the same call
with the question's gold articles as the only search result. A run's first line records its settings; a rerun
into the same file skips the questions already answered and refuses a file written with other settings.
"""

from __future__ import annotations

import enum
import json
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from legalrag.evaluation.answers.data import BenchQuestion
from legalrag.evaluation.answers.yesno import conclusion_polarity, is_yes_no
from legalrag.errors import InputError
from legalrag.types import Answer, Citation, Hit

SUPPORTED = "supported"
DECLINES = ("injection", "not_covered")


class AnswerBenchSetting(str, enum.Enum):
    RETRIEVER = "retriever"
    REFERENCE = "reference"


def citation_mark(c: Citation) -> str | None:
    """The support mark a checked citation carries (``supported``, ``exists``, ``not_found``, ``repealed``), or
    None when the citation checker gives none."""
    for attr in ("mark", "support"):
        value = getattr(c, attr, None)
        if value:
            return str(getattr(value, "value", value))
    return None


def supported_share(citations: Sequence[Citation]) -> float | None:
    """Share of the citations marked *supported* by the support model; None when there are none or none carries a
    mark. The articles of a quoted basis (``mark_reason`` ``quoted``: supported by construction) are left out."""
    marks = [citation_mark(c) for c in citations if getattr(c, "mark_reason", "") != "quoted"]
    if not marks or all(m is None for m in marks):
        return None
    return sum(m == SUPPORTED for m in marks) / len(marks)


def answer_seconds(answer: Answer) -> float:
    """Retrieval plus model time of one answer; a call-cache hit counts the time the call originally took."""
    u = answer.usage
    model = u.saved_seconds if u.cached_calls else u.seconds
    return float(answer.timings.get("retrieval_s", 0.0)) + float(model)


def written_part(answer: Answer) -> str:
    """What the model wrote: the answer's text after its printed basis (its first line and one line per quoted
    article); empty for an honest fallback, which the model did not write."""
    basis = getattr(answer, "basis", ())
    if getattr(answer, "fallback", ""):
        return ""
    if not basis:
        return answer.text
    parts = answer.text.split("\n", len(basis) + 1)
    return parts[-1] if len(parts) == len(basis) + 2 else answer.text


def score_answer(q: BenchQuestion, answer: Answer, setting: str, *, judge: Any = None) -> dict[str, Any]:
    """One row: the answer, its citations and every metric of the benchmark (``judge``: an LLM for the
    yes/no judge, or None)."""
    from legalrag.evaluation.generation import keyword_accuracy

    gold = set(q.gold_ids)
    cited = [c.document_id for c in answer.citations if c.resolved and c.document_id]
    retrieved = [h.id for h in answer.sources]
    row: dict[str, Any] = {
        "id": q.id, "setting": setting, "question": q.query, "response": answer.text,
        "gold": list(q.gold_ids), "cited": cited, "retrieved": retrieved,
        "citations": len(answer.citations), "cites_gold": bool(gold & set(cited)),
        # the first article the answer names: its quoted basis's first (a fallback's first listed article)
        "first_cited_gold": bool(cited) and cited[0] in gold, "first_cited": cited[0] if cited else None,
        "basis": [q.document_id for q in getattr(answer, "basis", ())],
        "fallback": getattr(answer, "fallback", "") or None,
        "not_from_law": list(getattr(answer, "not_from_law", ())),
        "gold_retrieved": bool(gold & set(retrieved)),
        "keyword_accuracy": keyword_accuracy(answer.text, q.keywords),
        # the same on what the model wrote (the text after a quoted basis; a fallback writes nothing)
        "keyword_accuracy_written": keyword_accuracy(written_part(answer), q.keywords),
        "supported_share": supported_share(answer.citations),
        "marks": [citation_mark(c) for c in answer.citations],
        "quoted_citations": sum(getattr(c, "mark_reason", "") == "quoted" for c in answer.citations),
        "outcome": next((s.action for s in answer.steps if s.agent == "guard" and s.action in DECLINES),
                        "answered"),
        "seconds": round(answer_seconds(answer), 3), "cached": bool(answer.usage.cached_calls),
        # the prompt the model read and how long until its first token (the latency side of the evidence budget)
        "prompt_tokens": int(answer.usage.prompt_tokens),
        "ttft_s": None if answer.usage.cached_calls else round(float(answer.timings.get("ttft_s", 0.0)), 3),
        "first_output_s": round(float(answer.timings["first_output_s"]), 3) if "first_output_s" in answer.timings
        else None,
        "end_s": None if answer.usage.cached_calls else round(float(answer.timings.get("total_s", 0.0)), 3),
        "prefill_s": round(float(answer.timings["prefill_s"]), 3) if "prefill_s" in answer.timings else None,
        "decode_s": round(float(answer.timings["decode_s"]), 3) if "decode_s" in answer.timings else None,
        "answer_tokens": int(answer.usage.completion_tokens),
        "prompt_tokens_evaluated": int(answer.timings.get("prompt_tokens_evaluated", 0)) or None,
    }
    if is_yes_no(q.query):
        lawyer = conclusion_polarity(q.answer, q.query)
        # an honest fallback states no conclusion (its "不能下结论" is not a no)
        said = None if getattr(answer, "fallback", "") else conclusion_polarity(answer.text, q.query)
        row["yes_no"] = {"lawyer": lawyer, "response": said, "agrees": None if lawyer is None else said == lawyer}
        if judge is not None:
            from legalrag.evaluation.answers.judge import judge_yes_no

            j = judge_yes_no(judge, q.query, q.answer, answer.text)
            row["yes_no"]["judge"] = {"lawyer": j.lawyer, "response": j.response, "agrees": j.agrees,
                                      "failed": j.failed}
    return row


def gold_hits(q: BenchQuestion, index: Any) -> list[Hit]:
    """The question's gold articles as search results (those the index holds)."""
    docs = []
    for g in q.gold_ids:
        try:
            docs.append(index.get(g))
        except KeyError:
            continue
    return [Hit(document=d, score=1.0, rank=i) for i, d in enumerate(docs, 1)]


def answer_one(q: BenchQuestion, index: Any, llm: Any, setting: AnswerBenchSetting, **options: Any) -> Answer:
    """The answer ``legalrag ask`` gives (retriever), or the same call over the gold articles (reference)."""
    from legalrag.answer.question import answer_question

    if setting is AnswerBenchSetting.REFERENCE:
        hits = gold_hits(q, index)
        if not hits:
            raise InputError(f"question {q.id}: none of its gold articles {list(q.gold_ids)} is in the index; the "
                             "reference setting needs them (is this the index of the questions' corpus?)")
        return answer_question(q.query, index, llm, search=lambda _q, _k: hits, **options)
    return answer_question(q.query, index, llm, **options)


def _read_rows(path: Path, config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    if not path.exists() or path.stat().st_size == 0:
        return {}
    rows: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                if lineno > 1:  # a line cut by an interrupted run: answered again
                    continue
                raise InputError(f"{path}, line 1: not a JSON line; give a new --out file") from None
            if lineno == 1:
                if rec.get("config") != dict(config):
                    raise InputError(f"{path} was written with other settings ({rec.get('config')}); give a new "
                                     "--out file to run with these", path=str(path))
                continue
            rows[str(rec["id"])] = rec
    return rows


def run_answers(questions: Sequence[BenchQuestion], index: Any, llm: Any, setting: AnswerBenchSetting, out: str | Path, *,
                config: Mapping[str, Any], judge: Any = None, progress: bool = False,
                on_row: Callable[[dict[str, Any]], None] | None = None, **options: Any) -> list[dict[str, Any]]:
    """Answer and score every question into ``out`` (JSONL, first line ``{"config": ...}``); questions already
    there are kept, not answered again. Returns the rows in question order."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    config = {**config, "setting": setting.value}
    done = _read_rows(path, config)
    todo = [q for q in questions if q.id not in done]
    mode = "a" if done else "w"
    if done:  # rewrite what was kept, so a line cut by an interruption does not stay in the file
        tmp = path.with_suffix(path.suffix + ".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            f.write(json.dumps({"config": config}, ensure_ascii=False) + "\n")
            for rec in done.values():
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        tmp.replace(path)
    it: Iterable[BenchQuestion] = todo
    if progress:
        from tqdm import tqdm

        it = tqdm(todo, desc=f"answers ({setting.value})", unit="answer")
    with path.open(mode, encoding="utf-8") as f:
        if mode == "w":
            f.write(json.dumps({"config": config}, ensure_ascii=False) + "\n")
        for q in it:
            t0 = time.perf_counter()
            answer = answer_one(q, index, llm, setting, **options)
            row = score_answer(q, answer, setting.value, judge=judge)
            row["wall_s"] = round(time.perf_counter() - t0, 3)
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            f.flush()
            done[q.id] = row
            if on_row is not None:
                on_row(row)
    return [done[q.id] for q in questions if q.id in done]


def _mean(values: Iterable[float | None]) -> float | None:
    xs = [float(v) for v in values if v is not None]
    return round(statistics.fmean(xs), 4) if xs else None


def _median(values: Iterable[float | None]) -> float | None:
    xs = [float(v) for v in values if v is not None]
    return round(statistics.median(xs), 3) if xs else None


def summarise_answers(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The benchmark's figures over ``rows``: means over the answers each metric applies to, with counts."""
    yn = [r["yes_no"] for r in rows if r.get("yes_no")]
    known = [y for y in yn if y.get("lawyer") is not None]
    judged = [y["judge"] for y in yn if y.get("judge") and not y["judge"].get("failed")]
    judged_known = [j for j in judged if j.get("lawyer") is not None]
    marked = [r["supported_share"] for r in rows if r.get("supported_share") is not None]
    return {
        "n": len(rows),
        "cites_gold": _mean(float(r["cites_gold"]) for r in rows),
        "first_cited_gold": _mean(float(bool(r.get("first_cited_gold"))) for r in rows if "first_cited_gold" in r),
        "fallback_share": _mean(float(bool(r.get("fallback"))) for r in rows if "fallback" in r),
        "stating_not_from_law": _mean(float(bool(r.get("not_from_law"))) for r in rows if "not_from_law" in r),
        "gold_retrieved": _mean(float(r["gold_retrieved"]) for r in rows),
        "keyword_accuracy": _mean(r.get("keyword_accuracy") for r in rows),
        "keyword_accuracy_written": _mean(r.get("keyword_accuracy_written") for r in rows),
        "supported_share": _mean(marked), "answers_with_marks": len(marked),
        "no_citation": _mean(float(r["citations"] == 0) for r in rows),
        "declined": sum(r.get("outcome", "answered") != "answered" for r in rows),
        "yes_no_questions": len(yn), "yes_no_lawyer_known": len(known),
        "yes_no_agreement": _mean(float(bool(y["agrees"])) for y in known),
        "yes_no_unclear_response": _mean(float(y["response"] is None) for y in known),
        "judge_yes_no_agreement": _mean(float(bool(j["agrees"])) for j in judged_known),
        "judge_failed": sum(1 for y in yn if y.get("judge", {}).get("failed")),
        "seconds_per_answer": _mean(r.get("seconds") for r in rows),
        "prompt_tokens_mean": _mean(r.get("prompt_tokens") for r in rows),
        "ttft_s_median": _median(r.get("ttft_s") for r in rows),
        "first_output_s_median": _median(r.get("first_output_s") for r in rows),
        "end_s_median": _median(r.get("end_s") for r in rows),
        "prefill_s_median": _median(r.get("prefill_s") for r in rows),
    }


PAIRED_METRICS = ("cites_gold", "first_cited_gold", "gold_retrieved", "keyword_accuracy", "supported_share",
                  "yes_no_agrees")


def read_run(path: str | Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """A saved run (``legalrag eval answers --out``): its settings (the first line) and question id -> row."""
    lines = [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]
    if not lines or "config" not in lines[0]:
        raise InputError("not a run of `legalrag eval answers`: its first line holds no config", path=str(path))
    return lines[0]["config"], {str(r["id"]): r for r in lines[1:]}


def row_value(row: Mapping[str, Any], metric: str) -> float | None:
    """One answer's value of a per-answer metric (``yes_no_agrees``: whether the yes/no reading agrees with the
    lawyer's); None where the metric does not apply."""
    if metric == "yes_no_agrees":
        y = row.get("yes_no") or {}
        return None if y.get("agrees") is None else float(y["agrees"])
    v = row.get(metric)
    return None if v is None else float(v)  # a run written before a metric existed has None for it
