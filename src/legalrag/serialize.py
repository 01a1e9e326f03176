"""The JSON shapes of the shared vocabulary: one function per type, used by the CLI's ``--json`` output, the
HTTP app and the trace files alike, so a hit, a citation or a result reads the same everywhere."""

from __future__ import annotations

import json
from typing import Any

from legalrag.citations import citation_label
from legalrag.types import Citation, Hit, Response, Step


def hit_to_dict(hit: Hit, *, text: bool = True) -> dict[str, Any]:
    """A retrieved document with its rank, score, citation label and (for fused hits) the rank each member gave."""
    d = hit.document
    out = {"rank": hit.rank, "id": d.id, "score": hit.score, "title": d.title, "citation": citation_label(d),
           "retriever": hit.retriever, "sources": dict(hit.sources), "metadata": dict(d.metadata)}
    if text:
        out["text"] = d.text
    return out


def citation_to_dict(c: Citation) -> dict[str, Any]:
    """A checked citation: what was written, what it resolved to, and why not when it did not."""
    return {"text": c.text, "canonical": c.canonical, "resolved": c.resolved, "document_id": c.document_id,
            "document_text": c.document_text if c.resolved else None, "in_retrieved": c.in_retrieved,
            "note": c.note}


def step_to_dict(step: Step) -> dict[str, Any]:
    """A trajectory step as plain JSON values (nested objects become their fields, anything else a string)."""
    return json.loads(json.dumps(step.__dict__, ensure_ascii=False,
                                 default=lambda o: getattr(o, "__dict__", None) or str(o)))


def response_to_dict(result: Response, *, hit_text: bool = False, **extra: Any) -> dict[str, Any]:
    """The shared part of every answer-like result, plus ``extra`` fields of the capability."""
    return {"question": result.question, "text": result.text,
            "citations": [citation_to_dict(c) for c in result.citations],
            "unresolved": sum(not c.resolved for c in result.citations),
            "sources": [hit_to_dict(h, text=hit_text) for h in result.sources],
            "steps": [step_to_dict(s) for s in result.steps], "usage": result.usage.to_dict(),
            "timings": {k: round(float(v), 3) for k, v in result.timings.items()}, **extra}
