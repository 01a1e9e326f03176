"""`legalrag train scope-model`: the scope decision's recipe (``recipes.scope``), the model ``answer.scope``
reads (``data/models/scope/``)."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from legalrag.cli._options import option_list, parse_options
from legalrag.cli._train_options import ScopeModelOptions
from legalrag.cli.apps import train_app
from legalrag.cli.common import BenchIndexOption, root
from legalrag.cli.train._common import command_line



def recorded_command(command: str) -> str:
    """The command for the model's card, with the data folder written as $LEGALRAG_DATA (no machine's path)."""
    import os

    data = os.environ.get("LEGALRAG_DATA")
    return command.replace(data.rstrip("/"), "$LEGALRAG_DATA") if data else command


@train_app.command("scope-model")
def train_scope_model(
    ctx: typer.Context,
    messages: Path = typer.Option(Path("bench/data/scope-messages.jsonl"), "--messages",
                                  help="Messages with label in/out and split train/dev/test (JSONL)."),
    stard: Path = typer.Option(..., "--stard", help="STARD's train.jsonl (query_id, query), e.g. "
                               "$LEGALRAG_DATA/stard/train.jsonl: its dev questions choose the threshold."),
    split: Path = typer.Option(Path("bench/data/stard-split.json"), "--split",
                               help="The frozen STARD split (its dev ids are read)."),
    index: BenchIndexOption = None,
    out: Path = typer.Option(..., "--out", help="The model folder to write (the shipped one is "
                             "src/legalrag/data/models/scope)."),
    option: List[str] = option_list(ScopeModelOptions, "The recipe's settings, KEY=VALUE, repeatable"),
) -> None:
    """The scope model's recipe: logistic regression on the train messages (n-grams, legal vocabulary, the
    foreign-jurisdiction pattern, the index's retrieval scores), the threshold and C on dev; writes the model
    and its card."""
    from legalrag.retrieval.pipeline import build_pipeline, resolve_component
    from legalrag.training.recipes.scope import scope_model

    o = parse_options(ScopeModelOptions, option)
    try:
        c_grid = tuple(float(x) for x in o.c_grid.split(",") if x.strip())
    except ValueError:
        raise typer.BadParameter(f"c_grid takes numbers separated by commas, got {o.c_grid!r}", param_hint="'-o'")
    idx = root(ctx).index(index, progress=True, snapshot=True)
    pipe = build_pipeline(idx, retriever=resolve_component(idx, None))
    hits = list(pipe.search("劳动合同", k=1))
    scorer = hits[0].retriever if hits else ""
    log = lambda line: typer.echo(line, err=True)  # noqa: E731
    fit = scope_model(messages, stard, split, lambda q, k: list(pipe.search(q, k=k)), scorer, out,
                      c_grid=c_grid, max_in_declined=o.max_in_declined, stard_folds=o.stard_folds,
                      command=recorded_command(command_line(ctx)), log=log)
    for name, row in fit.metrics["dev"].items():
        typer.echo(f"{name}: C {row['C']}, threshold {row['threshold']}, dev out-of-scope declined "
                   f"{row['dev_out_declined']}, in-scope dev pool declined {row['dev_in_declined']}")
    d = fit.metrics["dev_routed"]
    typer.echo(f"dev as decided at run time: out-of-scope declined {d['out_of_scope_declined']}, in-scope messages "
               f"declined {d['in_scope_messages_declined']}, STARD dev declined "
               f"{d.get('stard_dev_declined_out_of_fold', d.get('stard_dev_declined'))}")
    typer.echo(f"wrote {out}")
