"""`legalrag chat --index DIR`: a multi-turn legal consultation in the terminal.

Each turn: the conversation processor turns the dialogue into a query, and the answer engine
(:mod:`legalrag.answer.engine`) retrieves, answers with the earlier turns as history, and checks every citation
against the corpus (unresolved ones are flagged). Type /exit (or end the input) to stop, /reset to start a new
consultation. A warm `legalrag serve` answers each turn when one is up (the dialogue is sent with it); else
this process does, with the local model server when one is up (`legalrag llm start`), else the embedded model.
The articles of each turn are printed when its retrieval ends, before the answer.
"""

from __future__ import annotations

import sys
from typing import Optional

import typer

from legalrag.cli.apps import app
from legalrag.cli.ask import LocalOption, StyleOption
from legalrag.cli.common import (AsOfOption, IndexOrDemoOption, JsonOption, LLMOption, RetrieverOption, llm_spec,
                                 require_endpoint_model, root)
from legalrag.answer.processors import DEFAULT_PROCESSOR, PROCESSORS, ProcessorName
from legalrag.types import DEFAULTS


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
    model: LLMOption = None,
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=16, help="Longest answer, in tokens "
                                             f"(default: the answer.max_tokens setting, else {DEFAULTS.max_tokens})."),
    style: Optional[str] = StyleOption,
    evidence_tokens: Optional[int] = typer.Option(None, "--evidence-tokens", min=0,
                                                  help="Token budget for the retrieved articles in each answer "
                                                  "prompt (default: the answer.evidence_tokens setting, else "
                                                  f"{DEFAULTS.evidence_tokens}; 0: whole articles)."),
    local: bool = LocalOption,
    as_json: JsonOption = False,  # one line of JSON per turn (the shape of `ask --json`, POST /consult)
    as_of: AsOfOption = None,
) -> None:
    """Hold a multi-turn consultation: retrieval each turn, answers with checked citations (threads: the
    runtime.threads setting)."""
    from legalrag.cli._warm import AnswerPrinter, fallback_note, server_route, through_server
    from legalrag.warm.client import ServerError, ServerGone
    from legalrag.warm.route import CONSULT_ROUTE, choose_server, consult_request, index_arg

    r = root(ctx)
    if as_of is not None:
        from legalrag.laws.versions import check_day

        as_of = check_day(as_of)
    model, endpoint, endpoint_model = llm_spec(model)
    require_endpoint_model(r, endpoint, endpoint_model)
    named = index_arg(index, r.settings)
    server, why = choose_server(r.settings, local=local, model=model, endpoint=endpoint,
                                evidence_tokens=evidence_tokens, index=named)
    turns: list[tuple[str, str]] = []  # the dialogue so far (the server keeps none: it is sent each turn)
    in_process: list = []  # the consultation of this process, built on the first turn the server does not answer

    def answer_here(question: str, printer: AnswerPrinter) -> tuple[dict, str]:
        from legalrag.serialize import answer_to_dict, hit_to_dict
        from legalrag.types import Turn

        if not in_process:
            in_process.append(_consultation(ctx, index, k, retriever, processor, model, endpoint, endpoint_model,
                                            max_tokens, style, evidence_tokens, local, None, as_of))
        consultation, llm = in_process[0]
        consultation.turns = [Turn(role, text) for role, text in turns]
        queries: list[str] = []

        def retrieved(query: str, hits) -> None:  # before the answer streams: what was searched and carried
            trace = consultation.last_trace
            printer.sources([hit_to_dict(h, text=False) for h in hits], query=" | ".join(trace.get("searched") or [query]))
            if trace.get("carried"):
                printer.note("[carried from earlier turns] " + "; ".join(c["title"] for c in trace["carried"])
                             + (f" ({trace['reason']})" if trace.get("reason") else ""))

        answer = consultation.ask(question, on_text=printer.text, on_query=queries.append, on_retrieved=retrieved)
        trace = consultation.last_trace
        model_route = getattr(llm, "route", "in-process")
        payload = answer_to_dict(answer, model=llm.model_id, llm=f"{model_route} (this process: {why})" if why
                                 else model_route,
                                 query=(trace.get("searched") or queries[-1:] or [None])[0], processor=processor.value,
                                 searched=trace.get("searched", []), carried=trace.get("carried", []),
                                 follow_up={"same_issue": trace.get("same_issue"), "reason": trace.get("reason", "")})
        return payload, f"this process ({why}); model: {model_route}" if why else f"this process; model: {model_route}"

    if server is None:  # built now, so a bad option or a missing model is said before the first question
        in_process.append(_consultation(ctx, index, k, retriever, processor, model, endpoint, endpoint_model,
                                        max_tokens, style, evidence_tokens, local, None, as_of))
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
            turns.clear()
            if not as_json:
                typer.echo("(new consultation)")
            continue
        printer = AnswerPrinter(quiet=as_json, question=question)
        payload = None
        if server is not None:
            body = consult_request(question, turns, processor=processor.value, index=named, k=k, retriever=retriever,
                                max_tokens=max_tokens, style=style, evidence_tokens=evidence_tokens, as_of=as_of)
            try:
                payload = through_server(server, CONSULT_ROUTE, body, printer)
                payload["llm"] = f"server {server.url}"
                route = server_route(server, printer)
            except (ServerError, ServerGone) as exc:
                why = fallback_note(exc, printer)
                if isinstance(exc, ServerGone):
                    server = None  # it stopped: the rest of the consultation is answered here
                printer = AnswerPrinter(quiet=as_json, question=question)
                payload = None
        if payload is None:
            payload, route = answer_here(question, printer)
        turns += [("user", " ".join(question.split())), ("assistant", str(payload.get("answer") or ""))]
        if as_json:
            import json

            typer.echo(json.dumps(payload, ensure_ascii=False))
        else:
            printer.finish(payload, route)


def _consultation(ctx, index, k, retriever, processor, model, endpoint, endpoint_model, max_tokens, style,
                  evidence_tokens, local, threads, as_of=None):
    """This process's consultation (index, model, answer engine) and its model."""
    from legalrag.answer.consultation import Consultation
    from legalrag.answer.engine import engine_for

    idx = root(ctx).index(index, as_of=as_of, threads=threads)
    llm = root(ctx).make_answer_llm(model, endpoint, endpoint_model, threads=threads, local=local)
    settings = root(ctx).answer_settings(k=k, evidence_tokens=evidence_tokens, style=style, max_tokens=max_tokens)
    from legalrag.cli.law import default_library  # the currency marks of an answer as of a past day

    engine = engine_for(llm, idx, retriever=retriever, settings=settings,
                        support=root(ctx).make_support_scorer(threads=threads), versions=default_library)
    return Consultation(engine=engine, processor=processor.value), llm
