"""Citation-set and case files: training citations (decision -> cited provisions) and evaluation cases.

Training citations are accepted as TREC-style qrels (``decision 0 provision relevance``, whitespace
separated; relevance > 0 counts) or as JSONL (``{"id": ..., "cited": [...]}``). Cases are JSONL with a
facts field and, for evaluation, a gold field holding a list (or a JSON string of a list) of provision ids.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from legalrag.errors import InputError
from legalrag.io import read_jsonl

CitationSets = dict[str, frozenset[str]]

_ID_FIELDS = ("text_id", "id", "case_id")
_TEXT_FIELDS = ("text", "facts", "query")
_GOLD_FIELDS = ("la", "gold", "cited", "gold_ids")


@dataclass(frozen=True)
class Case:
    id: str
    facts: str
    gold: frozenset[str] = frozenset()


def load_citation_sets(path: str | Path) -> CitationSets:
    """Read training citation sets; raise InputError naming the line for anything malformed."""
    p = Path(path)
    if not p.exists():
        raise InputError("file not found; check the -o train_citations path", path=str(p))
    sets: dict[str, set[str]] = {}
    with p.open(encoding="utf-8") as fh:
        first = fh.read(1)
    if first == "{":
        for lineno, rec in read_jsonl(p):
            did = _first(rec, ("id", "decision", "text_id"))
            cited = _first(rec, ("cited", "provisions", "la"))
            if did is None or cited is None:
                raise InputError("each line needs an id and a 'cited' list", path=str(p), line=lineno)
            sets.setdefault(str(did), set()).update(_as_ids(cited, str(p), lineno, "cited"))
    else:
        with p.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                parts = line.split()
                if not parts:
                    continue
                if len(parts) != 4:
                    raise InputError(f"expected 4 columns 'decision 0 provision relevance', got {len(parts)}",
                                     path=str(p), line=lineno)
                try:
                    rel = float(parts[3])
                except ValueError:
                    raise InputError(f"relevance {parts[3]!r} is not a number", path=str(p), line=lineno) from None
                if rel > 0:
                    sets.setdefault(parts[0], set()).add(parts[2])
    if not sets:
        raise InputError("no citation sets found (empty file?)", path=str(p))
    return {k: frozenset(v) for k, v in sets.items()}


def load_cases(path: str | Path, *, id_field: str | None = None, text_field: str | None = None,
               gold_field: str | None = None, require_gold: bool = True) -> list[Case]:
    cases, seen = [], set()
    for lineno, rec in read_jsonl(path):
        idf = id_field or _pick(rec, _ID_FIELDS)
        tf = text_field or _pick(rec, _TEXT_FIELDS)
        gf = gold_field or _pick(rec, _GOLD_FIELDS)
        if idf is None or idf not in rec:
            raise InputError(f"no case id field (looked for {', '.join(_ID_FIELDS)})", path=str(path), line=lineno)
        if tf is None or not isinstance(rec.get(tf), str):
            raise InputError(f"no facts text (looked for {', '.join(_TEXT_FIELDS)})", path=str(path), line=lineno)
        gold: frozenset[str] = frozenset()
        if gf is not None and gf in rec:
            gold = frozenset(_as_ids(rec[gf], str(path), lineno, gf))
        elif require_gold:
            raise InputError(f"no gold citations (looked for {', '.join(_GOLD_FIELDS)})", path=str(path),
                             line=lineno)
        cid = str(rec[idf])
        if cid in seen:
            raise InputError(f"case id {cid!r} appears twice", path=str(path), line=lineno, field=idf)
        seen.add(cid)
        cases.append(Case(cid, rec[tf].strip(), gold))
    if not cases:
        raise InputError("no cases in file", path=str(path))
    return cases


def split_dev_eval(cases: Sequence[Case], n_dev: int = 200) -> tuple[list[Case], list[Case]]:
    """Sort by case id; the first ``n_dev`` are the development part, the rest the evaluation part."""
    ordered = sorted(cases, key=lambda c: c.id)
    return ordered[:n_dev], ordered[n_dev:]


def _first(rec: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for k in keys:
        if k in rec:
            return rec[k]
    return None


def _pick(rec: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    return next((k for k in keys if k in rec), None)


def _as_ids(value: Any, path: str, line: int, field: str) -> list[str]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise InputError("expected a list of provision ids (or a JSON string of one)", path=path, line=line,
                             field=field) from None
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        raise InputError("expected a list of provision ids", path=path, line=line, field=field)
    return [str(v) for v in value]
