"""The HTTP API's payloads, built from the shared JSON shapes of ``legalrag.serialize``."""

from __future__ import annotations

from typing import Any, Sequence

from legalrag.citations import citation_label
from legalrag.serialize import document_to_dict, hit_to_dict, jsonable, step_to_dict
from legalrag.serialize import citation_to_dict as _citation_to_dict
from legalrag.types import Citation, Hit

__all__ = ["answer_payload", "citation_label", "citation_to_dict", "document_to_dict", "hit_to_dict", "jsonable",
           "step_to_dict"]


def citation_to_dict(c: Citation) -> dict[str, Any]:
    """A checked citation as the API returns it: the article's text is fetched from ``/documents/{id}``."""
    return _citation_to_dict(c, text=False)


def answer_payload(question: str, answer: Any, *, query: str | None = None, model: str = "",
                   queue_s: float = 0.0) -> dict[str, Any]:
    """An answer (``ask`` or a consultation turn): text, checked citations, the articles it was grounded on."""
    hits: Sequence[Hit] = answer.sources
    timings = {k: round(float(v), 4) for k, v in dict(answer.timings).items()}
    timings["queue_s"] = round(queue_s, 4)
    return {"question": question, "query": query if query is not None else question, "answer": answer.text,
            "model": model, "citations": [citation_to_dict(c) for c in answer.citations],
            "retrieved": [hit_to_dict(h) for h in hits], "steps": [step_to_dict(s) for s in answer.steps],
            "timings": timings, "unresolved": sum(not c.resolved for c in answer.citations)}
