"""Multiple-choice evaluation: load a question file (JSONL, JSON or CSV), run each mode, score it."""

from __future__ import annotations

import csv
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from legalrag.errors import InputError
from legalrag.io import read_jsonl
from legalrag.llm.base import LLM
from legalrag.search.base import SearchSource

LETTERS = "ABCDEF"


@dataclass(frozen=True)
class MCQuestion:
    id: str
    question: str
    choices: Mapping[str, str]
    gold: str
    domain: str = ""


class _Pairs(list):
    """A JSON object kept as its (key, value) pairs, so a letter given twice is seen (a dict keeps the last)."""


def _pairs_hook(pairs: list) -> Any:
    return _Pairs(pairs)


def _labelled(pairs: Sequence[tuple[Any, Any]], path: str, line: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in pairs:
        letter = str(k).strip().upper()
        if letter in out:
            raise InputError(f"option letter {letter!r} is given twice; each choice needs its own letter", path=path,
                             line=line, field="choices")
        out[letter] = str(v)
    return out


def _choices(raw: Any, path: str, line: int) -> dict[str, str]:
    if isinstance(raw, _Pairs):
        out = _labelled(raw, path, line)
    elif isinstance(raw, Mapping):
        out = _labelled(list(raw.items()), path, line)
    elif isinstance(raw, list):
        out = {LETTERS[i]: str(v) for i, v in enumerate(raw[:len(LETTERS)])}
    elif isinstance(raw, str):  # CSV: "A. text | B. text" or a JSON object/list
        try:
            return _choices(json.loads(raw, object_pairs_hook=_pairs_hook), path, line)
        except json.JSONDecodeError:
            parts = [p.strip() for p in raw.split("|") if p.strip()]
            pairs = []
            for i, p in enumerate(parts):
                if len(p) > 2 and p[0].upper() in LETTERS and p[1] in ".:、)）":
                    pairs.append((p[0].upper(), p[2:].strip()))
                else:
                    pairs.append((LETTERS[min(i, len(LETTERS) - 1)], p))
            out = _labelled(pairs, path, line)
    else:
        raise InputError("choices must be an object {\"A\": ...}, a list, or 'A. ... | B. ...'", path=path,
                         line=line, field="choices")
    if len(out) < 2:
        raise InputError(f"a multiple-choice question needs at least two choices (options), this one has {len(out)}",
                         path=path, line=line, field="choices")
    if any(k not in LETTERS for k in out):
        raise InputError(f"options must be labelled A-F, got {sorted(out)}", path=path, line=line, field="choices")
    return out


def _row(obj: Mapping[str, Any], path: str, line: int) -> MCQuestion:
    if isinstance(obj, _Pairs):
        obj = dict(obj)
    for key in ("question", "choices", "gold"):
        if obj.get(key) in (None, ""):
            raise InputError(f"missing {key!r}; each question needs question, choices and gold", path=path,
                             line=line, field=key)
    choices = _choices(obj["choices"], path, line)
    gold = str(obj["gold"]).strip().upper()
    if gold not in choices:
        raise InputError(f"gold {gold!r} is not one of the choices {sorted(choices)}", path=path, line=line,
                         field="gold")
    return MCQuestion(id=str(obj.get("id") or f"q{line}"), question=str(obj["question"]), choices=choices,
                      gold=gold, domain=str(obj.get("domain") or ""))


def _raw_lines(p: Path):
    """The non-blank lines of a JSONL file, in the order ``read_jsonl`` yields their objects."""
    with p.open(encoding="utf-8-sig", errors="replace") as fh:
        for line in fh:
            if line.strip():
                yield line


def _with_pairs(obj: dict[str, Any], raw: str) -> dict[str, Any]:
    """``obj`` with its ``choices`` object re-read as pairs, so a letter given twice is an error, not lost."""
    if isinstance(obj.get("choices"), Mapping):
        try:
            pairs = json.loads(raw, object_pairs_hook=_pairs_hook)
        except json.JSONDecodeError:
            return obj
        found = dict(pairs).get("choices")
        if isinstance(found, _Pairs):
            return {**obj, "choices": found}
    return obj


def load_mcq(path: str | Path) -> list[MCQuestion]:
    """Questions from ``.jsonl``, ``.json`` (a list of objects) or ``.csv`` (columns question, choices, gold,
    optional id and domain; or one column per letter A, B, C...)."""
    p = Path(path)
    if not p.exists():
        raise InputError("file not found; check the path", path=str(p))
    suffix = p.suffix.lower()
    if suffix == ".jsonl":
        rows = [_row(_with_pairs(obj, raw), str(p), n) for (n, obj), raw in zip(read_jsonl(p), _raw_lines(p))]
    elif suffix == ".json":
        try:
            data = json.loads(p.read_text(encoding="utf-8"), object_pairs_hook=_pairs_hook)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc.msg} at line {exc.lineno})", path=str(p)) from None
        if isinstance(data, _Pairs):
            data = dict(data).get("questions", data)
        if not isinstance(data, list) or isinstance(data, _Pairs):
            raise InputError("expected a list of question objects (or {\"questions\": [...]})", path=str(p))
        rows = [_row(obj, str(p), i) if isinstance(obj, _Pairs) else _row({}, str(p), i)
                for i, obj in enumerate(data, 1)]
    elif suffix == ".csv":
        with p.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh)
            rows = []
            for n, rec in enumerate(reader, 2):
                rec = {k.strip().lower() if k else k: v for k, v in rec.items()}
                if not rec.get("choices"):
                    letter_cols = {c.upper(): rec[c.lower()] for c in LETTERS if rec.get(c.lower())}
                    rec["choices"] = letter_cols or None
                rows.append(_row(rec, str(p), n))
    else:
        raise InputError("unknown question file type; use .jsonl, .json or .csv", path=str(p))
    if not rows:
        raise InputError("no questions in the file", path=str(p))
    return rows


