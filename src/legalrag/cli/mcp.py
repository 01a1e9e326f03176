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
from legalrag.cli.common import CacheOption, IndexOrDemoOption, LLMOption, llm_spec, require_endpoint_model, root


@app.command("mcp")
def mcp_cmd(
    ctx: typer.Context,
    index: IndexOrDemoOption = None,
    model: LLMOption = None,
    no_llm: bool = typer.Option(False, "--no-llm", help="No language model: every tool but ask works."),
    llm_cache: CacheOption = True,
    cite_model: Optional[Path] = typer.Option(None, "--cite-model-dir", help="Citation model directory for "
                                              "predict_citations (default INDEX/citepred, or the shipped one the "
                                              "index was built for)."),
) -> None:
    """Serve legalrag's tools (search_statutes, get_article, check_citations, predict_citations, predict_verdict,
    ask) to an MCP host over stdio. predict_verdict's structure model and statutes are the judgment.model and
    judgment.law_corpus settings ($LEGALRAG_JUDGMENT_MODEL, $LEGALRAG_LAW_CORPUS; default: the shipped
    judge-structure over the criminal law of the shipped national-law data); threads: the runtime.threads
    setting."""
    from legalrag.integrations.mcp_server import create_mcp_server
    from legalrag.integrations.tools import Collaborators, LegalTools
    from legalrag.national import CRIMINAL_LAW

    r = root(ctx)
    threads = None  # the runtime.threads setting
    model, endpoint, endpoint_model = llm_spec(model)
    require_endpoint_model(r, endpoint, endpoint_model)
    judgment_model, law_corpus = r.judgment_model(None), r.law_corpus(None)

    def open_index():
        return r.index(index, threads=threads)

    def make_llm():
        return r.make_answer_llm(model, endpoint, endpoint_model, cache=llm_cache, threads=threads)

    def make_predictor(idx):
        from legalrag.citepredict.service import build_predictor, default_model_dir

        model_dir = cite_model or default_model_dir(idx)
        if model_dir is not None:
            return build_predictor(idx, model_dir=model_dir)
        criminal = r.index(laws=[CRIMINAL_LAW], threads=threads)  # the shipped judge-cite over the shipped criminal law, as serve does
        if criminal is not None and default_model_dir(criminal) is not None:
            return build_predictor(criminal, model_dir=default_model_dir(criminal))
        return None

    def make_structure():
        from legalrag.cli.judgment import structure_model_dir
        from legalrag.wiring.judgment import structure_model

        statutes = law_corpus
        if statutes is None:  # the criminal law of the shipped national-law data, which judge-structure decides over
            criminal = r.index(laws=[CRIMINAL_LAW], threads=threads)
            statutes = list(criminal.documents) if criminal is not None else None
        model_dir = structure_model_dir(judgment_model)
        if statutes is None or model_dir is None:
            return None
        return structure_model(model_dir, statutes, settings=r.settings)

    tools = LegalTools(Collaborators(index=open_index, llm=None if no_llm else make_llm, predictor=make_predictor,
                                     structure=make_structure,
                                     support=lambda: r.make_support_scorer("stard-e5", threads=threads)))
    import logging
    import sys

    # standard output is the protocol: every log line goes to standard error (the host's log)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    typer.echo("legalrag mcp: serving on stdio (tools load on first use)", err=True)
    create_mcp_server(tools).run("stdio")
