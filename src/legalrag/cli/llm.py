"""`legalrag llm serve | info | cache-clear`: the embedded model as an OpenAI-compatible server, model files,
digests and call-cache statistics."""

from __future__ import annotations

import os
from typing import List, Optional

import typer

from legalrag.cli._options import LLMServeOptions, option_list, parse_options
from legalrag.cli.apps import llm_app
from legalrag.cli.common import JsonOption, ModelOption, is_loopback, root


@llm_app.command("serve")
def serve_cmd(
    ctx: typer.Context,
    model: ModelOption = None,
    name: Optional[str] = typer.Option(None, "--name", help="Model name clients send (default: the model id)."),
    option: List[str] = option_list(LLMServeOptions, "The context window and the clients' key, KEY=VALUE, "
                                    "repeatable"),
) -> None:
    """Serve an embedded model at http://HOST:PORT/v1 (chat completions, models): the llm.server setting's
    address (default 127.0.0.1:8000, where `ask` and `chat` look for a model server; `legalrag config set
    llm.server HOST:PORT` moves it), loopback only unless -o api_key_env=VAR is set; threads: the runtime.threads
    setting."""
    from legalrag.errors import InputError
    from legalrag.llm.serve import serve
    from legalrag.wiring import make_llm

    o = parse_options(LLMServeOptions, option)
    api_key_env, n_ctx, threads = o.api_key_env, o.n_ctx, None
    host, port = root(ctx).settings.llm.server.host, root(ctx).settings.llm.server.port
    api_key = None
    if api_key_env:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise InputError(f"-o api_key_env={api_key_env}: the variable is not set or empty", field="api_key_env")
    if not is_loopback(host) and not api_key:
        raise InputError(f"refusing to serve on {host} without an API key; set a loopback address (`legalrag "
                         "config set llm.server 127.0.0.1:8000`) or pass -o api_key_env=VAR", field="llm.server")
    # served as is: clients cache
    llm = make_llm(model, cache=False, threads=threads, n_ctx=n_ctx, settings=root(ctx).settings).load()
    typer.echo(f"serving {llm.model_id} at http://{host}:{port}/v1 (loaded in {llm.load_seconds:.1f} s); "
               "Ctrl-C stops", err=True)
    try:
        serve(llm, host=host, port=port, model_name=name, api_key=api_key)
    finally:
        llm.close()


@llm_app.command("info")
def info_cmd(
    ctx: typer.Context,
    as_json: JsonOption = False,
) -> None:
    """Bundled models (parts installed, assembled file, verified digest) and statistics of the call cache (the
    paths.llm_cache setting)."""
    from legalrag.cli.common import print_json
    from legalrag.llm.info import llm_info

    settings = root(ctx).settings
    info = llm_info(settings.llm_cache, settings.models_dir)
    if as_json:
        print_json(info)
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"Models (cache dir {info['models_dir']})")
    for col in ("name", "parts installed", "assembled", "verified", "sha256", "path"):
        t.add_column(col)
    for m in info["models"]:
        t.add_row(m["name"], "yes" if m["parts_installed"] else f"no: {m['install']}",
                  "yes" if m["assembled"] else "no", "yes" if m["verified"] else "no",
                  m["expected_sha256"][:16] + "…", m["path"])
    console = Console()
    console.print(t)
    console.print(f"runtime: xllamacpp {info['runtime'] or 'not installed'}")
    c = info["call_cache"]
    if c.get("exists"):
        console.print(f"call cache {c['path']}: {c['entries']} entries, {c['bytes'] / 1e6:.1f} MB")
        for m in c["models"]:
            console.print(f"  {m['backend']} {m['model']}: {m['entries']} entries, {m['hits']} hits")
    else:
        console.print(f"call cache {c['path']}: empty")


@llm_app.command("cache-clear")
def cache_clear_cmd(
    ctx: typer.Context,
    model: Optional[str] = typer.Option(None, "--model", help="Only this model id."),
) -> None:
    """Delete cached LLM calls (from the call cache of the paths.llm_cache setting; another file: `legalrag
    --config FILE` or LEGALRAG_LLM_CACHE=FILE)."""
    from legalrag.llm.cache import CallCache

    store = CallCache(root(ctx).settings.llm_cache)
    n = store.clear(model)
    store.close()
    typer.echo(f"deleted {n} cached calls from {store.path}")
