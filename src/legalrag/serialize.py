"""The JSON shapes of the shared vocabulary: one function per type, used by the CLI's ``--json`` output, the
HTTP app and the trace files alike, so a hit, a citation or a result reads the same everywhere."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from legalrag.citecheck import citation_label
from legalrag.lang import legal_notice
from legalrag.types import Answer, Citation, Document, Hit, Quoted, Response, Step, Usage

UNRESOLVED_NOTE = "no article of this number and law in the corpus"


def jsonable(value: Any) -> Any:
    """Plain JSON data from trajectories' free-form inputs and outputs (dataclasses, enums, tuples, sets,
    objects with attributes); anything else becomes its string."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if getattr(value, "__dict__", None):
        return jsonable(vars(value))
    return str(value)


def document_to_dict(doc: Document) -> dict[str, Any]:
    """An article or case with its citation label."""
    return {"id": doc.id, "title": doc.title, "citation": citation_label(doc), "text": doc.text,
            "law": doc.metadata.get("law"), "article_label": doc.metadata.get("article_label"),
            "source": doc.source}


def hit_to_dict(hit: Hit, *, text: bool = True) -> dict[str, Any]:
    """A retrieved document with its rank, score, citation label and (for fused hits) the rank each member gave."""
    d = hit.document
    out = {"rank": hit.rank, "id": d.id, "score": hit.score, "title": d.title, "citation": citation_label(d),
           "retriever": hit.retriever, "sources": dict(hit.sources), "metadata": jsonable(dict(d.metadata))}
    if text:
        out["text"] = d.text
    return out


def citation_to_dict(c: Citation, *, text: bool = True) -> dict[str, Any]:
    """A checked citation: what was written, what it resolved to, and why not when it did not (an unresolved
    citation always carries a note; it is never dropped), and its support mark (``mark``: supported, exists,
    not_found, repealed or no_corpus; ``mark_reason``, the ``claim`` checked, the model's ``support``, a
    repealed law's ``successor``; None when only existence was checked), and its ``currency`` (None when the
    versions were not read). ``text`` adds the article's text."""
    out = {"text": c.text, "canonical": c.canonical, "resolved": c.resolved, "document_id": c.document_id,
           "in_retrieved": c.in_retrieved, "note": c.note or ("" if c.resolved else UNRESOLVED_NOTE),
           "mark": c.mark or None, "mark_reason": c.mark_reason or None, "claim": c.claim or None,
           "support": c.support, "successor": c.successor or None, "clause": c.clause or None,
           "clause_reason": c.clause_reason or None, "currency": dict(c.currency) if c.currency else None}
    if text:
        out["document_text"] = c.document_text if c.resolved else None
    return out


def check_report_to_dict(report: Any, *, text: bool = True) -> dict[str, Any]:
    """The JSON shape of a ``citations.checker.CheckReport`` (``check --json``, ``POST /citations/check``): each
    citation's fields of :func:`citation_to_dict` plus ``start``/``end``, ``reason`` and a readable ``mark_text``."""
    from legalrag.citecheck.marks import mark_line

    cits = [{**citation_to_dict(i.citation, text=text), "reason": reason_code(i.citation),
             "mark_text": mark_line(i.citation), "start": i.start, "end": i.end} for i in report.items]
    return {"citations": cits, "unresolved": sum(not i.citation.resolved for i in report.items),
            "summary": report.summary, "characters": len(report.text), "blocks": report.blocks,
            "seconds": round(report.seconds, 3)}


def step_to_dict(step: Step) -> dict[str, Any]:
    """A trajectory step as plain JSON values."""
    return {"agent": step.agent, "action": step.action, "input": jsonable(step.input),
            "output": jsonable(step.output), "seconds": round(step.seconds, 4), "tokens": step.tokens,
            "error": step.error}


