"""Which documents were in force on a day: a retrieval filter on version validity.

A document carries its version's interval in ``metadata["in_force_from"]`` and ``metadata["in_force_until"]``
(exclusive; absent or None: still in force). A day before the oldest version held (``metadata["oldest_held"]``)
reads that oldest version when the law was in force then in an older text not held (``metadata["enacted"]``, the
day it was first adopted, is on or before the day, and ``metadata["original"]`` is false); a law not yet in force
that day (adopted later, or whose oldest version held is its first text) is left out. Without ``enacted`` the
oldest version answers. :func:`held_notes` says where the oldest version answered for an earlier day. A document without ``in_force_from`` has no version information and is kept: a corpus without versions is not filtered (the caller says so, see :func:`has_versions`).
"""

from __future__ import annotations

import re
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
            return bool(meta.get("oldest_held")) and _before_held(meta, day)
        until = meta.get("in_force_until")
        return not until or day < until

    return keep


_VERSION_SUFFIX = re.compile(r"（[^（）]*版）$")  # an older version's law name: 公司法（2018-10-26版）


def _before_held(meta: dict, day: str) -> bool:
    """Whether the oldest version held answers for ``day``, before it took effect (``Law.in_force_before_held``)."""
    enacted = meta.get("enacted")
    if not enacted or meta.get("original") is None:
        return True  # not known: the oldest held answers, with a notice
    return not meta.get("original") and day >= enacted


def held_notes(documents: Iterable[Any], day: str) -> tuple[str, ...]:
    """One note per law whose oldest version held answered for ``day`` although it took effect later:
    "no version of <law> held for <day>; the oldest held is <version> (in force from <date>)"."""
    day = check_day(day)
    out: dict[str, str] = {}
    for doc in documents:
        meta = getattr(doc, "metadata", None) or {}
        start = meta.get("in_force_from")
        if not start or day >= start or not meta.get("oldest_held"):
            continue
        law = str(meta.get("law") or getattr(doc, "title", ""))
        title = _VERSION_SUFFIX.sub("", law)
        out.setdefault(title, f"no version of {title} held for {day}; the oldest held is {meta.get('version') or 'undated'} "
                              f"(in force from {start})")
    return tuple(out.values())


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


__all__ = ["both", "has_versions", "held_notes", "in_force_filter"]
