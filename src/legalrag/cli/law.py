"""`legalrag law show TITLE`, `legalrag law history CITATION`: a law's versions with their dates, and one article
across versions (followed through renumbering)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from legalrag.cli.apps import app
from legalrag.cli.common import JsonOption, print_json

law_app = typer.Typer(no_args_is_help=True, help="The national law over time: versions, dates, article history.")
app.add_typer(law_app, name="law")

LawsOption = typer.Option(None, "--laws", help="A folder of law files in the dated-Markdown format (default: the "
                          "versions shipped with legalrag, else $LEGALRAG_DATA/laws-2025).")
AsOfOption = typer.Option(None, "--as-of", help="A date, YYYY-MM-DD: the version in force that day.")


def library(folder: Optional[Path]):
    """The versions to answer from: ``folder``, else the shipped versions, else $LEGALRAG_DATA/laws-2025."""
    import os

    from legalrag.national_versions import law_library

    data = os.environ.get("LEGALRAG_DATA")
    return law_library(folder, fallback=Path(data) / "laws-2025" if data else None)


@law_app.command("show")
def show(title: str = typer.Argument(..., help="A law title: 公司法, 《中华人民共和国公司法》."),
         laws: Optional[Path] = LawsOption, as_of: Optional[str] = AsOfOption, json_out: JsonOption = False) -> None:
    """List a law's versions: version date, effective date and its source, interval in force, articles."""
    from legalrag.laws.report import find_law, law_report

    lib = library(laws)
    data = law_report(lib, title, as_of, field="TITLE", as_of_field="--as-of")
    if json_out:
        print_json(data)
        return
    law = find_law(lib, title, field="TITLE")
    rows = data["versions"]
    sel = law.as_of(as_of) if as_of else None
    rep = law.repealed
    typer.echo(f"{law.title}: {len(law.versions)} version(s)")
    for v, r in zip(law.versions, rows):
        mark = "→ " if r["selected"] else "  "
        typer.echo(f"{mark}{v.describe()}; effective date from: {v.effective_source}; file: {', '.join(v.files)}"
                   + (f" (formatting-only duplicates merged: {', '.join(v.merged)})" if v.merged else ""))
    if rep:
        typer.echo(f"repealed on {rep.on or 'an unknown date'} by {rep.by} ({rep.source})")
    if sel is not None:
        typer.echo(f"as of {as_of}: version {sel.version.label}" + (f" ({sel.note})" if sel.note else ""))


@law_app.command("history")
def history(citation: str = typer.Argument(..., help="An article: 公司法第四十七条."),
            laws: Optional[Path] = LawsOption,
            as_of: Optional[str] = typer.Option(None, "--as-of", help="Read the article number in the version in "
                                                "force that day (default: the latest version)."),
            json_out: JsonOption = False) -> None:
    """Show one article across the versions of its law: its number in each, its text, and where it changed."""
    from legalrag.laws.report import history_report, history_steps

    lib = library(laws)
    if json_out:
        print_json(history_report(lib, citation, as_of, field="CITATION", as_of_field="--as-of"))
        return
    law, number, sel, steps = history_steps(lib, citation, as_of, field="CITATION", as_of_field="--as-of")
    from legalrag.citecheck.currency import _label

    if sel is not None and sel.note:
        typer.echo(sel.note)
    for s in steps:
        v = s.version
        until = f" until {v.in_force_until}" if v.in_force_until else ""
        head = f"{v.label} (in force from {v.in_force_from or 'an unknown date'}{until})"
        if s.number is None:
            typer.echo(f"{head}: no counterpart")
            continue
        flag = " [changed]" if s.changed else ""
        text = " ".join(s.text.split())
        typer.echo(f"{head}: {law.title}{_label(s.number)}{flag}\n    {text[:300]}{'…' if len(text) > 300 else ''}")


_LIBRARY: dict = {}


def default_library():
    """The versions `check` reads currency from (the shipped ones, else $LEGALRAG_DATA/laws-2025), once per
    process; None when neither is installed."""
    from legalrag.errors import InputError

    if "lib" not in _LIBRARY:
        try:
            _LIBRARY["lib"] = library(None)
        except InputError:
            _LIBRARY["lib"] = None
    return _LIBRARY["lib"]


def currencies(report, as_of: Optional[str]) -> list:
    """The currency (``citecheck.currency.Currency`` or None) of each checked citation of ``report``."""
    from legalrag.citecheck.currency import citation_currency
    from legalrag.laws.versions import check_day

    if as_of:
        check_day(as_of)
    if not report.items:
        return []
    lib = default_library()
    return [citation_currency(lib, item.citation, as_of) for item in report.items] if lib is not None else []
