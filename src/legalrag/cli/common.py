"""Small helpers shared by command modules, and the options many commands take, declared once.

The option types are ``Annotated`` aliases: a command writes ``model: ModelOption = None`` and gets the same
flag name, checks and help text as every other command that builds an LLM from ``--model`` / ``--endpoint``.
A command whose option means something narrower (the judge's model, the LLM stages of a search) keeps its own."""

from __future__ import annotations

import ipaddress
import json
import sys
from typing import Annotated, Any, Optional

import typer

ModelOption = Annotated[Optional[str], typer.Option(
    "--model", help="Embedded model: qwen2.5-1.5b (default), qwen2.5-0.5b or a GGUF path.")]
EndpointOption = Annotated[Optional[str], typer.Option(
    "--endpoint", help="OpenAI-compatible endpoint URL (instead of the embedded model).")]
EndpointModelOption = Annotated[Optional[str], typer.Option("--endpoint-model", help="Model name at --endpoint.")]
ThreadsOption = Annotated[Optional[int], typer.Option(
    "--threads", min=1, help="CPU threads of the embedded model (default: all cores).")]
ProgressOption = Annotated[bool, typer.Option("--progress/--no-progress")]


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
