"""`legalrag chat --index DIR`: a multi-turn legal consultation in the terminal.

Each turn: the conversation processor turns the dialogue into a query, the index is searched, and the model
answers from the retrieved articles (each cut to the clauses that match the query, within --evidence-tokens);
citations in the answer are checked against the corpus and unresolved ones are flagged. Type /exit (or end
the input) to stop, /reset to start a new consultation.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from legalrag.answer import DEFAULT_EVIDENCE_TOKENS
from legalrag.cli._answer_output import TerminalStream
from legalrag.cli.apps import app
from legalrag.cli.common import EndpointModelOption, EndpointOption, ModelOption, root
from legalrag.conversation import ProcessorName


@app.command("chat")
def chat(
    ctx: typer.Context,
    index: Path = typer.Option(..., "--index", help="Index directory."),
    k: int = typer.Option(5, "--k", min=1, help="Articles retrieved per turn."),
    retriever: Optional[str] = typer.Option(None, "--retriever", help="Index component (default: the first built)."),
    processor: ProcessorName = typer.Option(ProcessorName.REWRITE, "--processor",
                                        help="How the dialogue becomes a query: rewrite, last, all_questions, "
                                             "full_context."),
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    max_tokens: int = typer.Option(400, "--max-tokens", min=16, help="Longest answer, in tokens."),
    evidence_tokens: int = typer.Option(DEFAULT_EVIDENCE_TOKENS, "--evidence-tokens", min=0,
                                        help="Token budget for the retrieved articles in each answer prompt: each is "
                                             "cut to the clauses matching the query (0: whole articles, 400 "
                                             "characters each)."),
) -> None:
    """Hold a multi-turn consultation: retrieval each turn, answers with checked citations."""
    from legalrag.conversation import Consultation
    from legalrag.retrieval.pipeline import build_pipeline

    idx = root(ctx).open_index(index)
    pipe = build_pipeline(idx, retriever=retriever)
    lang = idx.manifest.get("lang", "zh")
    llm = root(ctx).make_llm(model, endpoint, endpoint_model)
    consultation = Consultation(lambda q, n: pipe.search(q, k=n), llm, documents=idx.documents, processor=processor.value,
                                k=k, lang=lang if lang in ("zh", "en") else "zh", max_tokens=max_tokens,
                                evidence_tokens=evidence_tokens or None)
    typer.echo("Ask a legal question (/reset starts over, /exit quits).")
    while True:
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
            typer.echo("(new consultation)")
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
                mark = "UNRESOLVED: not in the corpus"
            elif not c.in_retrieved:
                mark = "in the corpus, but not among the retrieved sources"
            else:
                mark = "verified"
            typer.echo(f"  citation {c.text} -> {mark}")
