"""`legalrag ask "question" --index DIR`: retrieve, answer with cited articles, check every citation."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from legalrag.answer import DEFAULT_EVIDENCE_TOKENS
from legalrag.cli.apps import app
from legalrag.cli.common import EndpointModelOption, EndpointOption, ModelOption, ThreadsOption, root


@app.command("ask")
def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The legal question."),
    index: Optional[Path] = typer.Option(None, "--index", help="Index directory (default: the bundled demo sample)."),
    k: int = typer.Option(8, "--k", min=1, help="Articles retrieved and given to the model."),
    retriever: Optional[str] = typer.Option(None, "--retriever", help="Index component (default: the first built)."),
    as_json: bool = typer.Option(False, "--json", help="Print the answer, checked citations and timings as JSON."),
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    max_tokens: int = typer.Option(512, "--max-tokens", min=16, help="Longest answer, in tokens."),
    lang: Optional[str] = typer.Option(None, "--lang", help="zh or en (default: the index's language)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the LLM call cache."),
    evidence_tokens: int = typer.Option(DEFAULT_EVIDENCE_TOKENS, "--evidence-tokens", min=0,
                                        help="Token budget for the retrieved articles in the prompt: each is cut to "
                                             "the clauses matching the question (0: whole articles, 600 "
                                             "characters each)."),
    threads: ThreadsOption = None,
) -> None:
    """Answer a question from the index; unresolved or unretrieved citations are flagged."""
    from legalrag.answer import answer_question, answer_to_dict
    from legalrag.cli._answer_output import print_answer

    if index is None:
        from legalrag.demo import demo_index

        idx = demo_index(progress=not as_json)
    else:
        idx = root(ctx).open_index(index)
    llm = root(ctx).make_llm(model, endpoint, endpoint_model, cache=not no_cache, threads=threads)

    def on_text(piece: str) -> None:  # stream the answer as it is generated; the citation check follows it
        if not as_json:  # --json still streams, so that its ttft_s is the real time to the first token
            sys.stdout.write(piece)
            sys.stdout.flush()

    answer = answer_question(question, idx, llm, k=k, retriever=retriever, lang=lang, max_tokens=max_tokens,
                             evidence_tokens=evidence_tokens or None, on_text=on_text)
    if as_json:
        from legalrag.cli.common import print_json

        print_json(answer_to_dict(question, answer, model=llm.model_id))
    else:
        print()
        print_answer(answer, show_text=False)
