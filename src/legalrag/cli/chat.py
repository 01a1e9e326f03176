"""`legalrag chat --index DIR`: a multi-turn legal consultation in the terminal.

Each turn: the conversation processor turns the dialogue into a query, and the answer engine
(:mod:`legalrag.engine`) retrieves, answers with the earlier turns as history, and checks every citation
against the corpus (unresolved ones are flagged). Type /exit (or end the input) to stop, /reset to start a new
consultation. The model is the local model server when one is up (`legalrag llm start`), else the embedded one.
"""

from __future__ import annotations

import sys
from typing import Optional

import typer

from legalrag.cli._answer_output import TerminalStream
from legalrag.citations.marks import mark_line as _mark_line
from legalrag.cli.apps import app
from legalrag.cli.ask import LocalOption, StyleOption
from legalrag.cli.common import (EndpointModelOption, EndpointOption, IndexOrDemoOption, JsonOption, ModelOption,
                                 ThreadsOption, root)
from legalrag.conversation import DEFAULT_PROCESSOR, PROCESSORS, ProcessorName


@app.command("chat")
def chat(
    ctx: typer.Context,
    index: IndexOrDemoOption = None,
    k: Optional[int] = typer.Option(None, "--k", min=1, help="Articles retrieved per turn (default: the answer "
                                    "engine's, 6)."),
    retriever: Optional[str] = typer.Option(None, "--retriever", help="Index component (default: the index's "
                                            "strongest)."),
    processor: ProcessorName = typer.Option(ProcessorName(DEFAULT_PROCESSOR), "--processor",
                                  help=f"How the dialogue becomes a query: {', '.join(PROCESSORS)} (default: the "
                                  "one that measured best; rewrite costs an LLM call per turn)."),
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=16, help="Longest answer, in tokens "
                                             "(default 512)."),
    style: Optional[str] = StyleOption,
    evidence_tokens: Optional[int] = typer.Option(None, "--evidence-tokens", min=0,
                                                  help="Token budget for the retrieved articles in each answer "
                                                  "prompt (default 400; 0: whole articles)."),
    local: bool = LocalOption,
    as_json: JsonOption = False,  # one line of JSON per turn (the shape of `ask --json`, POST /consult)
    threads: ThreadsOption = None,
) -> None:
    """Hold a multi-turn consultation: retrieval each turn, answers with checked citations."""
    from dataclasses import replace

    from legalrag.conversation import Consultation
    from legalrag.engine import DEFAULTS, AnswerEngine
    idx = root(ctx).open_index_or_demo(index, threads=threads)
    llm = root(ctx).make_answer_llm(model, endpoint, endpoint_model, threads=threads, local=local)
    settings = DEFAULTS.but(k=k, max_tokens=max_tokens, style=style)
    if evidence_tokens is not None:
        settings = replace(settings, evidence_tokens=evidence_tokens or None)
    engine = AnswerEngine.from_index(idx, llm, retriever=retriever, settings=settings)
    consultation = Consultation(engine=engine, processor=processor.value)
    if not as_json:
        typer.echo("Ask a legal question (/reset starts over, /exit quits).")
    while True:
        if not as_json:
            typer.echo("> ", nl=False)
        line = sys.stdin.readline()
        if not line:
            typer.echo("")
            break
        question = line.strip()
        if not question:
            continue
        if question in ("/exit", "/quit"):
            break
        if question == "/reset":
            consultation.turns.clear()
            if not as_json:
                typer.echo("(new consultation)")
            continue
        if as_json:
            import json

            from legalrag.serialize import answer_to_dict

            queries: list[str] = []
            answer = consultation.ask(question, on_query=queries.append)
            typer.echo(json.dumps(answer_to_dict(answer, model=llm.model_id, llm=getattr(llm, "route", "in-process"),
                                                 query=queries[-1], processor=processor.value), ensure_ascii=False))
            continue

        def on_query(query: str, question: str = question) -> None:  # before the answer starts to stream
            if query != question:
                typer.echo(f"[query] {query}")

        stream = TerminalStream()  # the answer as it is generated; sources and the citation check follow
        answer = consultation.ask(question, on_text=stream, on_query=on_query)
        if not stream.showed(answer.text):
            typer.echo(("\n" if stream.pieces else "") + answer.text, nl=False)
        typer.echo("")
        if answer.hits:
            typer.echo("Sources: " + "; ".join(f"[{i}] {h.document.title or h.id}" for i, h in enumerate(answer.hits, 1)))
        if not answer.citations:
            typer.echo("  the answer cites no article: nothing in it is shown to be supported")
        for c in answer.citations:
            typer.echo(f"  citation {c.text} -> {'✓ ' if c.mark == 'supported' else ''}{_mark_line(c)}")
        u = answer.usage
        typer.echo(f"  [{answer.timings.get('total_s', 0):.1f} s, {u.calls} model call(s), {u.completion_tokens} "
                   f"tokens; model: {getattr(llm, 'route', 'in-process')}]")
