"""How ``ask`` and ``chat`` print an answer, whether a warm ``legalrag serve`` gave it or this process did (which
path answers is :func:`legalrag.warm.route.choose_server`'s choice).

The articles are printed as soon as retrieval ends (one line each), the answer streams beneath them, then
each citation is flagged and a last line says which path answered (the server, or this process and why).
One printer serves both paths: it reads the JSON shape of an answer (``serialize.answer_to_dict``), which is
what the server sends and what the in-process path builds. Nothing here imports the retrieval stack or an
HTTP library: this is the client path whose start-up the first printed article waits for.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from legalrag.warm.client import ServerError, ServerGone, WarmServer, stream


class AnswerPrinter:
    """Prints an answer as it arrives: waits and stages on stderr-like dim lines, the articles when retrieval
    ends, the text as it is generated, then the citations and the path that answered. ``quiet`` (``--json``)
    prints nothing but keeps the events' times."""

    def __init__(self, quiet: bool = False, question: str | None = None):
        self.quiet, self.question = quiet, question
        self.pieces: list[str] = []
        self.sources_shown = False
        self.index: dict = {}  # the server's ``started``: which index answers, held or loaded now

    def _out(self, text: str) -> None:
        if not self.quiet:
            sys.stdout.write(text)
            sys.stdout.flush()

    def note(self, text: str) -> None:
        if not self.quiet:
            typer.secho(text, dim=True)

    def event(self, name: str, data: Any) -> None:
        """One event of the server's stream (``queued``, ``started``, ``stage``, ``retrieved``, ``token``)."""
        if name == "queued":
            self.note(f"[the server is busy: waiting in its queue, position {data.get('position')}]")
        elif name == "started":
            self.index = dict(data)
            if float(data.get("queue_s") or 0) >= 0.5:
                self.note(f"[waited {float(data['queue_s']):.1f} s for the model]")
        elif name == "stage" and data.get("stage") == "load_index":
            self.note(f"[the server is opening the index {data.get('index')}]")
        elif name == "retrieved":
            self.sources(data.get("hits") or [], query=data.get("query"))
        elif name == "token":
            self.text(str(data.get("text", "")))

    def sources(self, hits: list[dict], query: str | None = None) -> None:
        """The retrieved articles, one line each, before the answer (and the query searched, when a
        consultation's processor made one that is not the question)."""
        self.sources_shown = True
        if self.quiet:
            return
        if query and self.question and " ".join(query.split()) != " ".join(self.question.split()):
            self._out(f"[query] {query}\n")
        if not hits:
            self._out("Sources: none retrieved.\n\n")
            return
        lines = [f"  [{i}] {h.get('citation') or h.get('title') or h.get('id')}  ({h.get('id')})"
                 for i, h in enumerate(hits, 1)]
        self._out("Sources:\n" + "\n".join(lines) + "\n\n")

    def text(self, piece: str) -> None:
        self.pieces.append(piece)
        self._out(piece)

    def finish(self, payload: dict, route: str, notes: list[str] = ()) -> None:
        """After the answer: the text if it was not streamed, each citation flagged, notes, timings, route."""
        if self.quiet:
            return
        text = str(payload.get("answer") or payload.get("text") or "")
        if "".join(self.pieces).strip() != text.strip():
            self._out(("\n" if self.pieces else "") + text)
        self._out("\n\n")
        citations = payload.get("citations") or []
        declined = any(isinstance(st, dict) and st.get("agent") == "guard" and st.get("action") in
                       ("injection", "not_covered") for st in payload.get("steps") or [])
        if declined:
            pass  # a one-line explanation instead of an answer: no citation to check
        elif not citations:
            typer.secho("The answer cites no article: nothing in it is shown to be supported.", fg="yellow")
        else:
            typer.secho("Citations checked against the corpus:", bold=True)
        for c in citations:
            typer.echo("  " + citation_line(c))
        for line in list(payload.get("notes") or []) + list(notes):
            typer.secho(f"Note: {line}", fg="yellow")
        if payload.get("notice"):
            typer.secho(str(payload["notice"]), bold=True)
        t, usage = payload.get("timings") or {}, payload.get("usage") or {}
        cached = ", cached" if usage.get("cached_calls") else ""
        prefill = (f" (the model read {int(t['prompt_tokens_evaluated'])} prompt tokens in {t['prefill_s']:.2f} s)"
                   if "prefill_s" in t and "prompt_tokens_evaluated" in t else "")
        typer.secho(f"retrieval {t.get('retrieval_s', 0):.2f} s, first token after {t.get('ttft_s', 0):.2f} s{prefill}, "
                    f"generation {t.get('generation_s', 0):.2f} s ({usage.get('completion_tokens', 0)} tokens"
                    f"{cached}), citation check {t.get('citation_check_s', 0):.2f} s; answered by {route}", dim=True)


