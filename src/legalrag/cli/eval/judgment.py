"""`eval judgment`: generated judgments scored as the JuDGE benchmark does."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from legalrag.cli._options import EvalJudgmentOptions, option_list, parse_options
from legalrag.cli.apps import eval_app
from legalrag.cli.common import JsonOption, print_json


def _fmt(v) -> str:
    return "-" if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v))


@eval_app.command("judgment")
def eval_judgment(
    pred: Path = typer.Option(..., "--pred", help="Generated judgments, JSONL lines {id, document}."),
    gold: Path = typer.Option(..., "--gold", help="Reference judgments, JSONL lines {id, document}."),
    as_json: JsonOption = False,
    option: List[str] = option_list(EvalJudgmentOptions, "The text metrics and what is scored, KEY=VALUE, "
                                                         "repeatable"),
) -> None:
    """Score judgments as the JuDGE benchmark does: prison, fine, charges, articles (+ text metrics)."""
    from legalrag.judgment.evaluate import evaluate_files

    opts = parse_options(EvalJudgmentOptions, option)
    text_metrics, per_document, include_missing = opts.text_metrics, opts.per_document, opts.include_missing

    report, text = evaluate_files(pred, gold, text_metrics=text_metrics, progress=not as_json,
                                  include_missing=include_missing)
    summary = report.summary()
    if text is not None:
        summary.update(text.to_dict())
    if as_json:
        if per_document:
            summary["documents"] = [d.to_dict() for d in report.documents]
        print_json(summary)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"JuDGE metrics: {pred.name} vs {gold.name} ({report.n} cases)")
    table.add_column("metric")
    table.add_column("precision", justify="right")
    table.add_column("recall", justify="right")
    table.add_column("F1 / score", justify="right")
    table.add_row("charges", _fmt(report.charge_precision), _fmt(report.charge_recall), _fmt(report.charge_f1))
    table.add_row("statutes (articles)", _fmt(report.article_precision), _fmt(report.article_recall),
                  _fmt(report.article_f1))
    table.add_row(f"prison term (n={report.prison_n})", "", "", _fmt(report.prison))
    table.add_row(f"fine (n={report.fine_n})", "", "", _fmt(report.fine))
    if text is not None:
        table.add_row(f"METEOR reasoning / result (n={text.pairs})", "", "",
                      f"{_fmt(text.reasoning_meteor)} / {_fmt(text.result_meteor)}")
        table.add_row("BERTScore* reasoning / result", "", "",
                      f"{_fmt(text.reasoning_bertscore)} / {_fmt(text.result_bertscore)}")
    console = Console()
    console.print(table)
    if text is not None:
        console.print(f"*BERTScore-style F1 with {text.bertscore_model}; not comparable with bert-base-chinese.")
    if report.missing:
        how = ("scored as empty judgments (-o include_missing=true)" if report.missing_scored
               else "left out; pass -o include_missing=true to score them as empty judgments")
        console.print(f"{len(report.missing)} of the gold file's cases have no prediction: {how}")
    if report.unparsed:
        shown = ", ".join(report.unparsed[:20]) + (" ..." if len(report.unparsed) > 20 else "")
        console.print(f"[yellow]{len(report.unparsed)} predicted documents not parsed[/yellow] "
                      f"(no 判决如下 / result section; scored on what could be read): {shown}")
