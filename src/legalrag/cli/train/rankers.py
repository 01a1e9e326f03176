"""`legalrag train reranker / ranker`: a cross-encoder reranker from a retrieval backbone, and the learned
ranker of an index (``rerank/learned.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from legalrag.cli._options import option_list, parse_options
from legalrag.cli._train_options import RankerOptions, TrainRerankerOptions
from legalrag.cli.apps import train_app
from legalrag.cli.common import IndexOption, JsonOption, ProgressOption, print_json, root
from legalrag.cli.train._common import load, rankers, report, start_model


@train_app.command("reranker")
def train_reranker_cmd(
    ctx: typer.Context,
    index: IndexOption = None,
    queries: Path = typer.Option(..., "--queries", help="Training query JSONL."),
    out: Path = typer.Option(..., "--out", help="Output directory (use INDEX/cross for `--rerank cross`)."),
    start: str = typer.Option("e5-small", "--start", help="Backbone: e5-small or a model directory (e.g. a trained encoder)."),
    as_json: JsonOption = False,
    progress: ProgressOption = True,
    option: List[str] = option_list(TrainRerankerOptions, "Hyperparameters (RerankerSettings) and the run, "
                                                          "KEY=VALUE, repeatable"),
) -> None:
    """Train a cross-encoder reranker (`--rerank cross:DIR`) from a retrieval backbone."""
    opts = parse_options(TrainRerankerOptions, option)
    index = root(ctx).index_path(index)
    from dataclasses import fields

    from legalrag.training.reranker import RerankerSettings, train_reranker

    idx, qs = load(ctx, index, queries, opts.query_fields)
    settings = RerankerSettings(**opts.model_dump(include={f.name for f in fields(RerankerSettings)}))
    base = start_model(start, root(ctx).settings.home)
    from legalrag.retrieval.encoders_onnx import st_prompts

    record = train_reranker(base, out, qs, idx.documents, rankers(idx, opts.mine), settings, progress=progress,
                            restart=opts.restart, query_prefix=st_prompts(base).get("query_prefix", ""),
                            device=opts.device)
    report(record, out, as_json)


@train_app.command("ranker")
def ranker_train(
    ctx: typer.Context,
    index: IndexOption = None,
    queries: Path = typer.Option(..., "--queries", help="TRAINING query JSONL (query_id, query, gold_ids or gold_names)."),
    as_json: JsonOption = False,
    progress: ProgressOption = True,
    option: List[str] = option_list(RankerOptions, "The candidates, the boosting, the cross-encoder and the "
                                                   "question memory, KEY=VALUE, repeatable"),
) -> None:
    """Train the learned ranker on training queries and save it into INDEX/ranker."""
    o = parse_options(RankerOptions, option)
    depth, rounds, cv, k, neighbours, expand = o.depth, o.rounds, o.cv, o.k, o.neighbours, o.expand
    temperature, candidates = o.neighbour_temperature, o.candidates
    cross = Path(o.cross) if o.cross is not None else None
    index = root(ctx).index_path(index)
    from legalrag.evaluation.datasets import load_queries
    from legalrag.rerank.learned import cross_validate_for_index, train_for_index
    from legalrag.rerank.neighbours import settings_or_none
    from legalrag.wiring import make_reranker

    idx = root(ctx).index(index)
    qs = load_queries(queries, idx)
    cross_model = make_reranker(f"cross:{cross}") if cross is not None else None
    memory = settings_or_none(neighbours, expand=expand, temperature=temperature)
    summary: dict = {"index": str(index), "queries": str(queries), "n_queries": len(qs), "depth": depth,
                     "cross": str(cross) if cross else None, "neighbours": neighbours, "expand": expand,
                     "temperature": temperature}
    if cv:
        summary["cv"] = {"folds": cv, **cross_validate_for_index(idx, qs, k_folds=cv, depth=depth, rounds=rounds,
                                                                 k=k, progress=progress, cross=cross_model,
                                                                 neighbours=memory, candidates=candidates)}
    ranker = train_for_index(idx, qs, depth=depth, rounds=rounds, progress=progress, cross=cross_model,
                             neighbours=memory, candidates=candidates)
    summary.update({"ranker": str(Path(index) / "ranker"), "features": ranker.spec["features"],
                    "candidates": ranker.spec["candidates"]})
    if as_json:
        print_json(summary)
        return
    typer.echo(f"trained the learned ranker on {len(qs)} queries ({len(ranker.spec['features'])} features, "
               f"candidates from {ranker.spec['candidates']}, depth {depth}"
               + (f", a memory of {len(qs)} questions, {neighbours} voting, up to {expand} extra candidates"
                  if neighbours else "") + f"); saved to {summary['ranker']}")
    if cv:
        m = summary["cv"]
        typer.echo(f"{cv}-fold CV: " + ", ".join(f"{key} {m[key]:.4f}" for key in
                                                  (f"recall@{k}", f"mrr@{k}", f"ndcg@{k}", f"hit@{k}")))
