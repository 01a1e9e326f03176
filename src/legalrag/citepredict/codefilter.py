"""Law-code filter: restrict retrieval to the laws the analysis named, and measure what that costs.

Predicted code names are matched to the corpus's law titles (``Document.metadata['law']``) exactly, then by
containment either way (so "刑法" matches "中华人民共和国刑法", "BGG" matches "BGG"). When nothing matches,
no filter is applied: a wrong guess must not empty the search space.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Iterable, Sequence

from legalrag.retrieval.base import DocumentFilter, law_title_filter
from legalrag.types import Document


def law_titles(documents: Iterable[Document]) -> list[str]:
    seen: dict[str, None] = {}
    for d in documents:
        t = d.metadata.get("law")
        if t:
            seen.setdefault(t, None)
    return list(seen)


def match_codes(predicted: Sequence[str], titles: Sequence[str]) -> list[str]:
    out: list[str] = []
    for code in (c.strip() for c in predicted):
        if not code:
            continue
        exact = [t for t in titles if t == code]
        hits = exact or [t for t in titles if code in t or t in code]
        out.extend(t for t in hits if t not in out)
    return out


def code_filter(predicted: Sequence[str], titles: Sequence[str]) -> tuple[DocumentFilter | None, list[str]]:
    matched = match_codes(predicted, titles)
    return (law_title_filter(matched) if matched else None), matched


@dataclass(frozen=True)
class FilterReport:
    cases: int
    filtered_cases: int  # cases where at least one predicted code matched
    gold_kept: float  # share of gold provisions inside the filtered search space (all cases pooled)
    space_kept: float  # mean share of the corpus left to search


def filter_report(documents: Sequence[Document], per_case_codes: Sequence[Sequence[str]],
                  gold: Sequence[Collection[str]]) -> FilterReport:
    titles = law_titles(documents)
    law_of = {d.id: d.metadata.get("law") for d in documents}
    kept = total = filtered = 0
    space = 0.0
    for codes, g in zip(per_case_codes, gold):
        matched = set(match_codes(codes, titles))
        if matched:
            filtered += 1
            space += sum(1 for d in documents if d.metadata.get("law") in matched) / len(documents)
            kept += sum(1 for p in g if law_of.get(p) in matched)
        else:
            space += 1.0
            kept += len(g)
        total += len(g)
    n = len(gold)
    return FilterReport(n, filtered, kept / total if total else 1.0, space / n if n else 1.0)
