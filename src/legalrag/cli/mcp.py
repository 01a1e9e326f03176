"""`legalrag mcp`: legalrag's tools for agent hosts, over the Model Context Protocol on stdio.

(`legalrag serve` serves the same tools over streamable HTTP at /mcp.) Nothing is loaded at start: the index,
the model and the citation and structure models are built on the first tool call that needs each, so a host
sees the tool list at once. Standard output carries the protocol only; messages go to standard error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from legalrag.cli.apps import app
from legalrag.cli.common import (CacheOption, EndpointModelOption, EndpointOption, IndexOrDemoOption, ModelOption,
                                 ThreadsOption, renamed, root)


@app.command("mcp", cls=renamed({"--llm-cache": "--cache", "--no-llm-cache": "--no-cache"}))
def mcp_cmd(
    ctx: typer.Context,
    index: IndexOrDemoOption = None,
    model: ModelOption = None,
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    threads: ThreadsOption = None,
    no_llm: bool = typer.Option(False, "--no-llm", help="No language model: every tool but ask works."),
    llm_cache: CacheOption = True,
    cite_model: Optional[Path] = typer.Option(None, "--cite-model-dir", help="Citation model directory for "
                                              "predict_citations (default INDEX/citepred, or the shipped one the "
                                              "index was built for)."),
    judgment_model: Optional[Path] = typer.Option(None, "--judgment-model-dir", envvar="LEGALRAG_JUDGMENT_MODEL",
                                                  help="Judgment structure model directory for predict_verdict "
                                                       "(default: the shipped judge-structure)."),
    law_corpus: Optional[Path] = typer.Option(None, "--law-corpus", envvar="LEGALRAG_LAW_CORPUS",
                                              help="The statute corpus the judgment model was trained with (JSONL; "
                                                   "default: the criminal law of the shipped national-law data)."),
) -> None:
    """Serve legalrag's tools (search_statutes, get_article, check_citations, predict_citations, predict_verdict,
    ask) to an MCP host over stdio."""
    from legalrag.integrations.mcp_server import create_mcp_server
    from legalrag.integrations.tools import Collaborators, LegalTools

    r = root(ctx)

    def open_index():
        return r.open_index_or_demo(index, threads=threads)

    def make_llm():
        return r.make_answer_llm(model, endpoint, endpoint_model, cache=llm_cache, threads=threads)

    def make_predictor(idx):
        from legalrag.citepredict.service import build_predictor, default_model_dir

        model_dir = cite_model or default_model_dir(idx)
        if model_dir is not None:
            return build_predictor(idx, model_dir=model_dir)
        criminal = r.law_index(threads=threads)  # the shipped judge-cite over the shipped criminal law, as serve does
        if criminal is not None and default_model_dir(criminal) is not None:
            return build_predictor(criminal, model_dir=default_model_dir(criminal))
        return None

    def make_structure():
        from legalrag.cli.judgment import load_structure, structure_model_dir

        statutes = law_corpus
        if statutes is None:  # the criminal law of the shipped national-law data, which judge-structure decides over
            criminal = r.law_index(threads=threads)
            statutes = list(criminal.documents) if criminal is not None else None
        model_dir = structure_model_dir(judgment_model)
        if statutes is None or model_dir is None:
            return None
        return load_structure(model_dir, statutes)

    tools = LegalTools(Collaborators(index=open_index, llm=None if no_llm else make_llm, predictor=make_predictor,
                                     structure=make_structure))
    import logging
    import sys

    # standard output is the protocol: every log line goes to standard error (the host's log)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    typer.echo("legalrag mcp: serving on stdio (tools load on first use)", err=True)
    create_mcp_server(tools).run("stdio")
