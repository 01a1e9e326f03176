"""`legalrag models list` and `legalrag models verify`: the models this installation can use, and the check of
the trained models that ship with legalrag (their recipes: `legalrag train <model>`, the cli/train/ package)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli.apps import app
from legalrag.cli.common import JsonOption, print_json, root

models_app = typer.Typer(no_args_is_help=True, help="The encoders, rerankers and trained models available here.")
app.add_typer(models_app, name="models")


@models_app.command("list")
def models_list(ctx: typer.Context,
                dirs: Optional[List[Path]] = typer.Argument(None, help="Folders to scan for trained models "
                                                                       "(default: ./models and the cache)."),
                as_json: JsonOption = False) -> None:
    """Built-in encoders and rerankers, and trained or exported models found in DIRS."""
    from legalrag.training.registry import available_models

    rows = available_models(dirs or [Path("models"), root(ctx).settings.home / "models"])
    if as_json:
        print_json(rows)
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="models")
    for col in ("kind", "spec", "available", "origin"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["kind"], escape(r["spec"]), "yes" if r["available"] else "no", escape(r["origin"]))
    Console().print(table)


@models_app.command("verify")
def models_verify(names: Optional[List[str]] = typer.Argument(None, help="Shipped models to check (default: all)."),
                  as_json: JsonOption = False) -> None:
    """Check every file of the shipped models against the SHA-256 in its model card; exit 1 on any mismatch."""
    from legalrag.errors import InputError
    from legalrag.shipped import shipped_models, verify

    models = shipped_models()
    if names:
        unknown = sorted(set(names) - {m.name for m in models})
        if unknown:
            raise InputError(f"no shipped model named {', '.join(unknown)}; shipped: "
                             f"{', '.join(m.name for m in models) or 'none'}")
        models = [m for m in models if m.name in names]
    rows = [{"name": m.name, "kind": m.kind, "files": len(m.files), "problems": verify(m),
             "restore": m.restore_hint} for m in models]
    if as_json:
        print_json(rows)
    else:
        for r in rows:
            status = "ok" if not r["problems"] else "FAILED"
            typer.echo(f"{r['name']} ({r['kind']}, {r['files']} files): {status}")
            for p in r["problems"]:
                typer.echo(f"  {p}")
            if r["problems"]:
                typer.echo(f"  {r['restore']}")
    if not models:
        typer.echo("no shipped models found", err=True)
    if any(r["problems"] for r in rows):
        raise typer.Exit(1)
