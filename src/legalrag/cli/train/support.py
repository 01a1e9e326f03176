"""`legalrag train support-model`: the citation support model's recipe (``recipes.support``), the logistic model
``citecheck.support`` reads (``data/citations/support_model.json``)."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from legalrag.cli._options import option_list, parse_options
from legalrag.cli._train_options import SupportModelOptions
from legalrag.cli.apps import train_app
from legalrag.cli.common import BenchIndexOption, root
from legalrag.cli.train._common import command_line


@train_app.command("support-model")
def train_support_model(
    ctx: typer.Context,
    corpus: Path = typer.Option(..., "--corpus", help="The statute corpus JSONL the split's gold ids name (e.g. "
                                "$LEGALRAG_DATA/stard/corpus.jsonl)."),
    split: Path = typer.Option(..., "--split", help="The frozen split: its JSON of query ids (bench/data/stard-split."
                               "json; the questions are train.jsonl beside --corpus, as in STARD's folder), or a "
                               "folder with train.jsonl, dev.jsonl and test.jsonl (query_id, query, gold_ids, answer)."),
    index: BenchIndexOption = None,  # retrieves the hard negatives (default: the shipped national law's index)
    out: Path = typer.Option(..., "--out", help="The model file to write (replaced atomically; the shipped one is "
                             "src/legalrag/data/citations/support_model.json)."),
    option: List[str] = option_list(SupportModelOptions, "The recipe's settings, KEY=VALUE, repeatable"),
) -> None:
    """The support model's recipe: labelled (claim, article) pairs from the lawyers' answers (hard negatives: the
    index's top retrieved non-gold articles and the gold article of the neighbouring question), the clause-level
    lexical model fitted on train, the full model (its logit + the encoder's cosine) on dev, which the encoder never
    saw, thresholds on dev, figures on test."""
    from legalrag.training.recipes import support_model

    o = parse_options(SupportModelOptions, option)
    r = root(ctx)
    encoder = None if o.lexical_only else r.make_encoder(o.encoder, progress=True)
    log = lambda line: typer.echo(line, err=True)  # noqa: E731
    fit = support_model(corpus, split, lambda: r.index(index, snapshot=True), out, encoder=encoder,
                        encoder_name=o.encoder, negatives=o.negatives, train_limit=o.train_limit,
                        min_precision=o.min_precision, hand=o.hand, cache=o.cache, df=o.df,
                        command=command_line(ctx), log=log)
    typer.echo("pairs: " + ", ".join(f"{p} {c['pairs']} ({c['positives']} positive)" for p, c in fit.pairs.items()))
    for name, m in fit.models.items():
        t = fit.model_file["test"][name]
        typer.echo(f"{name}: threshold {m['threshold']}, test precision {t['precision']}, recall {t['recall']}")
    typer.echo(f"wrote {out}")
