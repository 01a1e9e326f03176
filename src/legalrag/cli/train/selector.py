"""`legalrag train selector`: the decisive-article selector's recipe (``recipes.selector``), the model
``answer.select`` reads (``data/models/selector``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import option_list, parse_options
from legalrag.cli._train_options import SelectorOptions
from legalrag.cli.apps import train_app
from legalrag.cli.common import BenchIndexOption, root
from legalrag.cli.train._common import command_line



@train_app.command("selector")
def train_selector_command(
    ctx: typer.Context,
    split: Path = typer.Option(..., "--split", help="The frozen split: bench/data/stard-split.json (query ids per "
                               "part, with --queries), or a folder with train.jsonl and dev.jsonl (query_id, query, "
                               "gold_ids); the test part is not read."),
    queries: Optional[Path] = typer.Option(None, "--queries", help="STARD's questions (e.g. "
                                           "$LEGALRAG_DATA/stard/train.jsonl), when --split is a file of ids."),
    index: BenchIndexOption = None,
    out: Path = typer.Option(..., "--out", help="The model directory to write (replaced atomically; the shipped "
                             "one is src/legalrag/data/models/selector)."),
    option: List[str] = option_list(SelectorOptions, "The recipe's settings, KEY=VALUE, repeatable"),
) -> None:
    """The selector's recipe: the default index's top candidates of the dev questions, features with the support
    pair model, a logistic or LightGBM model chosen by cross-fitted hit@1, Platt calibration and the threshold
    of `chosen` on dev out of fold; the final model fitted on all of dev."""
    from legalrag.answer.select import IndexedSupport, dense_component, write_model
    from legalrag.retrieval.pipeline import build_pipeline
    from legalrag.training.pack import model_card_markdown
    from legalrag.training.recipes.selector import CARD, train_selector

    o = parse_options(SelectorOptions, option)
    r = root(ctx)
    idx = r.index(index, progress=True, snapshot=True)
    pipeline = build_pipeline(idx)
    support = r.make_support_scorer(o.support, threads=o.threads)
    dense = dense_component(idx)
    if dense is not None and support.encoder is not None:  # as the selector scores at question time
        support = IndexedSupport(support, dense)
    log = lambda line: typer.echo(line, err=True)  # noqa: E731
    fit = train_selector(split, lambda q, k: list(pipeline.search(q, k=k)), support, lambda i: str(
        idx.get(i).metadata.get("law", "")), depth=o.depth, n_folds=o.folds, seed=o.seed, k=o.k,
        max_empty=o.max_empty, lightgbm=o.lightgbm, neighbours=o.neighbours, temperature=o.temperature,
        encoder_name="stard-e5", queries=queries, cache=o.cache, log=log)
    command = command_line(ctx)
    data = os.environ.get("LEGALRAG_DATA")
    if data and len(data) > 1:  # the card names the shared data folder, not this machine's path
        command = command.replace(data, "$LEGALRAG_DATA")
    card = {**CARD, "command": command, "figures": {f"dev (cross-fitted): {k}": v for k, v in fit.figures.items()
                                                      if not isinstance(v, (dict, list))}}
    write_model(out, fit.model, card, readme=model_card_markdown)
    f = fit.figures
    typer.echo(f"model {f['model']}: dev out-of-fold hit@1 {f['dev_oof_hit@1']} (retrieval order "
               f"{f['dev_retrieval_hit@1']}), hit@3 {f['dev_oof_hit@3']} ({f['dev_retrieval_hit@3']}); "
               f"threshold {f['threshold']} ({f['dev_oof_nothing_chosen']} of dev with nothing chosen)")
    typer.echo(f"wrote {out} in {fit.seconds:.0f} s")
