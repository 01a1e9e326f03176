"""`legalrag cite` (predict the provisions a decision would cite) and `legalrag eval cite` (stage ablation)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from legalrag.cli.apps import app, eval_app
from legalrag.cli.common import (EndpointModelOption, EndpointOption, IndexOption, JsonOption, ModelOption,
                                 ProgressOption, RetrieverOption, deprecated, print_json, renamed, root)

_MODEL_HELP = ("Citation model directory (rules.json, cocitation/, config.json) or the name of a shipped one "
               "(judge-cite); default INDEX/citepred, else the shipped model calibrated on one of the index's "
               "components.")


def _model_and_dir(model: Optional[str], llm_model: Optional[str], model_dir: Optional[Path]):
    """``--model`` names the LLM, as in every command. Its old meaning here, the citation model's folder, still
    works when the value is such a folder (with a note), and ``--llm`` is the old spelling of ``--model``."""
    if llm_model is not None:
        deprecated("--llm", "--model")
        model = model or llm_model
    if model is not None and model_dir is None and Path(model).is_dir() and \
            any((Path(model) / f).exists() for f in ("rules.json", "config.json")):
        deprecated("--model DIR (a citation model folder)", "--model-dir DIR")
        return None, Path(model)
    return model, model_dir


def _collaborators(ctx: typer.Context, index: Optional[Path], rerank: bool, use_llm: bool, model: Optional[str],
                   endpoint: Optional[str], endpoint_model: Optional[str]):
    """The opened index (default: the criminal law of the shipped national-law data, which the shipped citation
    model judge-cite decides over), the LLM (when an LLM stage is on) and the pointwise reranker (with --rerank)."""
    r = root(ctx)
    idx = r.law_index(progress=True) if index is None and r.settings.index is None else None
    idx = idx if idx is not None else r.open_index(index)
    llm = root(ctx).make_llm(model, endpoint, endpoint_model) if use_llm else None
    reranker = None
    if rerank:
        from legalrag.wiring import make_reranker

        reranker = make_reranker("llm-pointwise", idx, llm=llm)
    return idx, llm, reranker


LLM_RERANK_HELP = "Pointwise LLM rerank of the top candidates."


@app.command("cite", cls=renamed({"--cases": "--case-memory", "--rerank": "--llm-rerank",
                                  "--no-rerank": "--no-llm-rerank"}))
def cite(
    ctx: typer.Context,
    facts: str = typer.Argument(..., help="The facts of the case."),
    index: IndexOption = None,
    train_citations: Optional[Path] = typer.Option(None, "--train-citations", help="Training citation sets (qrels or JSONL)."),
    model_dir: Optional[Path] = typer.Option(None, "--model-dir", help=_MODEL_HELP),
    rules: Optional[Path] = typer.Option(None, "--rules", help="A (user-edited) rules file replacing the learned one."),
    labelled: Optional[str] = typer.Option(None, "--case-memory", help="A JSONL file of labelled cases (facts + "
                                           "cited provisions) whose nearest neighbours vote; replaces the model's "
                                           "case memory."),
    retriever: RetrieverOption = None,
    core_k: Optional[int] = typer.Option(None, "--core-k", min=1, help="Top candidates kept as core predictions."),
    threshold: Optional[float] = typer.Option(None, "--threshold", help="Selection threshold for additions."),
    analysis: bool = typer.Option(False, "--analyse/--no-analyse", help="LLM query analysis."),
    rerank: bool = typer.Option(False, "--llm-rerank/--no-llm-rerank", help=LLM_RERANK_HELP),
    verify: bool = typer.Option(False, "--verify/--no-verify", help="LLM verification of each addition."),
    verify_batch: Optional[bool] = typer.Option(None, "--verify-batch/--verify-each", help="Verify every addition "
                                                "in one call, or one call each (default: the model's setting)."),
    case_first: Optional[bool] = typer.Option(None, "--case-first/--per-stage-prompts", help="Open every LLM call "
                                              "with the facts so the runtime reads them once per case (default: "
                                              "the model's setting, on unless it says otherwise)."),
    model: ModelOption = None,
    llm_model: Optional[str] = typer.Option(None, "--llm", hidden=True, help="Old spelling of --model."),
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    as_json: JsonOption = False,
) -> None:
    """Predict the set of provisions a court would cite for FACTS, with the provenance of each."""
    from legalrag.citepredict.service import build_predictor, result_to_dict

    model, model_dir = _model_and_dir(model, llm_model, model_dir)
    idx, llm, reranker = _collaborators(ctx, index, rerank, analysis or rerank or verify, model, endpoint,
                                        endpoint_model)
    memory = None
    if labelled is not None:
        from legalrag.citepredict.cases import CaseMemory
        from legalrag.citepredict.data import load_cases

        memory = CaseMemory.build(load_cases(Path(labelled)))
    predictor = build_predictor(idx, train_citations=train_citations, model_dir=model_dir, rules_path=rules,
                                retriever=retriever, llm=llm, reranker=reranker, cases=memory,
                                overrides={"core_k": core_k, "threshold": threshold, "analysis": analysis or None,
                                           "verify": verify or None, "verify_batch": verify_batch,
                                           "case_first": case_first})
    out = result_to_dict(predictor.predict(facts))
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


@eval_app.command("cite", cls=renamed({"--save-model": "--out", "--rerank": "--llm-rerank",
                                       "--no-rerank": "--no-llm-rerank"}))
def eval_cite(
    ctx: typer.Context,
    index: IndexOption = None,
    cases: Path = typer.Option(..., "--cases", help="JSONL cases with facts (text) and gold citations (la/gold)."),
    train_citations: Optional[Path] = typer.Option(None, "--train-citations", help="Training citation sets."),
    model_dir: Optional[Path] = typer.Option(None, "--model-dir", help=_MODEL_HELP),
    rules: Optional[Path] = typer.Option(None, "--rules", help="A (user-edited) rules file."),
    dev: int = typer.Option(0, "--dev", min=0, help="Calibrate on the first N cases by sorted id; evaluate the rest."),
    case_memory: Optional[str] = typer.Option(None, "--case-memory", help="'dev' (vote with the development cases, "
                                              "each left out of its own vote) or a JSONL file of labelled cases."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Evaluate only the first N evaluation cases."),
    retriever: RetrieverOption = None,
    core_k: Optional[int] = typer.Option(None, "--core-k", min=1, help="Top candidates kept as core predictions "
                                         "(default: calibrated on --dev, else the model's)."),
    prior_weight: Optional[float] = typer.Option(None, "--prior-weight", min=0.0, help="Weight of the "
                                                 "training-citation prior in retrieval (default: the model's)."),
    analysis: bool = typer.Option(False, "--analyse/--no-analyse", help="LLM query analysis."),
    rerank: bool = typer.Option(False, "--llm-rerank/--no-llm-rerank", help=LLM_RERANK_HELP),
    verify: bool = typer.Option(False, "--verify/--no-verify", help="LLM verification of each addition."),
    verify_batch: Optional[bool] = typer.Option(None, "--verify-batch/--verify-each", help="Verify every addition "
                                                "in one call, or one call each (default: the model's setting)."),
    case_first: Optional[bool] = typer.Option(None, "--case-first/--per-stage-prompts", help="Open every LLM call "
                                              "with the facts so the runtime reads them once per case (default: "
                                              "the model's setting)."),
    model: ModelOption = None,
    llm_model: Optional[str] = typer.Option(None, "--llm", hidden=True, help="Old spelling of --model."),
    endpoint: EndpointOption = None,
    endpoint_model: EndpointModelOption = None,
    save_model: Optional[Path] = typer.Option(None, "--out", help="Write the calibrated citation model (rules, "
                                              "graph, config) to this folder (readable by --model-dir)."),
    progress: ProgressOption = True,
    as_json: JsonOption = False,
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also draw P/R/F1 after each stage to this PNG."),
) -> None:
    """Precision, recall and F1 (micro and macro) after each stage of the citation pipeline."""
    index = root(ctx).index_path(index)
    from legalrag.citepredict.runner import run_eval

    if plot is not None:
        from legalrag.evaluation.plots import check_png_path

        check_png_path(plot)
    model, model_dir = _model_and_dir(model, llm_model, model_dir)
    idx, llm, reranker = _collaborators(ctx, index, rerank, analysis or rerank or verify, model, endpoint,
                                        endpoint_model)
    rep = run_eval(idx, cases, train_citations=train_citations, model_dir=model_dir, rules_path=rules, dev=dev,
                   limit=limit, retriever=retriever, llm=llm, reranker=reranker, save_model=save_model,
                   progress=progress,
                   case_memory=case_memory,
                   overrides={"core_k": core_k, "prior_weight": prior_weight, "analysis": analysis or None,
                              "verify": verify or None, "verify_batch": verify_batch, "case_first": case_first})
    if plot is not None:
        from legalrag.evaluation.plots import plot_bars

        plot_bars({r.stage: {"precision": r.precision, "recall": r.recall, "F1": r.f1} for r in rep.rows}, plot,
                  title=f"Citation prediction after each stage ({rep.n_cases} cases)")
    if as_json:
        print_json(rep.to_dict())
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Citation prediction on {rep.n_cases} cases (calibrated on {rep.n_dev})")
    for col in ("stage", "selection", "P", "R", "F1", "macro P", "macro R", "macro F1", "mean size"):
        table.add_column(col, justify="left" if col in ("stage", "selection") else "right")
    for r in rep.rows:
        table.add_row(r.stage, r.rule, f"{r.precision:.3f}", f"{r.recall:.3f}", f"{r.f1:.3f}",
                      f"{r.macro_precision:.3f}", f"{r.macro_recall:.3f}", f"{r.macro_f1:.3f}", f"{r.mean_size:.2f}")
    Console(width=140).print(table)
    typer.echo(f"LLM calls per case: {rep.llm_calls_per_case}; seconds per case: {rep.seconds_per_case}")
