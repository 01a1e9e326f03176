"""What the `qa` and `eval mcq` commands do and print, kept out of cli/qa.py so the commands stay one call each."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Sequence

from legalrag.agents.qa.pipeline import QAResult, run_qa, save_trace
from legalrag.cli._answer_output import TerminalStream
from legalrag.wiring import Root


def print_result(result: QAResult, streamed: TerminalStream | None = None) -> None:
    """The answer (unless ``streamed`` already showed it as it was generated), its sources, every citation that
    resolves to no retrieved source, and what was removed, unsupported or not established."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if streamed is None or not streamed.showed(result.answer):
        if streamed is not None and streamed.text.strip():  # rewritten into the question's language, or failed
            console.print("[dim]The answer above was replaced; the final answer:[/dim]")
        console.print(result.answer, markup=False, highlight=False)
    if result.evidence:
        table = Table(title="Sources", show_lines=False)
        for col in ("#", "type", "title", "where", "date"):
            table.add_column(col)
        for n, r in enumerate(result.evidence, 1):
            table.add_row(str(n), r.source_type.value, r.title[:60], r.url[:70], r.date)
        console.print(table)
    bad = [c.text for c in result.citations if not c.resolved]
    if bad:
        console.print(f"[red]Citations that point to no retrieved source:[/red] {', '.join(bad)}")
    for c in result.citations:
        if c.note.startswith(("asked for by an instruction", "source [")):
            console.print(f"[red]Suspect citation {c.text}:[/red] {c.note}", highlight=False)
    for inj in result.injections:
        console.print(f"[red]Removed from source [{inj['source']}] ({inj['title']}), text addressed to the "
                      f"model:[/red] {inj['text'][:120]}", highlight=False, markup=False)
    for s in result.unsupported:
        console.print(f"[yellow]Unsupported:[/yellow] {s}", highlight=False)
    for note in result.not_established:
        console.print(f"[yellow]Not established:[/yellow] {note}", highlight=False)
    console.print(f"[dim]{result.mode} mode, {result.llm_calls} LLM calls, {result.seconds:.1f} s, "
                  f"{len(result.steps)} steps[/dim]")


def qa_sources(sources: str, docs: Path | None, index: Path | None, root: Root,
               snapshot: bool = False) -> tuple[dict, list[str], list[str]]:
    """The QA sources named in ``sources``, the problems with them, and notes for the user. ``local`` without
    ``--docs`` or ``--index`` is the configured statute index (``index.path``), else the default national-law
    index (the law in force; ``snapshot``: the 2023-06-05 snapshot benchmarks score on), searched article by
    article; a documents folder says which of its files have no article markers."""
    from legalrag.search.local import LocalDocumentsSource, StatuteIndexSource

    names = [s.strip().lower() for s in sources.split(",") if s.strip()]
    default_index = "local" in names and docs is None and index is None
    srcs, problems = root.make_sources([n for n in names if not (default_index and n == "local")], docs=docs,
                                       index=index)
    notes: list[str] = []
    if default_index:
        srcs = {"statutes": StatuteIndexSource(root.index(snapshot=snapshot)), **srcs}
    for src in srcs.values():
        if isinstance(src, LocalDocumentsSource) and (note := src.unit_note()):
            notes.append(note)
    return srcs, problems, notes


def run_qa_cli(question: str, *, mode: str, sources: str, docs: Path | None, index: Path | None, max_rounds: int,
               clarifications: Sequence[str], model: str | None, endpoint: str | None, endpoint_model: str | None,
               trace: Path | None, show: bool = True, root: Root) -> QAResult:
    srcs, problems, notes = qa_sources(sources, docs, index, root)
    if show:
        for note in notes:
            print(note, file=sys.stderr)
    llm = root.make_llm(model, endpoint, endpoint_model)
    stream = TerminalStream() if show else None  # the summary as it is generated; the checks follow it
    result = run_qa(question, llm, srcs, mode=mode, max_rounds=max_rounds, clarifications=clarifications,
                             problems=problems, on_text=stream)
    if stream is not None and stream.pieces:
        sys.stdout.write("\n")
    if trace is not None:
        save_trace(trace, result)
    if show:
        print_result(result, streamed=stream)
    return result


def run_mcq_cli(questions: Path, *, modes: str, docs: Path | None, sources: str, index: Path | None = None, limit: int | None, max_rounds: int,
                model: str | None, endpoint: str | None, endpoint_model: str | None, out: Path | None,
                print_table: bool = True, plot: Path | None = None, root: Root) -> dict[str, Any]:
    from legalrag.agents.qa.mcq_eval import evaluate_mcq, load_mcq
    from legalrag.io import write_jsonl
    if plot is not None:
        from legalrag.evaluation.plots import check_png_path

        check_png_path(plot)
    qs = load_mcq(questions)[:limit] if limit else load_mcq(questions)
    mode_list = [m.strip() for m in modes.split(",") if m.strip()]
    needs_sources = any(m in ("simple", "multi") for m in mode_list)
    srcs, problems, notes = qa_sources(sources, docs, index, root, snapshot=True) if needs_sources else ({}, [], [])
    if print_table:
        for note in notes:
            print(note, file=sys.stderr)
    llm = root.make_llm(model, endpoint, endpoint_model)
    report = evaluate_mcq(qs, llm, srcs, mode_list, max_rounds=max_rounds, progress=print_table)
    report["problems"] = problems
    report["notes"] = notes
    report["sources"] = sorted(srcs)
    report["model"] = getattr(llm, "model_id", "")
    if out is not None:
        write_jsonl(out, report["rows"])
    if plot is not None:
        plot_mcq(report, plot)
    if print_table:
        print_mcq_table(report)
    return report


def plot_mcq(report: dict[str, Any], path: Path) -> Path:
    """Accuracy of each mode, overall and per domain, as grouped bars."""
    from legalrag.evaluation.plots import plot_bars

    rows: dict[str, dict[str, float]] = {"all": {m: s["accuracy"] for m, s in report["modes"].items()}}
    for mode, s in report["modes"].items():
        for domain, v in s["per_domain"].items():
            rows.setdefault(f"{domain} ({v['n']})", {})[mode] = v["accuracy"]
    return plot_bars(rows, path, title=f"Accuracy by mode: {report['n_questions']} questions ({report.get('model', '')})",
                     ylabel="accuracy")


def print_mcq_table(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"Multiple choice: {report['n_questions']} questions ({report.get('model', '')})")
    for col in ("mode", "accuracy", "answered", "s / question", "LLM calls / question", "citations resolved"):
        table.add_column(col)
    for mode, s in report["modes"].items():
        share = "-" if s["citations_resolved_share"] is None else f"{s['citations_resolved_share']:.0%} of {s['citations']}"
        table.add_row(mode, f"{s['accuracy']:.1%}", f"{s['answered']}/{s['n']}", f"{s['mean_seconds']:.1f}",
                      f"{s['mean_llm_calls']:.1f}", share)
    console.print(table)
    domains = sorted({d for s in report["modes"].values() for d in s["per_domain"]})
    dt = Table(title="Accuracy per domain")
    dt.add_column("domain")
    for mode in report["modes"]:
        dt.add_column(mode)
    for d in domains:
        cells = []
        for s in report["modes"].values():
            v = s["per_domain"].get(d)
            cells.append("-" if v is None else f"{v['accuracy']:.0%} ({v['n']})")
        dt.add_row(d, *cells)
    console.print(dt)
    for p in report.get("problems", []):
        console.print(f"[yellow]{p}[/yellow]")
