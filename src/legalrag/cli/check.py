"""`legalrag check [FILE|-]`: every citation in a text, resolved and marked supported / exists / not found /
repealed / no corpus, as a terminal report, JSON, or an annotated Markdown or HTML copy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import CheckOptions, option_list, parse_options
from legalrag.cli.apps import app
from legalrag.cli.common import IndexOrDemoOption, JsonOption, ProgressOption, print_json, root


def read_input(file: str, encoding: str) -> tuple[str, str]:
    """The text of ``file`` (``-``: standard input) and a name for messages. .txt/.md/.pdf/.docx/.html are read
    by the document reader; anything else is refused with the formats it takes."""
    from legalrag.corpora.extract import FORMATS, decode, extract
    from legalrag.errors import InputError

    if file == "-":
        return decode(Path("<stdin>"), sys.stdin.buffer.read(), encoding), "<stdin>"
    path = Path(file)
    if not path.is_file():
        raise InputError(f"no such file: {file}", path=file)
    if path.suffix.lower() not in FORMATS:
        raise InputError(f"unsupported file type {path.suffix or '(none)'!r}; `legalrag check` reads "
                         f"{', '.join(sorted(FORMATS))} (or text on standard input: `legalrag check -`)", path=file)
    return extract(path, path.read_bytes(), encoding).text, str(path)


@app.command("check")
def check(
    ctx: typer.Context,
    file: str = typer.Argument(..., help="The text to check: a .txt, .md, .pdf, .docx or .html file, or - for "
                                         "standard input."),
    index: IndexOrDemoOption = None,
    json_out: JsonOption = False,
    annotate: Optional[Path] = typer.Option(None, "--annotate", help="Also write an annotated copy: out.md "
                                            "(Markdown marks and notes) or out.html (highlighted)."),
    strict: bool = typer.Option(False, "--strict", help="Exit with status 2 when a citation is not supported."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="The date the text speaks of (YYYY-MM-DD): each "
                                        "citation's currency (amended, renumbered, repealed) is read from it; "
                                        "without it, as of today."),
    progress: ProgressOption = True,
    option: List[str] = option_list(CheckOptions, "The support model and the encoding, KEY=VALUE, repeatable"),
) -> None:
    """Check every citation in a text against the corpus (at most about 5 MB of text). Marks: ✓ supported (a
    clause of its article says what the sentence citing it says; the clause is shown), ? exists but not shown to
    support it (the closest clause is shown, and why it is not taken as support), ✗ not found, ↻ repealed (with
    the successor law), ∅ no corpus for this jurisdiction. The support model is the one answers and `serve` use;
    `-o support=lexical` is a faster one without the encoder."""
    from legalrag.answer.per_index import resolver_for
    from legalrag.citecheck.checker import annotate_html, annotate_markdown, check_text
    from legalrag.serialize import check_report_to_dict
    from legalrag.errors import InputError
    from legalrag.wiring import make_support_scorer

    o = parse_options(CheckOptions, option)
    if annotate is not None and annotate.suffix.lower() not in (".md", ".markdown", ".html", ".htm"):
        raise InputError(f"--annotate writes .md or .html, not {annotate.suffix or '(no extension)'!r}",
                         field="--annotate")
    text, name = read_input(file, o.encoding)
    r = root(ctx)
    idx = r.index(index, as_of=as_of)  # as of a past day, a citation resolves to the text in force that day
    scorer = make_support_scorer(o.support, settings=r.settings)  # full: the model answers and serve mark with
    show = progress and not json_out and len(text) > 50_000

    def on_block(done: int, total: int) -> None:
        typer.echo(f"\rchecked {done:,} / {total:,} characters", nl=done >= total, err=True)

    report = check_text(text, resolver_for(idx), scorer, progress=on_block if show else None, source=name)
    if annotate is not None:
        out = annotate_html(report, title=name) if annotate.suffix.lower() in (".html", ".htm") \
            else annotate_markdown(report)
        tmp = annotate.with_name(annotate.name + ".tmp")
        tmp.write_text(out, encoding="utf-8")
        tmp.replace(annotate)
    from legalrag.cli.law import currencies  # the currency mark beside the support mark (legalrag.laws)

    currency = currencies(report, as_of)
    if json_out:
        from legalrag.citecheck.marks import meaning

        out = check_report_to_dict(report)
        for d, item in zip(out["citations"], report.items):  # what the mark means, in plain words
            d["mark_meaning"] = meaning(item.citation) or None
        print_json({"file": name, **out, "currency": [c and c.to_dict() for c in currency]})
    else:
        _print_report(report, name, annotate, currency)
    if strict and (report.summary["no_citations"] or report.summary["supported"] < len(report.items)):
        raise typer.Exit(2)


def _print_report(report, name: str, annotate: Optional[Path], currency=()) -> None:
    from rich.console import Console
    from rich.markup import escape

    from legalrag.citecheck.checker import SYMBOLS
    from legalrag.citecheck.marks import mark_line, meaning

    console = Console(soft_wrap=True)  # long lines stay whole (copyable), the terminal wraps them
    colour = {"supported": "green", "exists": "yellow", "not_found": "red", "repealed": "red", "no_corpus": "blue"}
    s = report.summary
    if not report.items:
        console.print(f"[yellow]{escape(name)}: {escape(s['message'])}.[/yellow]", highlight=False)
    for n, item in enumerate(report.items, 1):
        c = item.citation
        line = report.text.count("\n", 0, item.start) + 1
        sym = SYMBOLS.get(c.mark, "?")
        console.print(f"[{colour.get(c.mark, 'white')}]{sym} {n}.[/] {escape(c.canonical or c.text)} "
                      f"[dim](line {line})[/dim]: {escape(mark_line(c))}"
                      + (f" · {escape(currency[n - 1].label)}" if n <= len(currency) and currency[n - 1]
                         and currency[n - 1].status not in ("current", "unknown") else ""), highlight=False)
        if n <= len(currency) and currency[n - 1] and currency[n - 1].status not in ("current", "unknown"):
            console.print(f"    currency: {escape(currency[n - 1].describe())}", highlight=False, style="dim")
        if c.mark:
            console.print(f"    means: {escape(meaning(c))}", highlight=False, style="dim")
        if c.claim:
            console.print(f"    claim: {escape(c.claim[:160])}", highlight=False, style="dim")
        if c.clause:
            label = "supporting clause" if c.mark == "supported" else "closest clause"
            console.print(f"    {label}: {escape(' '.join(c.clause.split()))}", highlight=False)
        if c.document_text:
            console.print(f"    article: {escape(' '.join(c.document_text.split())[:160])}", highlight=False,
                          style="dim")
    console.print(f"{len(report.items)} citation(s): {s['supported']} supported, {s['exists']} exist but not shown "
                  f"to support their sentence, {s['not_found']} not found, {s['repealed']} repealed, "
                  f"{s['no_corpus']} of a jurisdiction the corpus lacks; {report.seconds:.2f} s"
                  + (f"; annotated copy: {annotate}" if annotate else ""), highlight=False)
