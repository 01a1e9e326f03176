"""`legalrag qa "question"`: agentic question answering over local documents, the web and case law;
`legalrag eval mcq --questions FILE`: multiple-choice accuracy of the QA modes and closed-book baselines."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from legalrag.cli.apps import app, eval_app
from legalrag.cli.common import EndpointModelOption, EndpointOption, JsonOption, ModelOption, print_json, root
from legalrag.agents.qa.pipeline import QAMode


@app.command("qa")
def qa(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The legal question."),
    mode: QAMode = typer.Option(QAMode.SIMPLE, "--mode", help="simple (one pass) or multi (search, judge, refine)."),
    sources: str = typer.Option("local", "--sources", help="Comma-separated: local, web, courtlistener."),
    docs: Optional[Path] = typer.Option(None, "--docs", help="Folder of your documents (the local source)."),
    index: Optional[Path] = typer.Option(None, "--index", help="A statute index to search as part of 'local' "
                                         "(default, without --docs: the configured index, else national law)."),
    max_rounds: int = typer.Option(3, "--max-rounds", min=1, max=10, help="Most search rounds in multi mode."),
    clarify: list[str] = typer.Option([], "--clarify", help="A clarification of the question (repeatable)."),
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    as_json: JsonOption = False,
    trace: Optional[Path] = typer.Option(None, "--trace", help="Write the step-by-step trajectory (JSONL) here."),
) -> None:
    """Answer a legal question with numbered citations to retrieved sources."""
    from legalrag.cli._qa_output import run_qa_cli

    result = run_qa_cli(question, mode=mode.value, sources=sources, docs=docs, index=index, max_rounds=max_rounds,
                        clarifications=clarify, model=model, endpoint=endpoint, endpoint_model=endpoint_model,
                        trace=trace, show=not as_json, root=root(ctx))
    if as_json:
        print_json(result.to_dict())


@eval_app.command("mcq")
def eval_mcq(
    ctx: typer.Context,
    questions: Path = typer.Option(..., "--questions", help="JSONL, JSON or CSV: question, choices, gold[, domain]."),
    modes: str = typer.Option("zero-shot,cot,simple,multi", "--modes", help="Comma-separated modes to compare."),
    docs: Optional[Path] = typer.Option(None, "--docs", help="Folder of your own legal texts for the simple/multi "
                                        "modes (law files are searched article by article)."),
    index: Optional[Path] = typer.Option(None, "--index", help="A statute index for the simple/multi modes "
                                         "(default, without --docs: the configured index, else national law)."),
    sources: str = typer.Option("local", "--sources", help="Sources for the simple/multi modes."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N questions."),
    max_rounds: int = typer.Option(2, "--max-rounds", min=1, max=10, help="Most search rounds in multi mode."),
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    as_json: JsonOption = False,
    out: Optional[Path] = typer.Option(None, "--out", help="Write per-question rows (JSONL) here."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also draw accuracy per mode and domain to this PNG."),
) -> None:
    """Accuracy overall and per domain, latency and LLM calls per question, for each mode."""
    from legalrag.cli._qa_output import run_mcq_cli

    report = run_mcq_cli(questions, modes=modes, docs=docs, index=index, sources=sources, limit=limit, max_rounds=max_rounds,
                         model=model, endpoint=endpoint, endpoint_model=endpoint_model, out=out,
                         print_table=not as_json, plot=plot, root=root(ctx))
    if as_json:
        print_json(report)
