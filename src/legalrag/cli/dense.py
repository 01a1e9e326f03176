"""`legalrag ranker train`: the LightGBM learned ranker over an index's BM25/dense/hybrid features.

(`index build --retriever dense|hybrid --encoder ...`, `search`/`eval retrieval --retriever ... --rerank
learned|none` live in cli/retrieval.py and reach this area through the index registry and the pipeline.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from legalrag.cli.apps import ranker_app
from legalrag.cli.common import IndexOption, JsonOption, ProgressOption, print_json, renamed, root


@ranker_app.command("train", cls=renamed({"--temperature": "--neighbour-temperature"}))
def ranker_train(
    ctx: typer.Context,
    index: IndexOption = None,
    queries: Path = typer.Option(..., "--queries", help="TRAINING query JSONL (query_id, query, gold_ids or gold_names)."),
    depth: int = typer.Option(50, "--depth", min=2, help="Candidates per query taken from --candidates."),
    rounds: int = typer.Option(150, "--rounds", min=1, help="LightGBM boosting rounds."),
    cv: int = typer.Option(0, "--cv", help="Also report K-fold cross-validated metrics on these queries (0: skip)."),
    k: int = typer.Option(10, "--k", min=1, help="Cut-off for the reported metrics."),
    cross: Optional[Path] = typer.Option(None, "--cross", help="A cross-encoder directory (`legalrag train "
                                         "reranker`) whose scores become three more features."),
    neighbours: int = typer.Option(0, "--neighbours", min=0, help="Remember the training queries: the K most "
                                   "similar ones vote for the articles they cite (five more features; 0: off)."),
    expand: int = typer.Option(20, "--expand", min=0, help="With --neighbours: best-voted articles added as "
                               "candidates when the first stage missed them."),
    temperature: float = typer.Option(0.02, "--neighbour-temperature", min=1e-4, help="With --neighbours: a neighbour's "
                                      "weight is exp((cosine - nearest cosine) / T)."),
    candidates: Optional[str] = typer.Option(None, "--candidates", help="Index component whose top DEPTH it "
                                             "reranks (default: hybrid, else the index's default); e.g. a "
                                             "fine-tuned dense component that beats the hybrid."),
    as_json: JsonOption = False,
    progress: ProgressOption = True,
) -> None:
    """Train the learned ranker on training queries and save it into INDEX/ranker."""
    index = root(ctx).index_path(index)
    from legalrag.evaluation.datasets import load_queries
    from legalrag.rerank.learned import cross_validate_for_index, train_for_index
    from legalrag.rerank.neighbours import settings_or_none
    from legalrag.wiring import make_reranker

    idx = root(ctx).open_index(index)
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
