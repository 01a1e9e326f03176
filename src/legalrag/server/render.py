"""JSON shapes of the library's results for the HTTP API (one function per result type)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Sequence

from legalrag.types import Citation, Document, Hit, Step


def jsonable(value: Any) -> Any:
    """Plain JSON data from trajectories' free-form inputs and outputs (dataclasses, enums, tuples, sets)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    return str(value)


def citation_label(doc: Document) -> str:
    from legalrag.citations import citation_label as label

    return label(doc)


def document_to_dict(doc: Document) -> dict[str, Any]:
    return {"id": doc.id, "title": doc.title, "citation": citation_label(doc), "text": doc.text,
            "law": doc.metadata.get("law"), "article_label": doc.metadata.get("article_label"),
            "source": doc.source}


def hit_to_dict(hit: Hit) -> dict[str, Any]:
    d = hit.document
    return {"rank": hit.rank, "id": d.id, "score": hit.score, "title": d.title, "citation": citation_label(d),
            "text": d.text, "retriever": hit.retriever, "sources": dict(hit.sources)}


def citation_to_dict(c: Citation) -> dict[str, Any]:
    """A checked citation; ``note`` says why an unresolved one did not resolve (never dropped)."""
    note = c.note or ("" if c.resolved else "no article of this number and law in the corpus")
    return {"text": c.text, "canonical": c.canonical, "resolved": c.resolved, "document_id": c.document_id,
            "in_retrieved": c.in_retrieved, "note": note}


def step_to_dict(step: Step) -> dict[str, Any]:
    return {"agent": step.agent, "action": step.action, "input": jsonable(step.input),
            "output": jsonable(step.output), "seconds": round(step.seconds, 4), "tokens": step.tokens,
            "error": step.error}


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
