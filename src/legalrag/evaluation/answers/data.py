"""STARD benchmark questions as the frozen split stores them: ``{"query_id", "query", "gold_ids", "gold_names",
"keywords", "answer"}`` per line (``keywords`` a string of keywords separated by ``；``, ``、``, commas or new
lines, or a list)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from legalrag.errors import InputError

_KEYWORD_SEP = re.compile(r"[；;、，,。\n\r\t]+")


@dataclass(frozen=True)
class BenchQuestion:
    id: str
    query: str
    gold_ids: tuple[str, ...]
    gold_names: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    answer: str = ""  # the lawyer's answer


def split_keywords(value: Any) -> tuple[str, ...]:
    """Keywords from the string STARD stores (``"土地征收；\\n征收行为未经批准"``, ``"盗窃、抢夺"``) or a list."""
    parts = value if isinstance(value, (list, tuple)) else _KEYWORD_SEP.split(str(value or ""))
    return tuple(dict.fromkeys(p.strip() for p in parts if str(p).strip()))


def question_from(rec: dict[str, Any], where: str) -> BenchQuestion:
    for key in ("query", "gold_ids"):
        if key not in rec:
            raise InputError(f"{where}: no {key!r} field; each line needs query_id, query, gold_ids (and keywords, "
                             "answer for the answer metrics)", field=key)
    if not isinstance(rec["gold_ids"], list):
        raise InputError(f"{where}: gold_ids must be a list of corpus ids, got {type(rec['gold_ids']).__name__}",
                         field="gold_ids")
    query = str(rec["query"]).strip()
    if not query:
        raise InputError(f"{where}: the query is empty", field="query")
    qid = rec.get("query_id", rec.get("id"))
    if qid is None:
        raise InputError(f"{where}: no query_id (or id) field", field="query_id")
    return BenchQuestion(id=str(qid), query=query, gold_ids=tuple(str(g) for g in rec["gold_ids"]),
                         gold_names=tuple(str(n) for n in rec.get("gold_names") or ()),
                         keywords=split_keywords(rec.get("keywords")), answer=str(rec.get("answer") or ""))


def load_questions(path: str | Path, limit: int | None = None) -> list[BenchQuestion]:
    """The first ``limit`` questions of a JSONL file (all when None), in file order; a bad line is an
    ``InputError`` naming the file and line, a repeated id too."""
    from legalrag.io import read_jsonl

    out: list[BenchQuestion] = []
    seen: set[str] = set()
    for lineno, rec in read_jsonl(path):
        q = question_from(rec, f"{path}, line {lineno}")
        if q.id in seen:
            raise InputError(f"{path}, line {lineno}: query_id {q.id} appears twice; ids must be unique",
                             field="query_id")
        seen.add(q.id)
        out.append(q)
        if limit is not None and len(out) >= limit:
            break
    if not out:
        raise InputError(f"{path} holds no questions")
    return out
