"""``legalrag eval judgment`` (JuDGE metrics) and ``legalrag judgment draft`` (facts -> judgment)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from legalrag.cli.apps import eval_app, judgment_app
from legalrag.cli.common import print_json


def _fmt(v) -> str:
    return "-" if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v))


@eval_app.command("judgment")
def eval_judgment(
    pred: Path = typer.Option(..., "--pred", help="Generated judgments, JSONL lines {id, document}."),
    gold: Path = typer.Option(..., "--gold", help="Reference judgments, JSONL lines {id, document}."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures (and per-document scores) as JSON."),
    text_metrics: bool = typer.Option(True, "--text-metrics/--no-text-metrics",
                                      help="Also compute METEOR and BERTScore-style F1 (needs the metrics, zh "
                                           "and dense extras; slower)."),
    per_document: bool = typer.Option(False, "--per-document", help="With --json, include per-document scores."),
) -> None:
    """Score judgments as the JuDGE benchmark does: prison, fine, charges, articles (+ text metrics)."""
    from legalrag.judgment.evaluate import evaluate_files

    report, text = evaluate_files(pred, gold, text_metrics=text_metrics, progress=not as_json)
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
    if report.unparsed:
        shown = ", ".join(report.unparsed[:20]) + (" ..." if len(report.unparsed) > 20 else "")
        console.print(f"[yellow]{len(report.unparsed)} predicted documents not parsed[/yellow] "
                      f"(no 判决如下 / result section; scored on what could be read): {shown}")


@judgment_app.command("draft")
def draft(
    facts: str = typer.Option(..., "--facts", help="Case facts: a text file path or the text itself."),
    law_corpus: Optional[Path] = typer.Option(None, "--law-corpus",
                                              help="Statute corpus JSONL (STARD or JuDGE shape); default: JuDGE's "
                                                   "law_corpus.jsonl under ../shared/data if present."),
    case_corpus: Optional[Path] = typer.Option(None, "--case-corpus",
                                               help="Past judgments, JSONL lines {id, document}."),
    model: Optional[str] = typer.Option(None, "--model", help="GGUF path or embedded model name (default 1.5B)."),
    as_json: bool = typer.Option(False, "--json", help="Print sections, extracted fields and citations as JSON."),
    max_tokens: int = typer.Option(500, "--max-tokens", help="Upper bound on generated tokens."),
) -> None:
    """Draft a complete criminal judgment from case facts, grounded on retrieved articles and cases."""
    from legalrag.judgment.draft import draft_from_cli

    result = draft_from_cli(facts, law_corpus=law_corpus, case_corpus=case_corpus, model=model,
                            stream=not as_json, max_tokens=max_tokens)
    if as_json:
        print_json(result.to_dict())
