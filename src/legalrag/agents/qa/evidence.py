"""Evidence shown to the judge, summary and multiple-choice agents: numbered blocks of bounded length."""

from __future__ import annotations

from typing import Sequence

from legalrag.search.base import SearchResult, SourceType
from legalrag.search.fetch import error_reason


def usable(results: Sequence[SearchResult]) -> tuple[list[SearchResult], list[dict]]:
    """Drop error pages by fixed rules (fetch errors, HTTP errors, bot walls, empty search pages): the same
    input is always split the same way, before any model sees it."""
    kept, dropped = [], []
    for r in results:
        reason = r.metadata.get("fetch_error")
        text = r.text
        if reason is None and not text.strip():
            reason = "empty result"
        if reason is None and r.source_type is SourceType.WEB:
            # Short texts are normal here (snippets, statute articles): only the error-page phrases count.
            marker = error_reason(text)
            reason = None if marker == "no readable text" else marker
        if reason:
            dropped.append({"title": r.title, "url": r.url, "reason": reason})
        else:
            kept.append(r)
    return kept, dropped


def evidence_block(results: Sequence[SearchResult], max_chars: int = 600) -> str:
    """``[n] title (site, date)\\ntext`` for each result, each text cut to ``max_chars``."""
    if not results:
        return "(no sources)"
    parts = []
    for n, r in enumerate(results, 1):
        meta = ", ".join(x for x in (r.site, r.date) if x)
        text = " ".join(r.text.split())
        parts.append(f"[{n}] {r.title}" + (f" ({meta})" if meta else "") + f"\n{text[:max_chars]}")
    return "\n\n".join(parts)