MARKS = {"supported": ("green", "✓ SUPPORTED"), "exists": ("yellow", "? EXISTS"),
         "not_found": ("red", "✗ NOT FOUND"), "repealed": ("red", "↻ REPEALED"), "no_corpus": ("blue", "∅ NO CORPUS")}
REASONS = {"not_retrieved": "not among the retrieved articles the answer was given",
           "does_not_bear": "its text does not bear on the sentence that cites it",
           "no_claim": "the text states no claim to check it against",
           "unknown_format": "a citation format the resolver does not know"}


def citation_line(c: dict) -> str:
    """One line for a checked citation of an answer's JSON: its mark (✓ only for supported) and why."""
    name = c.get("canonical") or c.get("text")
    target = f" -> {c['document_id']}" if c.get("document_id") else ""
    mark = c.get("mark")
    if mark in MARKS:
        colour, label = MARKS[mark]
        why = REASONS.get(str(c.get("mark_reason")), c.get("mark_reason") or "")
        if mark == "repealed" and c.get("successor"):
            why = f"replaced by {c['successor']}"
        elif mark == "not_found" and not why:
            why = c.get("note") or ""
        cur = c.get("currency") or {}  # beside the support mark: "· amended 2023-12-29"
        since = f" · {cur['label']}" if cur.get("status") not in (None, "current", "unknown") else ""
        return typer.style(f"{label:<13}", fg=colour, bold=mark != "supported") + f"  {name}{target}{since}" + \
            (f" ({why})" if why else "")
    if not c.get("resolved"):  # checked for existence only
        return typer.style("✗ NOT FOUND    ", fg="red", bold=True) + f" {name}" + (f" ({c['note']})" if c.get("note") else "")
    return typer.style("? EXISTS       ", fg="yellow") + f" {name}{target} (support not checked)"


def server_route(server: WarmServer, printer: AnswerPrinter) -> str:
    held = printer.index
    how = {"loaded": f", which opened the index {held.get('index')} for this request "
                     f"({float(held.get('index_load_s') or 0):.1f} s)",
           "held": f" (index {held.get('index')})"}.get(str(held.get("index_load")), "")
    return f"the legalrag server at {server.url} ({server.llm}){how}"


def through_server(server: WarmServer, path: str, body: dict, printer: AnswerPrinter) -> dict:
    """The answer from the server's stream route ``path`` (``/ask/stream``, ``/consult/stream``), printed as it
    comes; raises ServerError (a refusal) or ServerGone (it stopped), after which this process answers."""
    return stream(server.url, path, body, printer.event)


def fallback_note(exc: Exception, printer: AnswerPrinter) -> str:
    """Why the server's answer was not used, said before this process answers instead."""
    if isinstance(exc, ServerGone) and printer.pieces:
        why = f"the server stopped in the middle of the answer ({exc}); answering again in this process"
    elif isinstance(exc, ServerGone) and printer.sources_shown:
        why = f"the server stopped before the answer began ({exc}); answering in this process"
    elif isinstance(exc, ServerGone):
        why = f"the server did not answer ({exc}); answering in this process"
    elif isinstance(exc, ServerError) and exc.kind == "Busy":
        why = f"{exc}; answering in this process instead of waiting"
    else:
        why = f"{exc}; answering in this process"
    if not printer.quiet:
        typer.secho(("\n" if printer.pieces else "") + f"[{why}]", fg="yellow")
    return why

