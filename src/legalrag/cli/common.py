"""Small helpers shared by command modules, and the options many commands take, declared once.

The option types are ``Annotated`` aliases: a command writes ``model: ModelOption = None`` and gets the same
flag name, checks and help text as every other command with that option. One vocabulary for every command:
``--model`` / ``--endpoint`` / ``--endpoint-model`` name the LLM, ``--index`` the index directory, ``--json``
prints JSON instead of text, ``--threads`` sets CPU threads, and a trained artefact's folder is
``--model-dir`` (``--cite-model-dir``, ``--judgment-model-dir`` where a command takes two). A value not given
comes from the saved settings (``legalrag config show``) where one exists."""

from __future__ import annotations

import ipaddress
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

ModelOption = Annotated[Optional[str], typer.Option(
    "--model", help="Embedded model: qwen2.5-coder-1.5b (default), qwen2.5-coder-0.5b or a GGUF path.")]
EndpointOption = Annotated[Optional[str], typer.Option(
    "--endpoint", help="OpenAI-compatible endpoint URL (instead of the embedded model).")]
EndpointModelOption = Annotated[Optional[str], typer.Option("--endpoint-model", help="Model name at --endpoint.")]
ThreadsOption = Annotated[Optional[int], typer.Option(
    "--threads", min=1, help="CPU threads of the model or encoder (default: the runtime.threads setting, else all "
    "cores).")]
ProgressOption = Annotated[bool, typer.Option("--progress/--no-progress")]
IndexOption = Annotated[Optional[Path], typer.Option(
    "--index", help="Index directory (default: the index.path setting).")]
IndexOrDemoOption = Annotated[Optional[Path], typer.Option(
    "--index", help="Index directory (default: the index.path setting, else the statute sample shipped with "
    "legalrag).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def deprecated(old: str, new: str) -> None:
    """Say on stderr that ``old`` is an old spelling of ``new`` (it still works)."""
    typer.echo(f"note: {old} is deprecated; use {new}", err=True)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


def is_loopback(host: str) -> bool:
    """Whether a server bound to ``host`` is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def root(ctx: Any):
    """The composition root handed to the CLI (``app(obj=Root(...))``), else the default one."""
    from legalrag.wiring import Root

    obj = getattr(ctx, "obj", None)
    return obj if isinstance(obj, Root) else Root()
