"""The HTTP API's payloads, built from the shared JSON shapes of ``legalrag.serialize``."""

from __future__ import annotations

from typing import Any

from legalrag.citecheck import citation_label
from legalrag.serialize import REASONS, document_to_dict, hit_to_dict, jsonable, reason_code, step_to_dict
from legalrag.serialize import citation_to_dict as _citation_to_dict
from legalrag.types import Citation

__all__ = ["REASONS", "answer_payload", "citation_label", "citation_payload", "document_to_dict", "hit_to_dict",
           "jsonable", "reason_code", "step_to_dict"]


def citation_payload(c: Citation) -> dict[str, Any]:
    """A checked citation as the API returns it: the article's text is fetched from ``/documents/{id}``;
    ``reason`` is a code for why it did not resolve (the page's language), ``note`` the English sentence."""
    return {**_citation_to_dict(c, text=False), "reason": reason_code(c)}


def answer_payload(question: str, answer: Any, *, query: str | None = None, model: str = "",
                   queue_s: float = 0.0) -> dict[str, Any]:
    """An answer (``ask`` or a consultation turn) in the one JSON shape ``legalrag ask --json`` prints
    (:func:`legalrag.serialize.answer_to_dict`), with the time it waited for the model under ``timings``."""
    from legalrag.serialize import answer_to_dict

    out = answer_to_dict(answer, model=model, llm="in-process (the server's model)", query=query)
    out["timings"]["queue_s"] = round(queue_s, 4)
    return out
