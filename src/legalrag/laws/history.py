"""One article across the versions of its law, followed through renumbering."""

from __future__ import annotations

from dataclasses import dataclass

from legalrag.laws.renumber import renumbering
from legalrag.laws.versions import Law, Version, normalise


@dataclass(frozen=True)
class Step:
    """The article in one version: its number there (None: no counterpart) and whether its text changed."""

    version: Version
    number: str | None
    text: str = ""
    changed: bool = False  # its text differs from the previous step's
    similarity: float | None = None  # of the alignment that led here


def article_history(law: Law, number: str, version: Version | None = None) -> list[Step]:
    """Every version of ``law``, oldest first, with the counterpart of article ``number`` of ``version``
    (default: the latest version)."""
    versions = list(law.versions)
    start = versions.index(version) if version is not None else len(versions) - 1
    steps: dict[int, Step] = {}
    art = versions[start].article(number)
    steps[start] = Step(versions[start], number if art else None, art.text if art else "")
    current, sim = (number if art else None), None
    for i in range(start - 1, -1, -1):  # backwards: which older article maps onto this one
        if current is None:
            steps[i] = Step(versions[i], None)
            continue
        back = {m.new: m for m in renumbering(versions[i], versions[i + 1]).values() if m.new}
        m = back.get(current)
        current, sim = (m.old, m.similarity) if m else (None, None)
        a = versions[i].article(current) if current else None
        steps[i] = Step(versions[i], current, a.text if a else "", similarity=sim)
    current = number if art else None
    for i in range(start + 1, len(versions)):
        m = renumbering(versions[i - 1], versions[i]).get(current) if current else None
        current, sim = (m.new, m.similarity) if m and m.new else (None, None)
        a = versions[i].article(current) if current else None
        steps[i] = Step(versions[i], current, a.text if a else "", similarity=sim)
    out, prev = [], None
    for i in range(len(versions)):
        s = steps[i]
        changed = prev is not None and s.number is not None and normalise(s.text) != normalise(prev)
        out.append(Step(s.version, s.number, s.text, changed, s.similarity))
        prev = s.text if s.number else prev
    return out


__all__ = ["Step", "article_history"]
