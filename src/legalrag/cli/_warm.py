"""How ``ask`` and ``chat`` answer through a warm ``legalrag serve``, and how they print an answer either way.

The articles are printed as soon as retrieval ends (one line each), the answer streams beneath them, then
each citation is flagged and a last line says which path answered (the server, or this process and why).
One printer serves both paths: it reads the JSON shape of an answer (``serialize.answer_to_dict``), which is
what the server sends and what the in-process path builds. Nothing here imports the retrieval stack or an
HTTP library: this is the client path whose start-up the first printed article waits for.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import typer

from legalrag.warm.client import ServerError, ServerGone, WarmServer, probe, stream

START_HINT = "start one with `legalrag serve --background`"


def server_url(settings: Any) -> str:
    """Where ``legalrag serve`` listens by the saved settings (a wildcard bind is reached on loopback)."""
    host = settings.serve_host
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"http://[{host}]:{settings.serve_port}" if ":" in host else f"http://{host}:{settings.serve_port}"


def choose_server(settings: Any, *, local: bool = False, model: str | None = None, endpoint: str | None = None,
                  evidence_tokens: int | None = None, index: str | None = None) -> tuple[WarmServer | None, str]:
    """The warm server to answer through, or None and the reason this process answers instead. (``--no-cache``
    is no reason: the request asks the server to skip its call cache.)"""
    from legalrag.warm.build import build_id

    if local:
        return None, "--local"
    if endpoint or settings.llm.endpoint:
        return None, "the model is an endpoint"
    url = server_url(settings)
    server = probe(url)
    if server is None:
        return None, f"no legalrag server at {url}; {START_HINT}"
    if server.build != build_id():
        return None, (f"the server at {url} runs another legalrag build ({server.build}; this is {build_id()}): "
                      "it is stale and was not used; restart it: `legalrag serve --stop`, then `legalrag serve "
                      "--background` (or Ctrl-C and `legalrag serve` where it runs in the foreground)")
    if not server.llm:
        return None, f"the server at {url} has no model (started with --no-llm)"
    if model and not _same_model(model, server.llm):
        return None, f"--model {model}: the server at {url} answers with {server.llm}"
    if evidence_tokens == 0 and server.evidence_tokens is not None:
        return None, (f"--evidence-tokens 0 (whole articles): the server at {url} cuts articles to "
                      f"{server.evidence_tokens} tokens")
    if evidence_tokens is not None and server.evidence_tokens is not None and evidence_tokens > server.evidence_tokens:
        return None, (f"--evidence-tokens {evidence_tokens} is above the server's budget of {server.evidence_tokens} "
                      "(`legalrag serve --evidence-tokens`)")
    if index is not None and not server.holds(index) and server.max_indexes < 1:
        return None, (f"the server at {url} holds {server.index} and may not open {index} "
                      "(`legalrag serve --max-indexes N`)")
    return server, ""


def request_budget(evidence_tokens: int | None) -> int | None:
    """The evidence budget a request to the warm server asks for: ``--evidence-tokens`` when given, else None
    (the server's own); 0 (whole articles) asks for the server's too, which :func:`choose_server` allows only
    to a server that gives whole articles itself."""
    return evidence_tokens or None


def _same_model(name: str, served: str) -> bool:
    from legalrag.wiring import canonical_model

    return canonical_model(name) == served or name == served


def index_arg(index: Any, settings: Any) -> str | None:
    """The index a request names: ``--index`` or the saved ``index.path``, as an absolute path; None for the
    server's own (no index named anywhere: in this process that is the statute sample)."""
    path = index if index is not None else settings.index
    return None if path is None else os.path.abspath(os.path.expanduser(str(path)))


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
        return typer.style(f"{label:<13}", fg=colour, bold=mark != "supported") + f"  {name}{target}" + \
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
    return stream(server.url, path, {k: v for k, v in body.items() if v is not None}, printer.event)


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