def evaluate_mcq(questions: Sequence[MCQuestion], llm: LLM, sources: Mapping[str, SearchSource],
                 modes: Sequence[str], *, max_rounds: int = 2, progress: bool = True,
                 budget_s: float | None = None) -> dict[str, Any]:
    """Per-question rows and, per mode, accuracy overall and per domain, mean latency and LLM calls, and the
    share of answer citations that resolve to retrieved sources.

    Each question is run in every mode before the next one starts, so with ``budget_s`` (stop starting new
    questions after that many seconds) every mode is scored on the same questions."""
    import time

    from tqdm import tqdm

    from legalrag.agents.qa.pipeline import MCQ_MODES, answer_mcq

    for m in modes:
        if m not in MCQ_MODES:
            raise InputError(f"unknown mode {m!r}; use {', '.join(MCQ_MODES)}", field="modes")
    rows = []
    t0 = time.perf_counter()
    done = 0
    with tqdm(total=len(questions) * len(modes), desc="mcq", disable=not progress) as bar:
        for q in questions:
            if budget_s is not None and time.perf_counter() - t0 > budget_s:
                break
            for mode in modes:
                res = answer_mcq(q.question, q.choices, llm, sources, mode=mode, max_rounds=max_rounds)
                rows.append({"id": q.id, "domain": q.domain, "mode": mode, "gold": q.gold, "choice": res.choice,
                             "correct": res.choice == q.gold, "seconds": round(res.seconds, 3),
                             "llm_calls": res.llm_calls, "citations": len(res.citations),
                             "resolved": sum(c.resolved for c in res.citations),
                             "sources": [s.title for s in res.evidence], "rationale": res.answer,
                             "peak_rss_mb": _peak_rss_mb()})
                bar.update(1)
            done += 1
    return {"n_questions": done, "modes": summarise_rows(rows, modes), "rows": rows}


def _peak_rss_mb() -> float | None:
    """The process's peak resident memory so far (MiB), where the platform reports it."""
    try:
        import resource
        import sys
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 1024), 1)


def summarise_rows(rows: Sequence[Mapping[str, Any]], modes: Sequence[str]) -> dict[str, Any]:
    out = {}
    for mode in modes:
        rs = [r for r in rows if r["mode"] == mode]
        if not rs:
            continue
        by_domain: dict[str, list[bool]] = defaultdict(list)
        for r in rs:
            by_domain[r["domain"] or "-"].append(r["correct"])
        cites = sum(r["citations"] for r in rs)
        out[mode] = {"accuracy": sum(r["correct"] for r in rs) / len(rs), "n": len(rs),
                     "answered": sum(r["choice"] is not None for r in rs),
                     "mean_seconds": statistics.fmean(r["seconds"] for r in rs),
                     "mean_llm_calls": statistics.fmean(r["llm_calls"] for r in rs),
                     "peak_rss_mb": max((r.get("peak_rss_mb") or 0 for r in rs), default=None) or None,
                     "citations": cites,
                     "citations_resolved_share": (sum(r["resolved"] for r in rs) / cites) if cites else None,
                     "per_domain": {d: {"accuracy": sum(v) / len(v), "n": len(v)} for d, v in sorted(by_domain.items())}}
    return out
