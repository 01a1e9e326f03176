"""`legalrag ask "question" --index DIR`: retrieve, answer with cited articles, check every citation.

The answer engine (:mod:`legalrag.engine`) does the work with its defaults; the model is the local model server
when one is up (`legalrag llm start`), else the embedded model loaded in this process.
"""

from __future__ import annotations

import sys
from typing import Optional

import typer

from legalrag.cli.apps import app
from legalrag.cli.common import (EndpointModelOption, EndpointOption, IndexOrDemoOption, JsonOption, ModelOption,
                                 ThreadsOption, root)

StyleOption = typer.Option(None, "--style", help="guided (default: conclusion, legal basis with the decisive "
                           "clause, what to do, when to see a lawyer) or brief (conclusion and reasons).")
LocalOption = typer.Option(False, "--local", help="Load the model in this process even when a local model "
                           "server is up.")


@app.command("ask")
def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The legal question."),
    index: IndexOrDemoOption = None,
    k: Optional[int] = typer.Option(None, "--k", min=1, help="Articles retrieved and given to the model "
                                    "(default: the answer engine's, 6)."),
    retriever: Optional[str] = typer.Option(None, "--retriever", help="Index component (default: the index's "
                                            "strongest, as `legalrag index info` shows)."),
    as_json: JsonOption = False,
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=16, help="Longest answer, in tokens "
                                             "(default 512)."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Answer language, zh or en (default: the question's "
                                       "own; a question in another language than the index's is translated for "
                                       "the search)."),
    style: Optional[str] = StyleOption,
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the LLM call cache."),
    evidence_tokens: Optional[int] = typer.Option(None, "--evidence-tokens", min=0,
                                                  help="Token budget for the retrieved articles in the prompt: each "
                                                  "is cut to the clauses matching the question (default 400; 0: "
                                                  "whole articles, 600 characters each)."),
    local: bool = LocalOption,
    threads: ThreadsOption = None,
) -> None:
    """Answer a question from the index; unresolved or unretrieved citations are flagged."""
    from legalrag.answer import answer_question
    from legalrag.cli._answer_output import print_answer
    from legalrag.serialize import answer_to_dict

    idx = root(ctx).open_index_or_demo(index, progress=not as_json)
    llm = root(ctx).make_answer_llm(model, endpoint, endpoint_model, cache=not no_cache, threads=threads,
                                    local=local)

    def on_text(piece: str) -> None:  # stream the answer as it is generated; the citation check follows it
        if not as_json:  # --json still streams, so that its ttft_s is the real time to the first token
            sys.stdout.write(piece)
            sys.stdout.flush()

    extra = {} if evidence_tokens is None else {"evidence_tokens": evidence_tokens or None}
    answer = answer_question(question, idx, llm, k=k, retriever=retriever, lang=lang, max_tokens=max_tokens,
                             style=style, on_text=on_text, **extra)
    route = getattr(llm, "route", "in-process")
    if as_json:
        from legalrag.cli.common import print_json

        print_json(answer_to_dict(answer, model=llm.model_id, llm=route))
    else:
        print()
        print_answer(answer, show_text=False, route=route, note=getattr(llm, "fallback_note", ""))
