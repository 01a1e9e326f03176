"""`eval cite`: precision, recall and F1 after each stage of the citation pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import EvalCiteOptions, option_list, parse_options
from legalrag.cli.apps import eval_app
from legalrag.cli.cite import CITE_INDEX_HELP, MODEL_HELP as CITE_MODEL_HELP
from legalrag.cli.common import JsonOption, LLMOption, ProgressOption, RetrieverOption, print_json


@eval_app.command("cite")
def eval_cite(
    ctx: typer.Context,
    index: Optional[Path] = typer.Option(None, "--index", help=CITE_INDEX_HELP),
    cases: Path = typer.Option(..., "--cases", help="JSONL cases with facts (text) and gold citations (la/gold)."),
    model_dir: Optional[Path] = typer.Option(None, "--model-dir", help=CITE_MODEL_HELP),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Evaluate only the first N evaluation cases."),
    retriever: RetrieverOption = None,
    model: LLMOption = None,
    option: List[str] = option_list(EvalCiteOptions, "Overrides of the citation model's settings (default: the "
                                                     "model's), the calibration and the LLM stages, KEY=VALUE, "
                                                     "repeatable"),
    save_model: Optional[Path] = typer.Option(None, "--out", help="Write the calibrated citation model (rules, "
                                              "graph, config) to this folder (readable by --model-dir)."),
    progress: ProgressOption = True,
    as_json: JsonOption = False,
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also draw P/R/F1 after each stage to this PNG."),
) -> None:
    """Precision, recall and F1 (micro and macro) after each stage of the citation pipeline."""
    from legalrag.citepredict.runner import run_eval
    from legalrag.cli.cite import collaborators

    opts = parse_options(EvalCiteOptions, option)
    dev, case_memory = opts.dev, opts.case_memory
    rules = Path(opts.rules) if opts.rules else None
    train_citations = Path(opts.train_citations) if opts.train_citations else None
    analysis, rerank, verify = opts.analyse, opts.llm_rerank, opts.verify
    if plot is not None:
        from legalrag.evaluation.plots import check_png_path

        check_png_path(plot)
    idx, llm, reranker = collaborators(ctx, index, rerank, analysis or rerank or verify, model)
    rep = run_eval(idx, cases, train_citations=train_citations, model_dir=model_dir, rules_path=rules, dev=dev,
                   limit=limit, retriever=retriever, llm=llm, reranker=reranker, save_model=save_model,
                   progress=progress,
                   case_memory=case_memory,
                   overrides=opts.overrides(analysis=analysis or None, verify=verify or None))
    if plot is not None:
        from legalrag.evaluation.plots import plot_bars

        plot_bars({r.stage: {"precision": r.precision, "recall": r.recall, "F1": r.f1} for r in rep.rows}, plot,
                  title=f"Citation prediction after each stage ({rep.n_cases} cases)")
    if as_json:
        print_json(rep.to_dict())
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Citation prediction on {rep.n_cases} cases (calibrated on {rep.n_dev})")
    for col in ("stage", "selection", "P", "R", "F1", "macro P", "macro R", "macro F1", "mean size"):
        table.add_column(col, justify="left" if col in ("stage", "selection") else "right")
    for r in rep.rows:
        table.add_row(r.stage, r.rule, f"{r.precision:.3f}", f"{r.recall:.3f}", f"{r.f1:.3f}",
                      f"{r.macro_precision:.3f}", f"{r.macro_recall:.3f}", f"{r.macro_f1:.3f}", f"{r.mean_size:.2f}")
    Console(width=140).print(table)
    typer.echo(f"LLM calls per case: {rep.llm_calls_per_case}; seconds per case: {rep.seconds_per_case}")
