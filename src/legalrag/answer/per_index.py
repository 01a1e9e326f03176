"""What the answer engine builds once per opened index and shares between requests: the citation resolver of
the index's corpus (one per past day for a dated index) and the shipped decisive-article selector."""

from __future__ import annotations

import threading
import weakref
from typing import Any

_RESOLVERS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_RESOLVER_LOCK = threading.RLock()
_DATED_RESOLVERS: dict[tuple[Any, str], Any] = {}  # (index, day) -> the resolver of the texts in force that day


def resolver_for(index: Any) -> Any:
    """The citation resolver of an index's corpus, built once per opened index. An index read as of a past day
    (``retrieval.dated.DatedIndex`` with ``as_of``) resolves to the texts in force that day, built once per day
    (the last few days kept)."""
    from legalrag.citecheck import CitationResolver

    day = getattr(index, "as_of", None)
    if day:
        from legalrag.laws.select import in_force_filter

        key = (getattr(index, "base", index), day)
        with _RESOLVER_LOCK:
            if key not in _DATED_RESOLVERS:
                _DATED_RESOLVERS[key] = CitationResolver.from_documents(index.documents, keep=in_force_filter(day))
                while len(_DATED_RESOLVERS) > 8:
                    _DATED_RESOLVERS.pop(next(iter(_DATED_RESOLVERS)))
            return _DATED_RESOLVERS[key]
    with _RESOLVER_LOCK:  # one build per index, even when a request and a warm-up thread ask together
        try:
            return _RESOLVERS[index]
        except (KeyError, TypeError):
            pass
        resolver = CitationResolver.from_documents(index.documents)
        try:
            _RESOLVERS[index] = resolver
        except TypeError:
            pass
        return resolver


_SELECTORS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
# the shipped selector learned its priors and neighbours on the national corpus (55,515 articles, ids by position):
# an index far smaller (a sample, a user's own documents) keeps the retrieval order
SELECTOR_MIN_ARTICLES = 10_000


def index_encoder(index: Any) -> Any:
    """The encoder of an index's loaded dense component (the one the support pair model shares), or None."""
    for name in getattr(index, "names", ()):
        try:
            comp = index.retriever(name) if name.startswith("dense") else None
        except Exception:
            comp = None
        enc = getattr(comp, "encoder", None)
        if enc is not None and hasattr(enc, "encode_queries"):
            return enc
    return None


def shipped_selector(index: Any, support: Any = None) -> Any:
    """The shipped decisive-article selector for ``index`` (one per opened index), its support model over the
    index's dense encoder; raises (a ``ModelError`` naming the file and the fix) when a file is missing or
    altered."""
    from legalrag.answer.select import load_selector

    with _RESOLVER_LOCK:
        try:
            return _SELECTORS[index]
        except (KeyError, TypeError):
            pass
        selector = load_selector(support=support, encoder=index_encoder(index) if support is None else None,
                                 index=index)  # the articles' vectors from the index: 0.1 s, not 10 s, a question
        try:
            _SELECTORS[index] = selector
        except TypeError:
            pass
        return selector
