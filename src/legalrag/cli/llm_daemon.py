"""`legalrag llm start | stop | status`: the local model server in the background, so `ask` and `chat` answer
without loading the model each time (they use it whenever it is up at the `llm.server` address). The start,
stop and status are ``legalrag.warm.daemon``'s, the same as `legalrag serve --background`'s."""

from __future__ import annotations

from typing import List

import typer

from legalrag.cli._options import LLMStartOptions, option_list, parse_options
from legalrag.cli.apps import llm_app
from legalrag.cli.common import JsonOption, ModelOption, print_json, root


@llm_app.command("start")
def start_cmd(
    ctx: typer.Context,
    model: ModelOption = None,
    as_json: JsonOption = False,
    option: List[str] = option_list(LLMStartOptions, "The context window and the wait, KEY=VALUE, repeatable"),
) -> None:
    """Start the model server in the background at the `llm.server` address and wait until it answers (threads:
    the runtime.threads setting)."""
    import sys

    o = parse_options(LLMStartOptions, option)
    n_ctx, timeout = o.n_ctx, o.timeout

    from legalrag.warm.daemon import LLM_SERVER, start

    r = root(ctx)
    s = r.settings
    cmd = [sys.executable, "-m", "legalrag"]  # the same settings: the server listens at their llm.server address
    if r.config is not None:
        cmd += ["--config", str(r.config)]
    if r.profile is not None:
        cmd += ["--profile", str(r.profile)]
    cmd += ["llm", "serve", "-o", f"n_ctx={n_ctx}"]
    if model or s.llm.model:
        cmd += ["--model", str(model or s.llm.model)]
    typer.echo(f"starting the model server at {s.llm.server.url} (loading the model)...", err=True)
    info = start(LLM_SERVER, s.llm.server.url, s.home, cmd, timeout=timeout)
    if as_json:
        print_json(info)
    elif info.get("already_running"):
        typer.echo(f"already running at {info['url']} ({info['model']}); `ask` and `chat` use it")
    else:
        typer.echo(f"running at {info['url']} ({info['model']}, pid {info['pid']}, ready in {info['seconds']} s); "
                   f"`ask` and `chat` use it; `legalrag llm stop` ends it; log: {info['log']}")


@llm_app.command("stop")
def stop_cmd(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Stop the model server that `legalrag llm start` started."""
    from legalrag.warm.daemon import LLM_SERVER, stop

    s = root(ctx).settings
    info = stop(LLM_SERVER, s.llm.server.url, s.home)
    if as_json:
        print_json(info)
    elif info["stopped"]:
        typer.echo(f"stopped the model server (pid {info['pid']})")
    else:
        typer.echo("no model server started by `legalrag llm start` was running"
                   + (f"; another one still answers at {info['url']}" if info["still_up"] else ""))


@llm_app.command("status")
def status_cmd(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Whether a model server is up at the `llm.server` address, and which model it serves."""
    from legalrag.warm.daemon import LLM_SERVER, status

    s = root(ctx).settings
    info = status(LLM_SERVER, s.llm.server.url, s.home)
    if as_json:
        print_json(info)
    elif info["up"]:
        pid = f", pid {info['pid']}" if info["pid"] else " (not started by `legalrag llm start`)"
        typer.echo(f"up at {info['url']}: {info['model']}{pid}; `ask` and `chat` answer through it")
    else:
        typer.echo(f"no model server at {info['url']}: `ask` and `chat` load the model in-process (start one with "
                   "`legalrag llm start`)")
