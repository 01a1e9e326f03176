"""`legalrag ask "question" --index DIR`: retrieve, answer with cited articles, check every citation.

When a warm `legalrag serve` runs at the `serve` address and holds (or may open) the index, the question goes
to it and its answer stream is printed (`legalrag.warm`; with `--no-cache` the server answers past its call
cache); otherwise this process answers: the answer engine (:mod:`legalrag.answer.engine`) with the local model
server when one is up (`legalrag llm start`), else the embedded model. Either way the retrieved articles are printed first and the last line says which path answered.
"""

from __future__ import annotations

from typing import Optional

import typer

from legalrag.cli.apps import app
from legalrag.cli.common import (AsOfOption, CacheOption, IndexOrDemoOption, JsonOption, LLMOption, RetrieverOption,
                                 llm_spec, require_endpoint_model, root)
from legalrag.types import DEFAULTS

StyleOption = typer.Option(None, "--style", help="guided (conclusion, legal basis with the decisive clause, what to "
                           "do, when to see a lawyer) or brief (conclusion and reasons); default: the answer.style "
                           f"setting, else {DEFAULTS.style}.")
LocalOption = typer.Option(False, "--local", help="Answer in this process (loading the index and the model) even "
                           "when a legalrag server or a local model server is up.")


@app.command("ask")
def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The legal question."),
    index: IndexOrDemoOption = None,
    k: Optional[int] = typer.Option(None, "--k", min=1, help="Articles retrieved and given to the model "
                                    f"(default: the answer.k setting, else {DEFAULTS.k})."),
    retriever: RetrieverOption = None,
    as_json: JsonOption = False,
    model: LLMOption = None,
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=16, help="Longest answer, in tokens "
                                             f"(default: the answer.max_tokens setting, else {DEFAULTS.max_tokens})."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Answer language, zh or en (default: the question's "
                                       "own; a question in another language than the index's is translated for "
                                       "the search)."),
    style: Optional[str] = StyleOption,
    cache: CacheOption = True,
    evidence_tokens: Optional[int] = typer.Option(None, "--evidence-tokens", min=0,
                                                  help="Token budget for the retrieved articles in the prompt: each "
                                                  "is cut to the clauses matching the question (default: the "
                                                  f"answer.evidence_tokens setting, else {DEFAULTS.evidence_tokens}; "
                                                  f"0: whole articles, {DEFAULTS.max_article_chars} characters "
                                                  "each)."),
    local: bool = LocalOption,
    force: bool = typer.Option(False, "--force", help="Answer even when the question is declined as outside the "
                               "corpus (not Chinese national law, or not a legal question)."),
    as_of: AsOfOption = None,
) -> None:
    """Answer a question from the index; unresolved or unretrieved citations are flagged (threads: the
    runtime.threads setting)."""
    from legalrag.cli._warm import AnswerPrinter, fallback_note, server_route, through_server
    from legalrag.warm.client import ServerError, ServerGone
    from legalrag.warm.route import ASK_ROUTE, ask_request, choose_server, index_arg

    r = root(ctx)
    if as_of is not None:
        from legalrag.laws.versions import check_day

        as_of = check_day(as_of)
    name, endpoint, endpoint_model = llm_spec(model)
    require_endpoint_model(r, endpoint, endpoint_model)
    printer = AnswerPrinter(quiet=as_json)
    named = index_arg(index, r.settings)
    server, why = choose_server(r.settings, local=local, model=name, endpoint=endpoint,
                                evidence_tokens=evidence_tokens, index=named)
    if server is not None:  # --no-cache: the server answers too, past its call cache
        body = ask_request(question, index=named, k=k, retriever=retriever, max_tokens=max_tokens, lang=lang,
                        style=style, evidence_tokens=evidence_tokens, cache=cache, as_of=as_of)
        if force:  # the server answers past its scope decision too
            body["force"] = True
        try:
            payload = through_server(server, ASK_ROUTE, body, printer)
        except (ServerError, ServerGone) as exc:
            why = fallback_note(exc, printer)
            printer = AnswerPrinter(quiet=as_json)
        else:
            route = server_route(server, printer)
            payload["llm"] = f"server {server.url}"
            _done(payload, printer, route, as_json)
            return
    from legalrag.answer.scope import answer_anyway

    with answer_anyway(force):
        _in_process(ctx, printer, why, question=question, index=index, k=k, retriever=retriever, model=name,
                    endpoint=endpoint, endpoint_model=endpoint_model, max_tokens=max_tokens, lang=lang, style=style,
                    no_cache=not cache, evidence_tokens=evidence_tokens, local=local, threads=None, as_json=as_json,
                    as_of=as_of)


def _done(payload: dict, printer, route: str, as_json: bool, notes: list[str] = ()) -> None:
    if as_json:  # the one JSON shape: `llm` says the path (and why this process answered)
        from legalrag.cli.common import print_json

        print_json({**payload, "notes": list(payload.get("notes") or []) + list(notes)})
    else:
        printer.finish(payload, route, list(notes))


def _in_process(ctx: typer.Context, printer, why: str, *, question: str, index, k, retriever, model, endpoint,
                endpoint_model, max_tokens, lang, style, no_cache, evidence_tokens, local, threads,
                as_json: bool, as_of: str | None = None) -> None:
    """This process answers: open the index, build the model, print the articles when retrieval ends."""
    from legalrag.answer.question import answer_question
    from legalrag.cli.law import default_library  # the currency marks of an answer as of a past day
    from legalrag.serialize import answer_to_dict, hit_to_dict

    idx = root(ctx).index(index, as_of=as_of, progress=not as_json)
    llm = root(ctx).make_answer_llm(model, endpoint, endpoint_model, cache=not no_cache, threads=threads,
                                    local=local)
    s = root(ctx).answer_settings(k=k, evidence_tokens=evidence_tokens, style=style, max_tokens=max_tokens)
    # --json still streams (quietly), so that its ttft_s is the real time to the first token
    answer = answer_question(question, idx, llm, k=s.k, retriever=retriever, lang=lang, max_tokens=s.max_tokens,
                             support=root(ctx).make_support_scorer(threads=threads), versions=default_library,
                             style=s.style, evidence_tokens=s.evidence_tokens, select=s.select,
                             time_cap_s=s.time_cap_s, on_text=printer.text,
                             on_retrieved=lambda query, hits: printer.sources([hit_to_dict(h, text=False)
                                                                               for h in hits]))
    model_route = getattr(llm, "route", "in-process")
    note = getattr(llm, "fallback_note", "")
    payload = answer_to_dict(answer, model=llm.model_id, llm=f"{model_route} (this process: {why})" if why
                             else model_route)
    route = f"this process ({why}); model: {model_route}" if why else f"this process; model: {model_route}"
    _done(payload, printer, route, as_json, [note] if note else [])
