"""`legalrag cite`: predict the provisions a decision would cite (its evaluation, `eval cite`, is in
cli/eval/cite.py)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import CiteCommandOptions, option_list, parse_options
from legalrag.cli.apps import app
from legalrag.cli.common import ActsAsOfOption, JsonOption, LLMOption, RetrieverOption, make_llm, print_json, root

MODEL_HELP = ("Citation model directory (rules.json, cocitation/, config.json) or the name of a shipped one "
              "(judge-cite); default INDEX/citepred, else the shipped model calibrated on one of the index's "
              "components.")
CITE_INDEX_HELP = ("Index directory (default: the index.path setting, else the criminal law of the national-law data "
                   "shipped with legalrag, which the shipped citation model judge-cite decides over).")


def collaborators(ctx: typer.Context, index: Optional[Path], rerank: bool, use_llm: bool, model: Optional[str]):
    """The opened index (default: the criminal law of the shipped national-law data, which the shipped citation
    model judge-cite decides over), the LLM (when an LLM stage is on) and the pointwise reranker (with --rerank)."""
    from legalrag.national import CRIMINAL_LAW

    r = root(ctx)
    idx = r.index(laws=[CRIMINAL_LAW], progress=True) if index is None and r.settings.index is None else None
    idx = idx if idx is not None else r.index(r.index_path(index))
    llm = make_llm(ctx, model) if use_llm else None
    reranker = None
    if rerank:
        from legalrag.wiring import make_reranker

        reranker = make_reranker("llm-pointwise", idx, llm=llm)
    return idx, llm, reranker


@app.command("cite")
def cite(
    ctx: typer.Context,
    facts: str = typer.Argument(..., help="The facts of the case."),
    index: Optional[Path] = typer.Option(None, "--index", help=CITE_INDEX_HELP),
    model_dir: Optional[Path] = typer.Option(None, "--model-dir", help=MODEL_HELP),
    retriever: RetrieverOption = None,
    model: LLMOption = None,
    option: List[str] = option_list(CiteCommandOptions, "Overrides of the citation model's settings (default: the "
                                                        "model's), a replaced rules file or case memory, and the LLM "
                                                        "stages, KEY=VALUE, repeatable"),
    as_of: ActsAsOfOption = None,
    as_json: JsonOption = False,
) -> None:
    """Predict the set of provisions a court would cite for FACTS, with the provenance of each, and the version of
    each Criminal Law provision in force at the acts (--as-of, else the dates the facts state; 刑法第十二条)."""
    from legalrag.citepredict.service import build_predictor, result_to_dict
    from legalrag.wiring.judgment import as_of_day

    as_of = as_of_day(as_of)  # a bad date is an error before the model loads

    opts = parse_options(CiteCommandOptions, option)
    labelled, analysis, rerank, verify = opts.case_memory, opts.analyse, opts.llm_rerank, opts.verify
    rules = Path(opts.rules) if opts.rules else None
    train_citations = Path(opts.train_citations) if opts.train_citations else None
    idx, llm, reranker = collaborators(ctx, index, rerank, analysis or rerank or verify, model)
    memory = None
    if labelled is not None:
        from legalrag.citepredict.cases import CaseMemory
        from legalrag.citepredict.data import load_cases

        memory = CaseMemory.build(load_cases(Path(labelled)))
    predictor = build_predictor(idx, train_citations=train_citations, model_dir=model_dir, rules_path=rules,
                                retriever=retriever, llm=llm, reranker=reranker, cases=memory,
                                overrides=opts.overrides(analysis=analysis or None, verify=verify or None))
    out = result_to_dict(predictor.predict(facts))
    versions = None
    if index is None and root(ctx).settings.index is None:  # the default: the Criminal Law's articles
        from legalrag.cli.law import default_library
        from legalrag.judgment.temporal import provision_versions

        versions = provision_versions([p["id"] for p in out["provisions"] if p["resolved"]], facts,
                                      default_library(), as_of=as_of)
        out["law_versions"] = versions.to_dict()
    if as_json:
        print_json(out)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Predicted citations ({len(out['provisions'])})")
    for col in ("id", "title", "score", "provenance"):
        table.add_column(col)
    for p in out["provisions"]:
        table.add_row(p["id"], p["title"] + ("" if p["resolved"] else " [unresolved]"), f"{p['score']:.3f}",
                      "; ".join(f"{v['stage']}: {v['detail']}" for v in p["provenance"]))
    Console(width=140).print(table)
    for u in out["unresolved"]:
        typer.echo(f"unresolved correction (no such provision in the corpus): {u}")
    for line in versions.lines() if versions is not None else ():  # the version in force at the acts
        typer.echo(line)
