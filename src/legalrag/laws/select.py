"""Which documents were in force on a day: a retrieval filter on version validity.

A document carries its version's interval in ``metadata["in_force_from"]`` and ``metadata["in_force_until"]``
(exclusive; absent or None: still in force). A day before the oldest version held (``metadata["oldest_held"]``)
reads that oldest version. A document without ``in_force_from`` has no version information and is kept: a corpus without versions is not filtered (the caller says so, see :func:`has_versions`).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from legalrag.laws.versions import check_day


def in_force_filter(day: str) -> Callable[[Any], bool]:
    """``keep(document)``: True for documents in force on ``day`` (ISO), and for documents without versions."""
    day = check_day(day)

    def keep(doc: Any) -> bool:
        meta = getattr(doc, "metadata", None) or {}
        start = meta.get("in_force_from")
        if not start:
            return True
        if day < start:  # before the oldest version held, the oldest answers (as ``Law.as_of`` does)
            return bool(meta.get("oldest_held"))
        until = meta.get("in_force_until")
        return not until or day < until

    return keep


def has_versions(documents: Iterable[Any], probe: int = 200) -> bool:
    """Whether the first ``probe`` documents carry version intervals."""
    for i, doc in enumerate(documents):
        if i >= probe:
            break
        if (getattr(doc, "metadata", None) or {}).get("in_force_from"):
            return True
    return False


def both(first: Callable[[Any], bool] | None, second: Callable[[Any], bool] | None) -> Callable[[Any], bool] | None:
    """The two filters together (either may be None)."""
    if first is None or second is None:
        return first or second
    return lambda doc: first(doc) and second(doc)


__all__ = ["both", "has_versions", "in_force_filter"]
