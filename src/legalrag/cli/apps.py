"""The shared Typer apps that command modules register on."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="Legal retrieval-augmented generation: search statutes, answer with checked citations, "
                       "draft judgments, predict citations, and evaluate all of it.")
index_app = typer.Typer(no_args_is_help=True, help="Build and inspect indexes.")
eval_app = typer.Typer(no_args_is_help=True, help="Evaluate retrieval, answers, judgments and citations.")
llm_app = typer.Typer(no_args_is_help=True, help="Local and remote language models.")
judgment_app = typer.Typer(no_args_is_help=True, help="Draft criminal judgments from case facts.")
ranker_app = typer.Typer(no_args_is_help=True, help="Train learned rankers.")
config_app = typer.Typer(no_args_is_help=True, help="Saved settings: a TOML file with named profiles.")
train_app = typer.Typer(no_args_is_help=True, help="Train models: each shipped model by its recipe, encoders, "
                        "rerankers, the learned ranker, policies.")


@app.callback()
def _use_settings(
    ctx: typer.Context,
    config: Optional[Path] = typer.Option(None, "--config", help="Settings file (default: $LEGALRAG_CONFIG, else "
                                          "config.toml in the platform's config folder; `legalrag config path`)."),
    profile: Optional[str] = typer.Option(None, "--profile", help="Profile of the settings file to use (default: "
                                          "$LEGALRAG_PROFILE, else the file's `profile`)."),
) -> None:
    """Every command builds its collaborators with a ``wiring.Root`` carrying these settings."""
    from legalrag.wiring import Root

    if isinstance(ctx.obj, Root):  # handed in by a test or an embedding application
        ctx.obj.use_settings(config, profile)
    else:
        ctx.obj = Root(config=config, profile=profile)


app.add_typer(index_app, name="index")
app.add_typer(eval_app, name="eval")
app.add_typer(llm_app, name="llm")
app.add_typer(judgment_app, name="judgment")
app.add_typer(ranker_app, name="ranker")
app.add_typer(config_app, name="config")
app.add_typer(train_app, name="train")
