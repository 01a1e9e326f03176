"""`legalrag qa "question"`: agentic question answering over local documents, the web and case law (its
multiple-choice evaluation, `eval mcq`, is in cli/eval/answers.py)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import QaOptions, option_list, parse_options
from legalrag.cli.apps import app
from legalrag.cli.common import JsonOption, LLMOption, llm_spec, print_json, root
from legalrag.agents.qa.pipeline import QAMode


@app.command("qa")
def qa(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The legal question."),
    mode: QAMode = typer.Option(QAMode.SIMPLE, "--mode", help="simple (one pass) or multi (search, judge, refine)."),
    sources: str = typer.Option("local", "--sources", help="Comma-separated: local, web, courtlistener."),
    docs: Optional[Path] = typer.Option(None, "--docs", help="Folder of your documents (the local source)."),
    index: Optional[Path] = typer.Option(None, "--index", help="A statute index to search as part of 'local' "
                                         "(default, without --docs: the index.path setting, else the national-law "
                                         "index built from the data shipped with legalrag)."),
    clarify: list[str] = typer.Option([], "--clarify", help="A clarification of the question (repeatable)."),
    model: LLMOption = None,
    as_json: JsonOption = False,
    option: List[str] = option_list(QaOptions, "The multi mode's rounds and the trajectory file, KEY=VALUE, "
                                               "repeatable"),
) -> None:
    """Answer a legal question with numbered citations to retrieved sources."""
    from legalrag.cli._qa_output import run_qa_cli

    opts = parse_options(QaOptions, option)
    max_rounds, trace = opts.max_rounds, Path(opts.trace) if opts.trace else None
    model, endpoint, endpoint_model = llm_spec(model)
    result = run_qa_cli(question, mode=mode.value, sources=sources, docs=docs, index=index, max_rounds=max_rounds,
                        clarifications=clarify, model=model, endpoint=endpoint, endpoint_model=endpoint_model,
                        trace=trace, show=not as_json, root=root(ctx))
    if as_json:
        print_json(result.to_dict())
