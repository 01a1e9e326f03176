"""Search agent: run each intent on its target source(s), fetch top web pages, merge and order the evidence."""

from __future__ import annotations

import time
from typing import Mapping, Sequence

from legalrag.agents.qa.models import SearchIntent
from legalrag.errors import LegalRagError
from legalrag.search.base import SearchResult, SearchSource, SourceType, authority_score
from legalrag.types import Step


def run_searches(intents: Sequence[SearchIntent], sources: Mapping[str, SearchSource], *, k: int = 4,
                 fetch_top: int = 3, fetch_timeout: float = 10.0,
                 seen: Sequence[SearchResult] = ()) -> tuple[list[SearchResult], list[Step]]:
    """New results for ``intents`` (those already in ``seen`` are skipped) and one Step per source call.

    A failing source becomes an error Step, never an exception: the other sources still answer."""
    results: list[SearchResult] = []
    steps: list[Step] = []
    known = {r.id for r in seen}
    for intent in intents:
        targets = [n for n in sources if intent.source in ("any", n)
                   or (intent.source == "local" and n == "statutes")] or list(sources)
        for name in targets:
            t0 = time.perf_counter()
            try:
                found = sources[name].search(intent.query, k=k)
                error = None
            except LegalRagError as exc:
                found, error = [], str(exc)
            if fetch_top and found and sources[name].source_type is SourceType.WEB:
                from legalrag.search.fetch import enhance

                found = enhance(found, m=fetch_top, timeout=fetch_timeout)
            fresh = [r for r in found if r.id not in known]
            known.update(r.id for r in fresh)
            results.extend(fresh)
            steps.append(Step(agent="search", action=f"search:{name}", input=intent.query,
                              output=[{"title": r.title, "url": r.url, "fetch_error": r.metadata.get("fetch_error")}
                                      for r in found], seconds=time.perf_counter() - t0, error=error))
    # Official sources first, then the source's own score; stable for equal keys.
    results.sort(key=lambda r: -authority_score(r))
    return results, steps
