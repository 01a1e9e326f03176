"""What an index of the law over time covers, for its manifest and ``index info``."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from legalrag.laws.select import in_force_filter
from legalrag.laws.versions import title_key

NOT_COVERED = "local regulations, most departmental rules, court cases, and laws promulgated after the snapshot"


def coverage(library, docs: Sequence[Any], base_documents: Iterable[Any] = (),
             base_snapshot: str | None = None) -> dict[str, Any]:
    """The snapshot of ``library``, the laws and articles of ``docs`` (its articles as documents) in force that
    day, the superseded versions and repealed laws held for ``--as-of``, the laws of an earlier snapshot
    (``base_documents``, dated ``base_snapshot``) the library does not hold, and what is not covered."""
    day = library.snapshot
    keep = in_force_filter(day) if day else (lambda d: True)
    live = [d for d in docs if keep(d) and d.metadata.get("ended_by") != "repealed"]
    counts = {k: v for k, v in library.counts().items() if isinstance(v, int)}
    held = {title_key(t) for t in library.laws}
    missing = sorted({str(d.metadata.get("law")) for d in base_documents
                      if title_key(str(d.metadata.get("law"))) not in held})
    return {"law_over_time": True, "snapshot": day, "base_snapshot": base_snapshot, **counts,
            "laws_in_force": len({d.metadata.get("law") for d in live}), "articles_in_force": len(live),
            "articles_superseded": sum(1 for d in docs if d.metadata.get("ended_by") == "superseded"),
            "base_laws_not_held": len(missing), "base_laws_not_held_sample": missing[:5],
            "not_covered": NOT_COVERED}


__all__ = ["NOT_COVERED", "coverage"]
