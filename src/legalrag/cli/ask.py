"""`legalrag ask "question" --index DIR`: retrieve, answer with cited articles, check every citation.

The answer engine (:mod:`legalrag.engine`) does the work with its defaults; the model is the local model server
when one is up (`legalrag llm start`), else the embedded model loaded in this process.
"""

from __future__ import annotations

import sys
from typing import Optional

import typer

from legalrag.cli.apps import app
from legalrag.cli.common import (CacheOption, EndpointModelOption, EndpointOption, IndexOrDemoOption, JsonOption,
                                 ModelOption, RetrieverOption, ThreadsOption, root)
from legalrag.engine import DEFAULTS

StyleOption = typer.Option(None, "--style", help="guided (conclusion, legal basis with the decisive clause, what to "
                           "do, when to see a lawyer) or brief (conclusion and reasons); default: the answer.style "
                           f"setting, else {DEFAULTS.style}.")
LocalOption = typer.Option(False, "--local", help="Load the model in this process even when a local model "
                           "server is up.")


@app.command("ask")
def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The legal question."),
    index: IndexOrDemoOption = None,
    k: Optional[int] = typer.Option(None, "--k", min=1, help="Articles retrieved and given to the model "
                                    f"(default: the answer.k setting, else {DEFAULTS.k})."),
    retriever: RetrieverOption = None,
    as_json: JsonOption = False,
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=16, help="Longest answer, in tokens "
                                             f"(default: the answer.max_tokens setting, else {DEFAULTS.max_tokens})."),
    lang: Optional[str] = typer.Option(None, "--lang", help="zh or en (default: the index's language)."),
    style: Optional[str] = StyleOption,
    cache: CacheOption = True,
    evidence_tokens: Optional[int] = typer.Option(None, "--evidence-tokens", min=0,
                                                  help="Token budget for the retrieved articles in the prompt: each "
                                                  "is cut to the clauses matching the question (default: the "
                                                  f"answer.evidence_tokens setting, else {DEFAULTS.evidence_tokens}; "
                                                  f"0: whole articles, {DEFAULTS.max_article_chars} characters "
                                                  "each)."),
    local: bool = LocalOption,
    threads: ThreadsOption = None,
) -> None:
    """Answer a question from the index; unresolved or unretrieved citations are flagged."""
    from legalrag.answer import answer_question
    from legalrag.cli._answer_output import print_answer
    from legalrag.serialize import answer_to_dict

    idx = root(ctx).open_index_or_demo(index, progress=not as_json)
    llm = root(ctx).make_answer_llm(model, endpoint, endpoint_model, cache=cache, threads=threads,
                                    local=local)

    def on_text(piece: str) -> None:  # stream the answer as it is generated; the citation check follows it
        if not as_json:  # --json still streams, so that its ttft_s is the real time to the first token
            sys.stdout.write(piece)
            sys.stdout.flush()

    s = root(ctx).answer_settings(k=k, evidence_tokens=evidence_tokens, style=style, max_tokens=max_tokens)
    answer = answer_question(question, idx, llm, k=s.k, retriever=retriever, lang=lang, max_tokens=s.max_tokens,
                             style=s.style, evidence_tokens=s.evidence_tokens, on_text=on_text)
    route = getattr(llm, "route", "in-process")
    if as_json:
        from legalrag.cli.common import print_json

        print_json(answer_to_dict(answer, model=llm.model_id, llm=route))
    else:
        print()
        print_answer(answer, show_text=False, route=route, note=getattr(llm, "fallback_note", ""))