def response_to_dict(result: Response, *, hit_text: bool = False, **extra: Any) -> dict[str, Any]:
    """The shared part of every answer-like result, plus ``extra`` fields of the capability."""
    from legalrag.citecheck.marks import summarise_marks

    return {"question": result.question, "text": result.text,
            "citations": [citation_to_dict(c) for c in result.citations],
            "unresolved": sum(not c.resolved for c in result.citations),
            "marks": summarise_marks(result.citations),
            "sources": [hit_to_dict(h, text=hit_text) for h in result.sources],
            "steps": [step_to_dict(s) for s in result.steps], "usage": result.usage.to_dict(),
            "timings": {k: round(float(v), 3) for k, v in result.timings.items()}, **extra}


def answer_to_dict(answer: Response, *, model: str = "", llm: str = "", query: str | None = None,
                   notes: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    """The one JSON shape of an answer (``ask --json``, ``chat``, ``POST /ask``, ``POST /consult``): the shared
    response fields, the answer under ``answer`` too, the model and how it was reached (``llm``: in-process or
    the address of a local model server), the retrieval query, and the counts a reader checks first."""
    out = response_to_dict(answer, hit_text=True)
    out.update(answer=answer.text, query=query if query is not None else answer.question, model=model, llm=llm,
               notes=notes if notes is not None else answer_notes(answer),
               not_retrieved=sum(c.resolved and not c.in_retrieved for c in answer.citations))
    out["citations"] = [{**citation_to_dict(c), "reason": reason_code(c)} for c in answer.citations]
    out["retrieved"] = out.pop("sources")
    out.update(basis_fields(answer))
    out["notice"] = legal_notice(answer.question)
    out.update(extra)
    return out


def quoted_to_dict(q: Quoted) -> dict[str, Any]:
    """One article of an answer's legal basis: its id, its name, its verbatim quote and the quote's offsets."""
    return {"document_id": q.document_id, "citation": q.citation, "quote": q.text,
            "spans": [list(span) for span in q.spans], "probability": q.probability, "role": q.role,
            "exceptions": q.exceptions}


def basis_fields(answer: Any) -> dict[str, Any]:
    """An answer's quoted legal basis (``basis``), whether it is the honest fallback (``fallback``: true/false,
    ``fallback_reason``: ``low_probability`` or ``not_supported``) and the periods or amounts it states that no
    quoted clause gives (``not_from_law``)."""
    reason = getattr(answer, "fallback", "") or ""
    return {"basis": [quoted_to_dict(q) for q in getattr(answer, "basis", ())], "fallback": bool(reason),
            "fallback_reason": reason or None, "not_from_law": list(getattr(answer, "not_from_law", ()))}


def quoted_from_dict(d: dict[str, Any]) -> Quoted:
    return Quoted(document_id=str(d["document_id"]), citation=str(d.get("citation") or ""),
                  text=str(d.get("quote") or d.get("text") or ""),
                  spans=tuple((int(a), int(b)) for a, b in d.get("spans") or ()),
                  probability=d.get("probability"), role=str(d.get("role") or "decisive"),
                  exceptions=int(d.get("exceptions") or 0))


# Why a citation did not resolve, as a code pages and scripts can translate; matched against the notes that
# ``citations.resolve.Resolution.message`` and the injection guard write.
REASONS = (("no such paragraph or item", "unknown_paragraph"), ("not held by the corpus", "not_held"),
           ("no law title is given", "no_law"), ("is not in the corpus", "unknown_law"),
           ("may mean any of", "ambiguous_law"), ("several documents differ", "ambiguous_article"),
           ("has no article", "unknown_article"), ("no article of this number", "unknown_article"),
           ("no such provision", "unknown_article"), ("instruction hidden in source", "injection"),
           ("addressed to the model", "injection"))


def reason_code(c: Citation) -> str | None:
    if c.resolved and "addressed to the model" not in (c.note or ""):
        return None
    note = c.note or ""
    return next((code for text, code in REASONS if text in note), "unknown_article" if not note else "other")


def answer_notes(answer: Response) -> list[str]:
    """What the user should know about how the prompt was built (a cut question, articles left out)."""
    notes = []
    for s in answer.steps:
        if s.action in ("cut_question", "cut_message"):
            notes.append(str(s.output))
        elif s.action == "select_evidence":
            notes += list((s.output or {}).get("notes", []))
        elif s.action in ("drop_source", "shrink_evidence", "shorten_sources"):
            notes.append(f"{s.action.replace('_', ' ')} ({s.input}): the prompt did not fit the context")
        elif s.agent == "select" and s.error:
            notes.append(str(s.error))
        elif s.action == "generate" and s.error:
            notes.append(f"generation {s.error}")
        elif s.action == "fallback":
            notes.append("no conclusion: " + ("no retrieved article reaches the selector's threshold"
                                              if s.output == "low_probability" else
                                              "the support model does not find the conclusion in the quoted clauses")
                         + "; the answer lists the most relevant articles and what to check")
        elif s.action == "versions_held":
            notes += list((s.output or {}).get("notes", []))
        elif s.action == "not_from_law":
            notes.append("not from the law: " + ", ".join(map(str, s.output or ())) + " (marked in the answer)")
    return notes


# -- the inverse: an answer's JSON (a warm server's reply) back as the frozen types it was built from ------------

def citation_from_dict(d: dict[str, Any]) -> Citation:
    """A citation of :func:`citation_to_dict`'s shape as the :class:`Citation` it was (an unresolved one's note
    kept as written)."""
    return Citation(text=str(d["text"]), canonical=d.get("canonical") or "", resolved=bool(d.get("resolved")),
                    document_id=d.get("document_id"), in_retrieved=bool(d.get("in_retrieved")),
                    document_text=d.get("document_text") or "", note=d.get("note") or "", mark=d.get("mark") or "",
                    mark_reason=d.get("mark_reason") or "", claim=d.get("claim") or "", support=d.get("support"),
                    successor=d.get("successor") or "", clause=d.get("clause") or "",
                    clause_reason=d.get("clause_reason") or "", currency=d.get("currency") or None)


def hit_from_dict(d: dict[str, Any]) -> Hit:
    """A hit of :func:`hit_to_dict`'s shape (with its text) as the :class:`Hit` it was; the document's ``source``
    and ``kind``, which the shape does not carry, take their defaults."""
    doc = Document(id=str(d["id"]), text=d.get("text") or "", title=d.get("title") or "",
                   metadata=dict(d.get("metadata") or {}))
    return Hit(document=doc, score=float(d.get("score") or 0.0), rank=int(d.get("rank") or 0),
               retriever=d.get("retriever") or "", sources=dict(d.get("sources") or {}))


def step_from_dict(d: dict[str, Any]) -> Step:
    return Step(agent=str(d.get("agent", "")), action=str(d.get("action", "")), input=d.get("input"),
                output=d.get("output"), seconds=float(d.get("seconds") or 0.0), tokens=int(d.get("tokens") or 0),
                error=d.get("error"))


def answer_from_dict(d: dict[str, Any]) -> Answer:
    """An :class:`Answer` from :func:`answer_to_dict`'s shape (``ask --json``, the ``done`` event of
    ``/ask/stream`` and ``/consult/stream``): the text, every citation with its mark, the retrieved articles,
    the steps, the usage and the timings. Raises :class:`~legalrag.errors.InputError` naming what is missing."""
    from legalrag.errors import InputError

    if not isinstance(d, dict) or not isinstance(d.get("text", d.get("answer")), str):
        raise InputError("an answer's JSON needs its text under 'text' (or 'answer'), as answer_to_dict writes it",
                         field="text")
    usage = {f.name: d.get("usage", {}).get(f.name) for f in dataclasses.fields(Usage)
             if (d.get("usage") or {}).get(f.name) is not None}
    return Answer(question=str(d.get("question") or ""), text=str(d.get("text", d.get("answer"))),
                  citations=tuple(citation_from_dict(c) for c in d.get("citations") or ()),
                  sources=tuple(hit_from_dict(h) for h in d.get("retrieved", d.get("sources")) or ()),
                  steps=tuple(step_from_dict(s) for s in d.get("steps") or ()), usage=Usage(**usage),
                  timings={str(k): float(v) for k, v in (d.get("timings") or {}).items()
                           if isinstance(v, (int, float))},
                  basis=tuple(quoted_from_dict(q) for q in d.get("basis") or ()),
                  fallback=str(d.get("fallback_reason") or ""),
                  not_from_law=tuple(str(x) for x in d.get("not_from_law") or ()))
