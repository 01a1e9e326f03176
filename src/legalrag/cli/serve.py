"""`legalrag serve --index DIR`: the web application and its JSON API (loopback by default), and the warm
process that `legalrag ask` and `legalrag chat` answer through: it holds the index, the encoder, the citation
resolver and the model. `--background` starts it detached and waits until it answers; `--stop` and `--status`
manage that one."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import ServeOptions, option_list, parse_options
from legalrag.cli.apps import app
from legalrag.cli.common import IndexOrDemoOption, LLMOption, is_loopback, llm_spec, require_endpoint_model, root


@app.command("serve")
def serve_cmd(
    ctx: typer.Context,
    index: IndexOrDemoOption = None,
    host: Optional[str] = typer.Option(None, "--host", help="Address to bind (default: the serve.host setting, "
                                       "127.0.0.1); keep loopback unless behind a proxy (another address without "
                                       "--api-key-file prints a warning)."),
    port: Optional[int] = typer.Option(None, "--port", min=1, max=65535, help="Port (default: the serve.port "
                                       "setting, 8080)."),
    model: LLMOption = None,
    no_llm: bool = typer.Option(False, "--no-llm", help="Serve search and citation checks only (answers: 503)."),
    cite_model: Optional[Path] = typer.Option(None, "--cite-model-dir", help="Citation model directory for /cite "
                                              "(default INDEX/citepred when it exists)."),
    judgment_model: Optional[Path] = typer.Option(None, "--judgment-model-dir",
                                                  help="Judgment structure model directory (`legalrag train "
                                                       "judge-structure`) for /judgment/structure and the drafting page "
                                                       "(/draft drafts as `legalrag judgment draft` does; default: "
                                                       "the judgment.model setting, $LEGALRAG_JUDGMENT_MODEL); "
                                                       "needs --law-corpus."),
    law_corpus: Optional[Path] = typer.Option(None, "--law-corpus",
                                              help="The statute corpus the judgment model was trained with (JSONL; "
                                              "default: the judgment.law_corpus setting, $LEGALRAG_LAW_CORPUS)."),
    api_key_file: Optional[Path] = typer.Option(None, "--api-key-file", help="File of accepted API keys, one per "
                                                "line; without it no key is needed."),
    option: Optional[List[str]] = option_list(ServeOptions, "The call cache, MCP, CORS, the agents' policy and the "
                                              "server's limits, KEY=VALUE, repeatable"),
    background: bool = typer.Option(False, "--background", help="Start the server detached (log and pid in the "
                                    "home folder), wait until it answers, and return; `ask` and `chat` use it."),
    stop: bool = typer.Option(False, "--stop", help="Stop the server `--background` started."),
    status: bool = typer.Option(False, "--status", help="Say whether a server answers at the serve address: its "
                                "build (stale or current), model and indexes."),
) -> None:
    """Serve the web application (consultation, search, drafting, citation prediction) and its JSON API.
    Threads: the runtime.threads setting."""
    limits = parse_options(ServeOptions, option)
    threads, llm_cache, mcp = None, limits.llm_cache, limits.mcp
    cors_origin, policy = limits.cors_origin or (), Path(limits.policy) if limits.policy else None
    name, endpoint, endpoint_model = llm_spec(model)
    require_endpoint_model(root(ctx), endpoint, endpoint_model)
    if background or stop or status:
        return _manage(ctx, background=background, stop=stop, status=status, index=index, host=host, port=port,
                       model=model, no_llm=no_llm, options=option or [])
    import logging

    import uvicorn

    from legalrag.server import create_app
    from legalrag.server.security import load_api_keys

    host = host or root(ctx).settings.serve_host
    port = port or root(ctx).settings.serve_port
    keys = tuple(load_api_keys(api_key_file)) if api_key_file else ()
    if not is_loopback(host) and not keys:
        typer.secho(f"warning: serving on {host} without an API key: anyone who can reach this address can use "
                    "the server (and its model). Pass --api-key-file FILE.", fg="yellow", err=True)
    structure = None
    from legalrag.cli.judgment import structure_model_dir
    from legalrag.wiring.judgment import structure_model
    from legalrag.national import CRIMINAL_LAW

    judgment_model = root(ctx).judgment_model(judgment_model)
    user_chose = judgment_model is not None
    from legalrag.errors import LegalRagError

    law_corpus = root(ctx).law_corpus(law_corpus)
    # the criminal law of the shipped national-law data: the statutes the judgment and citation models decide over
    criminal = root(ctx).index(laws=[CRIMINAL_LAW], progress=True) if law_corpus is None else None
    if judgment_model is None and (law_corpus is not None or criminal is not None):
        judgment_model = structure_model_dir(None)  # the shipped structure model, when this install has one
    if judgment_model is not None:
        from legalrag.errors import InputError

        if law_corpus is None and criminal is None:
            raise InputError("--judgment-model-dir needs --law-corpus FILE (the statute corpus it was trained with) or "
                             "LEGALRAG_LAW_CORPUS")
        # with the encoder its manifest names, if any
        try:
            structure = structure_model(structure_model_dir(judgment_model),
                                        law_corpus if law_corpus is not None else list(criminal.documents),
                                        settings=root(ctx).settings)
        except LegalRagError as exc:
            if user_chose:
                raise
            # the default model: serve without the judgment routes rather than not at all
            typer.secho(f"warning: the judgment routes are off: {exc}", fg="yellow", err=True)
    idx = root(ctx).index(index, progress=True)
    llm = None if no_llm else root(ctx).make_llm(name, endpoint, endpoint_model, llm_cache, threads=threads)
    agents_llm = None
    if policy is not None:
        from legalrag.wiring import make_policy_llm

        # the policy's own base model (it refuses another); answers keep --model
        agents_llm = make_policy_llm(policy, cache=llm_cache, threads=threads)
    predictor = None
    from legalrag.citepredict.service import build_predictor, default_model_dir

    model_dir = cite_model or default_model_dir(idx)
    if model_dir is not None:
        predictor = build_predictor(idx, model_dir=model_dir)
    elif criminal is not None and default_model_dir(criminal) is not None:  # the shipped judge-cite, out of the box
        predictor = build_predictor(criminal, model_dir=default_model_dir(criminal))
    budget = root(ctx).answer_settings(evidence_tokens=limits.evidence_tokens).evidence_tokens
    settings = server_settings(root(ctx).settings, host=host, api_keys=keys, cors_origins=tuple(cors_origin), mcp=mcp,
                               evidence_tokens=budget, max_k=limits.max_k, rate_limit=limits.rate_limit,
                               max_waiting=limits.max_waiting, max_indexes=limits.max_indexes)
    support = root(ctx).make_support_scorer("stard-e5", threads=threads)  # the one model of every route
    _warm_up(idx, llm, support)
    versions = _versions()  # the law's versions, for /law/*, check's as_of and the drafts' law at the act
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    app = create_app(idx, llm, settings, predictor=predictor, agents_llm=agents_llm, structure=structure,
                     open_index=lambda path: _open_warm(root(ctx), path, threads), support=support,
                     versions=lambda: versions)
    from legalrag.warm.build import build_id

    typer.echo(f"legalrag {build_id()}: http://{host}:{port}/  (API schema /openapi.json, routes /docs; OpenAI-compatible "
               f"chat /v1/chat/completions{', MCP /mcp' if mcp else ''})", err=True)
    uvicorn.run(app, host=host, port=port, log_level="info", access_log=False)


LIMITS = {"max_k": "serve.max_k", "rate_limit": "serve.rate_limit", "max_waiting": "serve.max_waiting",
          "max_indexes": "serve.max_indexes", "max_body_bytes": "serve.max_body_kb"}


def server_settings(saved, *, host: str, **given):
    """The server's :class:`legalrag.server.ServerSettings`: each limit ``-o`` gave (``given``, None when not), else
    the saved ``serve.*`` setting (``legalrag config set serve.max_k 20``), else its default. A saved value out of
    range is an error naming the setting and its bound (``-o``'s range :class:`ServeOptions` checks)."""
    from pydantic import ValidationError

    from legalrag.errors import InputError
    from legalrag.server import ServerSettings

    values = {k: v for k, v in given.items() if k not in LIMITS}
    chosen = {}
    for name, key in LIMITS.items():
        flag = given.get(name)
        chosen[name] = flag if flag is not None else saved.values.get(key)
    if chosen["max_body_bytes"] is not None:
        chosen["max_body_bytes"] = int(chosen["max_body_bytes"]) * 1024
    if chosen["max_indexes"] is None:
        chosen["max_indexes"] = 2 if is_loopback(host) else 0  # a request may name a path on this machine
    try:
        return ServerSettings(host=host, **values, **{k: v for k, v in chosen.items() if v is not None})
    except ValidationError as exc:
        e = exc.errors()[0]
        key = LIMITS.get(str(e["loc"][0]) if e.get("loc") else "", "serve")
        raise InputError(f"the {key} setting: {e['msg']}; change it with `legalrag config set {key} VALUE`",
                         field=key) from None


def _open_warm(r, path: Path, threads: int | None):
    """Another index a request names, opened with the server's settings and warmed like its own."""
    idx = r.index(path, threads=threads)
    _warm_up(idx, None)
    return idx


def _versions():
    """The national law's versions (the shipped ones, else ``$LEGALRAG_DATA/laws-2025``), loaded once at start;
    None when none is installed (the routes that need them say so)."""
    from legalrag.cli.law import library
    from legalrag.errors import InputError

    try:
        return library(None)
    except InputError:
        return None


def _warm_up(idx, llm, support) -> None:
    """Load now what the first request would otherwise wait for: the default retriever (its encoder and
    vectors), the citation resolver, the decisive-article selector and its support model, the model."""
    from legalrag.answer.per_index import SELECTOR_MIN_ARTICLES, resolver_for, shipped_selector
    from legalrag.errors import ModelError
    from legalrag.retrieval.pipeline import build_pipeline

    build_pipeline(idx).search("合同", k=1)
    resolver_for(idx)
    if len(getattr(idx, "documents", ())) >= SELECTOR_MIN_ARTICLES:
        try:
            shipped_selector(idx, support).warm_up()
        except ModelError:  # a missing or altered selector file: the first answer gives the notice
            pass
    if llm is not None and callable(getattr(llm, "load", None)):
        llm.load()


def _manage(ctx: typer.Context, *, background: bool, stop: bool, status: bool, index, host, port, model,
            no_llm, options: list[str]) -> None:
    """--background, --stop, --status: the detached server (``legalrag.warm.daemon``); the server started gets the
    flags and ``-o`` limits given here (the limits not given come from the same settings file)."""
    import sys

    from legalrag.warm import daemon
    from legalrag.warm.route import server_url

    r = root(ctx)
    s = r.settings
    url = server_url(s) if host is None and port is None else \
        f"http://{'127.0.0.1' if host in (None, '0.0.0.0') else host}:{port or s.serve_port}"
    if stop:
        info = daemon.stop(daemon.SERVE, url, s.home)
        typer.echo(f"stopped the server (pid {info['pid']})" if info["stopped"] else
                   "no server started by `legalrag serve --background` was running"
                   + (f"; another one still answers at {url}" if info["still_up"] else ""))
        return
    if status:
        info = daemon.status(daemon.SERVE, url, s.home)
        if not info["up"]:
            typer.echo(f"no legalrag server at {url}: `ask` and `chat` answer in their own process")
        elif info["stale"]:
            typer.echo(f"STALE: the server at {url} runs build {info['build']}, not this one; `ask` and `chat` do "
                       "not use it. Restart it: `legalrag serve --stop`, then `legalrag serve --background`")
        else:
            typer.echo(f"up at {url} (build {info['build']}, pid {info['server_pid']}): model {info['llm']}, "
                       f"indexes {', '.join(info['indexes'])}; `ask` and `chat` answer through it")
        return
    cmd = [sys.executable, "-m", "legalrag"]
    if r.config is not None:
        cmd += ["--config", str(r.config)]
    if r.profile is not None:
        cmd += ["--profile", str(r.profile)]
    cmd += ["serve"]
    for flag, value in (("--index", index), ("--host", host), ("--port", port), ("--model", model),
                        *(("-o", pair) for pair in options)):
        if value is not None:
            cmd += [flag, str(Path(value).resolve()) if flag == "--index" else str(value)]
    if no_llm:
        cmd.append("--no-llm")
    typer.echo(f"starting the legalrag server at {url} (loading the index and the model)...", err=True)
    info = daemon.start(daemon.SERVE, url, s.home, cmd)
    if info.get("already_running"):
        stale = " (STALE: another build; `legalrag serve --stop` first)" if info.get("stale") else ""
        typer.echo(f"already running at {url}{stale}")
        return
    typer.echo(
        f"running at {url} (pid {info['pid']}, ready in {info['seconds']} s); `ask` and `chat` answer through it; "
        f"`legalrag serve --stop` ends it; log: {info['log']}")
