"""`eval retrieval` (a query file against an index), `eval compare` (saved runs, paired randomization tests)
and `eval fuse` (reciprocal-rank fusion of saved runs)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import CompareOptions, EvalRetrievalOptions, FuseOptions, option_list, parse_options
from legalrag.cli.apps import eval_app
from legalrag.cli.common import (BenchIndexOption, JsonOption, LLMOption, ProgressOption, SearchRetrieverOption,
                                 llm_spec, print_json, root)


def metrics_json(metrics: dict, k: int) -> dict:
    keys = [f"recall@{k}", f"precision@{k}", f"f1@{k}", f"mrr@{k}", f"ndcg@{k}", f"hit@{k}"]
    return {**{key: metrics[key] for key in keys}, "n_queries": metrics["n_queries"]}


@eval_app.command("retrieval")
def eval_retrieval(
    ctx: typer.Context,
    index: BenchIndexOption = None,
    queries: Path = typer.Option(..., "--queries", help="Query JSONL (query_id, query, gold_ids or gold_names)."),
    retriever: SearchRetrieverOption = None,
    rerank: Optional[str] = typer.Option(None, "--rerank", help="Reranker to apply to the retrieved candidates."),
    run_out: Optional[Path] = typer.Option(None, "--out", help="Save run.trec, metrics.json and a manifest here."),
    as_json: JsonOption = False,
    progress: ProgressOption = True,
    agents: bool = typer.Option(False, "--agents", help="Multi-agent query rewriting with a planner (uses an LLM)."),
    model: LLMOption = None,
    option: List[str] = option_list(EvalRetrievalOptions, "The cut-off, the query fields, Ray workers and the "
                                                          "agents' knobs, KEY=VALUE, repeatable"),
) -> None:
    """Evaluate retrieval on a query file (macro-averaged Recall/Precision/F1/MRR/nDCG/Hit at K)."""
    from legalrag.cli._scale import distributed_searcher
    from legalrag.cli.agents import agent_pipeline, wants_agents
    from legalrag.evaluation.datasets import QueryFields, load_queries
    from legalrag.evaluation.runs import evaluate_retrieval, save_run

    opts = parse_options(EvalRetrievalOptions, option)
    fused_planner, k, query_fields = opts.fused_planner, opts.k, opts.query_fields
    trace = Path(opts.trace) if opts.trace else None
    policy = Path(opts.policy) if opts.policy else None
    llm_model, endpoint, endpoint_model = llm_spec(model)
    idx = root(ctx).index(index, progress=progress and not as_json, snapshot=True)
    index = Path(idx.path)
    qs = load_queries(queries, idx, QueryFields.parse(query_fields) if query_fields else None)
    pipe = (agent_pipeline(idx, retriever, rerank, agents=agents, endpoint=endpoint, endpoint_model=endpoint_model,
                           trace=trace, root=root(ctx), policy=policy, model=llm_model,
                           fused=fused_planner)
            if wants_agents(agents, rerank, endpoint, policy) or trace or fused_planner
            else root(ctx).build_pipeline(idx, retriever, rerank))
    if opts.workers or opts.ray_address:
        if agents or trace or endpoint:
            from legalrag.errors import InputError

            raise InputError("-o workers / ray_address run plain pipelines; drop --agents, -o trace and an "
                             "endpoint --model")
        pipe = distributed_searcher(index, retriever, rerank, pipe.name, workers=opts.workers,
                                    address=opts.ray_address)
    result = evaluate_retrieval(pipe, qs, k=k, progress=progress)
    summary = metrics_json(result.metrics, k)
    if run_out is not None:
        params = {"index": str(index), "queries": str(queries), "k": k, "retriever": pipe.name,
                  "corpus": idx.manifest["corpus"].get("source"),
                  "rerank": rerank, "query_fields": query_fields}
        if agents:
            params.update(agents=True, fused_planner=fused_planner)
        save_run(run_out, result.hits, result.metrics, params, index=idx, per_query=result.per_query,
                 tag=pipe.name)
    if as_json:
        print_json(summary)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{pipe.name} on {queries.name} ({summary['n_queries']} queries)")
    for key in summary:
        table.add_column(key, justify="right")
    table.add_row(*[f"{v:.4f}" if isinstance(v, float) else str(v) for v in summary.values()])
    Console().print(table)
    if run_out is not None:
        typer.echo(f"run saved to {run_out}")


@eval_app.command("compare")
def eval_compare(
    runs: List[Path] = typer.Argument(..., help="Run directories written by `eval retrieval --out` (the first "
                                      "is the baseline), or TREC run files."),
    queries: Path = typer.Option(..., "--queries", help="The query JSONL with the gold documents."),
    index: Optional[Path] = typer.Option(None, "--index", help="Index to resolve gold_names and check gold ids."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Draw the Recall@K curves to this PNG."),
    as_json: JsonOption = False,
    option: List[str] = option_list(CompareOptions, "The cut-off, the query fields, the curves and the test, "
                                                    "KEY=VALUE, repeatable"),
) -> None:
    """Compare saved runs on the same queries: metrics, paired randomization tests against the first run,
    Recall@K curves."""
    opts = parse_options(CompareOptions, option)
    depth, trials, k, query_fields = opts.depth, opts.trials, opts.k, opts.query_fields
    from legalrag.evaluation.compare import compare_runs
    from legalrag.evaluation.datasets import QueryFields, load_queries
    from legalrag.evaluation.runs import load_run

    if plot is not None:
        from legalrag.evaluation.plots import check_png_path

        check_png_path(plot)
    corpus = None
    if index is not None:
        from legalrag.wiring import Root

        corpus = Root().index(index)
    qs = load_queries(queries, corpus, QueryFields.parse(query_fields) if query_fields else None)
    loaded = {}
    for path in runs:
        name, ranked = load_run(path)
        while name in loaded:
            name += "'"
        loaded[name] = ranked
    result = compare_runs(loaded, {q.id: set(q.gold_ids) for q in qs}, k=k, depth=depth, trials=trials)
    if plot is not None:
        from legalrag.evaluation.plots import plot_curves

        plot_curves({r.name: r.recall_curve for r in result.runs}, plot,
                    title=f"Recall@K on {queries.name} ({result.n_queries} queries)")
    if as_json:
        print_json(result.to_dict())
        return
    from rich.console import Console
    from rich.table import Table

    keys = list(result.runs[0].means)
    table = Table(title=f"{len(result.runs)} runs on {queries.name} ({result.n_queries} queries); "
                        f"p: paired randomization test against {result.runs[0].name}")
    table.add_column("run")
    for key in keys:
        table.add_column(key, justify="right")
        table.add_column("p", justify="right")
    table.add_column("missing queries", justify="right")
    for r in result.runs:
        cells = []
        for key in keys:
            p = r.p_values.get(key)
            cells += [f"{r.means[key]:.4f}", "-" if p is None else (f"{p:.3f}" + (" *" if p < 0.05 else ""))]
        table.add_row(r.name, *cells, str(r.missing_queries))
    Console(width=160).print(table)
    if plot is not None:
        typer.echo(f"Recall@K curves drawn to {plot}")


@eval_app.command("fuse")
def eval_fuse(
    runs: List[Path] = typer.Argument(..., help="Run directories (`eval retrieval --out`) or TREC run files."),
    out: Path = typer.Option(..., "--out", help="Run directory to write (run.trec and a manifest)."),
    as_json: JsonOption = False,
    option: List[str] = option_list(FuseOptions, "The fusion, KEY=VALUE, repeatable"),
) -> None:
    """Fuse saved runs with reciprocal-rank fusion into a new run directory."""
    from legalrag.evaluation.runs import fuse_runs, load_run, save_run

    opts = parse_options(FuseOptions, option)
    rrf_k, depth = opts.rrf_k, opts.depth

    loaded: dict[str, dict[str, list[str]]] = {}
    for path in runs:
        name, ranked = load_run(path)
        while name in loaded:
            name += "'"
        loaded[name] = ranked
    w = list(opts.weights) if opts.weights else None
    fused = fuse_runs(loaded, k=rrf_k, weights=w, depth=depth)
    params = {"fused": [str(p) for p in runs], "names": list(loaded), "rrf_k": rrf_k, "weights": w, "depth": depth}
    save_run(out, fused, {}, params, tag="rrf")
    summary = {"out": str(out), "runs": list(loaded), "n_queries": len(fused), "rrf_k": rrf_k, "weights": w}
    if as_json:
        print_json(summary)
        return
    typer.echo(f"fused {len(loaded)} runs ({', '.join(loaded)}) over {len(fused)} queries into {out}")
