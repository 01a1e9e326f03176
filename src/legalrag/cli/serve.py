"""`legalrag serve --index DIR`: the web application and its JSON API (loopback by default)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.engine import DEFAULTS
from legalrag.cli.apps import app
from legalrag.cli.common import (CacheOption, EndpointModelOption, EndpointOption, IndexOrDemoOption, ModelOption,
                                 ThreadsOption, is_loopback, renamed, root)


@app.command("serve", cls=renamed({"--llm-cache": "--cache", "--no-llm-cache": "--no-cache",
                                   "--cite-model": "--cite-model-dir", "--judgment-model": "--judgment-model-dir"}))
def serve_cmd(
    ctx: typer.Context,
    index: IndexOrDemoOption = None,
    host: Optional[str] = typer.Option(None, "--host", help="Address to bind (default: the serve.host setting, "
                                       "127.0.0.1); keep loopback unless behind a proxy (another address without "
                                       "--api-key-file prints a warning)."),
    port: Optional[int] = typer.Option(None, "--port", min=1, max=65535, help="Port (default: the serve.port "
                                       "setting, 8080)."),
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    threads: ThreadsOption = None,
    no_llm: bool = typer.Option(False, "--no-llm", help="Serve search and citation checks only (answers: 503)."),
    llm_cache: CacheOption = True,
    cite_model: Optional[Path] = typer.Option(None, "--cite-model-dir", help="Citation model directory for /cite "
                                              "(default INDEX/citepred when it exists)."),
    judgment_model: Optional[Path] = typer.Option(None, "--judgment-model-dir",
                                                  help="Judgment structure model directory (`legalrag judgment "
                                                       "train`) for /judgment/structure (default: the judgment.model "
                                                       "setting, $LEGALRAG_JUDGMENT_MODEL); needs --law-corpus."),
    law_corpus: Optional[Path] = typer.Option(None, "--law-corpus",
                                              help="The statute corpus the judgment model was trained with (JSONL; "
                                              "default: the judgment.law_corpus setting, $LEGALRAG_LAW_CORPUS)."),
    api_key_file: Optional[Path] = typer.Option(None, "--api-key-file", help="File of accepted API keys, one per "
                                                "line; without it no key is needed."),
    rate_limit: int = typer.Option(120, "--rate-limit", min=0, help="Requests per minute per key (0: no limit)."),
    cors_origin: List[str] = typer.Option([], "--cors-origin", help="Allow browser calls from this origin "
                                          "(repeatable); CORS is off without it."),
    max_k: int = typer.Option(50, "--max-k", min=1, max=1000, help="Largest k a request may ask for."),
    max_waiting: int = typer.Option(16, "--max-waiting", min=0, help="Generations that may queue for the model."),
    policy: Optional[Path] = typer.Option(None, "--policy", help="A trained agents' policy directory (`legalrag "
                                          "train policy`): /agents/search runs the embedded model with its adapter."),
    evidence_tokens: Optional[int] = typer.Option(None, "--evidence-tokens", min=0, max=8192,
                                                  help="Token budget for the retrieved articles in /ask and /consult "
                                                  "prompts: each is cut to the clauses matching the question "
                                                  "(default: the answer.evidence_tokens setting, else "
                                                  f"{DEFAULTS.evidence_tokens}; 0: whole articles); a request may "
                                                  "ask for less."),
) -> None:
    """Serve the web application (consultation, search, drafting, citation prediction) and its JSON API."""
    import logging

    import uvicorn

    from legalrag.server import Settings, create_app
    from legalrag.server.security import load_api_keys

    host = host or root(ctx).settings.serve_host
    port = port or root(ctx).settings.serve_port
    keys = tuple(load_api_keys(api_key_file)) if api_key_file else ()
    if not is_loopback(host) and not keys:
        typer.secho(f"warning: serving on {host} without an API key: anyone who can reach this address can use "
                    "the server (and its model). Pass --api-key-file FILE.", fg="yellow", err=True)
    structure = None
    from legalrag.cli.judgment import load_structure, structure_model_dir

    judgment_model = root(ctx).judgment_model(judgment_model)
    law_corpus = root(ctx).law_corpus(law_corpus)

    if judgment_model is None and law_corpus is not None:
        judgment_model = structure_model_dir(None)  # the shipped structure model, when this install has one
    if judgment_model is not None:
        from legalrag.errors import InputError

        if law_corpus is None:
            raise InputError("--judgment-model-dir needs --law-corpus FILE (the statute corpus it was trained with) or "
                             "LEGALRAG_LAW_CORPUS")
        # with the encoder its manifest names, if any
        structure = load_structure(structure_model_dir(judgment_model), law_corpus)
    idx = root(ctx).open_index_or_demo(index, progress=True)
    llm = None if no_llm else root(ctx).make_llm(model, endpoint, endpoint_model, llm_cache, threads=threads)
    agents_llm = None
    if policy is not None:
        from legalrag.wiring import make_policy_llm

        # the policy's own base model (it refuses another); answers keep --model / --endpoint
        agents_llm = make_policy_llm(policy, cache=llm_cache, threads=threads)
    predictor = None
    from legalrag.citepred.service import build_predictor, default_model_dir

    model_dir = cite_model or default_model_dir(idx)
    if model_dir is not None:
        predictor = build_predictor(idx, model_dir=model_dir)
    settings = Settings(max_k=max_k, api_keys=keys, rate_limit=rate_limit, cors_origins=tuple(cors_origin),
                        max_waiting=max_waiting,
                        evidence_tokens=root(ctx).answer_settings(evidence_tokens=evidence_tokens).evidence_tokens)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    typer.echo(f"legalrag: http://{host}:{port}/  (API schema /openapi.json, routes /docs)", err=True)
    uvicorn.run(create_app(idx, llm, settings, predictor=predictor, agents_llm=agents_llm, structure=structure),
                host=host, port=port, log_level="info", access_log=False)
