"""The QA search sources from ``--sources`` names (``local``, ``web``, ``courtlistener``)."""

from __future__ import annotations

import os
from typing import Any

from legalrag.errors import InputError
from legalrag.settings import Settings
from legalrag.wiring.base import current_settings


def make_sources(names, *, docs: str | os.PathLike | None = None, index: Any = None, settings: Settings | None = None):
    """The named QA sources (``local``, ``web``, ``courtlistener``) and a message for each one not usable
    (a missing API key, no documents folder): ``(sources by name, problems)``. ``index`` is an opened index
    (``Root.index``; ``Root.make_sources`` opens a directory) for the local source's statutes."""
    from legalrag.search.base import SourceNotConfigured
    from legalrag.search.courtlistener import CourtListenerSearch
    from legalrag.search.local import LocalDocumentsSource, StatuteIndexSource
    from legalrag.search.web import web_source_from_env

    sources: dict[str, Any] = {}
    problems: list[str] = []
    for name in names:
        name = name.strip().lower()
        try:
            if name == "local":
                if docs is None and index is None:
                    raise SourceNotConfigured("the local source needs a documents folder (--docs DIR) or an index")
                if docs is not None:
                    sources["local"] = LocalDocumentsSource(docs, max_file_mb=current_settings(settings).max_file_mb)
                if index is not None:
                    sources["statutes"] = StatuteIndexSource(index)
            elif name == "web":
                sources["web"] = web_source_from_env()
            elif name == "courtlistener":
                sources["courtlistener"] = CourtListenerSearch.from_env()
            elif name:
                raise InputError(f"unknown source {name!r}; use local, web or courtlistener", field="sources")
        except SourceNotConfigured as exc:
            problems.append(f"{name}: {exc}")
    return sources, problems
