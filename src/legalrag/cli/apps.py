"""The shared Typer apps that command modules register on."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="Legal retrieval-augmented generation: search statutes, answer with checked citations, "
                       "draft judgments, predict citations, and evaluate all of it.")
index_app = typer.Typer(no_args_is_help=True, help="Build and inspect indexes.")
eval_app = typer.Typer(no_args_is_help=True, help="Evaluate retrieval, answers, judgments and citations.")
llm_app = typer.Typer(no_args_is_help=True, help="Local and remote language models.")
judgment_app = typer.Typer(no_args_is_help=True, help="Draft criminal judgments from case facts.")
ranker_app = typer.Typer(no_args_is_help=True, help="Train learned rankers.")

app.add_typer(index_app, name="index")
app.add_typer(eval_app, name="eval")
app.add_typer(llm_app, name="llm")
app.add_typer(judgment_app, name="judgment")
app.add_typer(ranker_app, name="ranker")
