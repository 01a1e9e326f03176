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
from legalrag.cli.apps import app
from legalrag.cli.ask import LocalOption, StyleOption
from legalrag.cli.common import (CacheOption, EndpointModelOption, EndpointOption, IndexOrDemoOption, JsonOption,
                                 ModelOption, RetrieverOption, ThreadsOption, root)
from legalrag.conversation import DEFAULT_PROCESSOR, PROCESSORS, ProcessorName
from legalrag.engine import DEFAULTS


@app.command("chat")
def chat(
    ctx: typer.Context,
    index: IndexOrDemoOption = None,
    k: Optional[int] = typer.Option(None, "--k", min=1, help="Articles retrieved per turn (default: the answer.k "
                                    f"setting, else {DEFAULTS.k})."),
    retriever: RetrieverOption = None,
    processor: ProcessorName = typer.Option(ProcessorName(DEFAULT_PROCESSOR), "--processor",
                                  help=f"How the dialogue becomes a query: {', '.join(PROCESSORS)} (default: the "
                                  "one that measured best; rewrite costs an LLM call per turn)."),
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=16, help="Longest answer, in tokens "
                                             f"(default: the answer.max_tokens setting, else {DEFAULTS.max_tokens})."),
    style: Optional[str] = StyleOption,
    evidence_tokens: Optional[int] = typer.Option(None, "--evidence-tokens", min=0,
                                                  help="Token budget for the retrieved articles in each answer "
                                                  "prompt (default: the answer.evidence_tokens setting, else "
                                                  f"{DEFAULTS.evidence_tokens}; 0: whole articles)."),
    local: bool = LocalOption,
    cache: CacheOption = True,
    as_json: JsonOption = False,  # one line of JSON per turn (the shape of `ask --json`, POST /consult)
    threads: ThreadsOption = None,
) -> None:
    """Hold a multi-turn consultation: retrieval each turn, answers with checked citations."""
    from legalrag.conversation import Consultation
    from legalrag.engine import AnswerEngine
    idx = root(ctx).open_index_or_demo(index, threads=threads)
    llm = root(ctx).make_answer_llm(model, endpoint, endpoint_model, cache=cache, threads=threads,
                                    local=local)
    settings = root(ctx).answer_settings(k=k, evidence_tokens=evidence_tokens, style=style, max_tokens=max_tokens)
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
        for c in answer.citations:
            if not c.resolved:
                mark = "UNRESOLVED: not in the corpus" + (f" ({c.note})" if c.note else "")
            elif not c.in_retrieved:
                mark = "in the corpus, but not among the retrieved sources"
            else:
                mark = "verified"
            typer.echo(f"  citation {c.text} -> {mark}")
        u = answer.usage
        typer.echo(f"  [{answer.timings.get('total_s', 0):.1f} s, {u.calls} model call(s), {u.completion_tokens} "
                   f"tokens; model: {getattr(llm, 'route', 'in-process')}]")
