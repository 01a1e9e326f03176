"""`legalrag serve --index DIR`: the search/ask HTTP service and its web page (loopback by default)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from legalrag.cli.apps import app
from legalrag.cli.common import root


@app.command("serve")
def serve_cmd(
    ctx: typer.Context,
    index: Optional[Path] = typer.Option(None, "--index", help="Index directory (default: the bundled demo sample)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind; keep loopback unless behind a proxy."),
    port: int = typer.Option(8080, "--port", min=1, max=65535),
    model: Optional[str] = typer.Option(None, "--model", help="Embedded model for /ask (qwen2.5-1.5b, "
                                        "qwen2.5-0.5b or a .gguf path)."),
    endpoint: Optional[str] = typer.Option(None, "--endpoint", help="OpenAI-compatible endpoint for /ask instead."),
    endpoint_model: Optional[str] = typer.Option(None, "--endpoint-model"),
    no_llm: bool = typer.Option(False, "--no-llm", help="Serve search and citation checks only (/ask answers 503)."),
    max_k: int = typer.Option(50, "--max-k", min=1, help="Largest k a request may ask for."),
) -> None:
    """Serve /search, /citations/check and /ask over HTTP, with a small web page at /."""
    import uvicorn

    from legalrag.server import Settings, create_app

    if index is None:
        from legalrag.demo import demo_index

        idx = demo_index(progress=True)
    else:
        idx = root(ctx).open_index(index)
    llm = None if no_llm else root(ctx).make_llm(model, endpoint, endpoint_model)
    uvicorn.run(create_app(idx, llm, Settings(max_k=max_k)), host=host, port=port, log_level="info")
