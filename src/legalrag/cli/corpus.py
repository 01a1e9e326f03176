"""`legalrag corpus update FOLDER`, `legalrag corpus rollback`: the national law from a newer checkout of the
dated-Markdown format, rebuilt incrementally (only the changed articles are encoded) into the user's data folder
and swapped in atomically; the shipped data stays read-only, and the previous corpus is kept for a rollback."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from legalrag.cli.apps import app
from legalrag.cli.common import JsonOption, print_json, root

corpus_app = typer.Typer(no_args_is_help=True, help="Update the national law from a newer checkout; roll back.")
app.add_typer(corpus_app, name="corpus")


@corpus_app.command("update")
def update(ctx: typer.Context,
           folder: Optional[Path] = typer.Argument(None, help="A checkout in the dated-Markdown format "
                                                   "(github.com/LawRefBook/Laws); default: the versions shipped "
                                                   "with legalrag (the law as of their snapshot)."),
           base: bool = typer.Option(True, "--base/--no-base", help="Reuse the shipped corpus's vectors and ids "
                                     "(--no-base: encode every article, e.g. with another encoder)."),
           json_out: JsonOption = False) -> None:
    """Read FOLDER, encode only the articles whose text is new, build the index of every version, and swap it
    in; prints what changed. Search it with `--index <home>/corpus/current/index` (or `legalrag config set
    index.path` to it): the path stays the same across updates and rollbacks."""
    from legalrag.errors import InputError
    from legalrag.national import national_law
    from legalrag.national_versions import update_corpus
    from legalrag.wiring import expand_components, make_encoder

    r = root(ctx)
    law = national_law() if base else None
    spec = law.encoder if law is not None else "stard-e5"
    encoder = r.encoder or make_encoder(spec, settings=r.settings, progress=not json_out)
    if law is not None and encoder.model_id != law.manifest["vectors"]["model_id"]:
        raise InputError(f"the shipped vectors belong to {law.manifest['vectors']['model_id']}, not to "
                         f"{encoder.model_id}; pass --no-base to encode every article with it", field="--base")
    result = update_corpus(r.settings.home, folder, encoder, expand_components(["hybrid"], [spec]), base=law,
                           progress=not json_out)
    if json_out:
        print_json({"directory": str(result.directory), "previous": str(result.previous or ""),
                    "laws_added": list(result.laws_added), "versions_added": list(result.versions_added),
                    "articles_changed": result.articles_changed, "laws_repealed": list(result.laws_repealed),
                    "encoded": result.encoded, "seconds": round(result.seconds, 2), "problems": result.problems})
        return
    for line in result.lines():
        typer.echo(line)


@corpus_app.command("rollback")
def rollback(ctx: typer.Context) -> None:
    """Return to the corpus before the last update (run again to undo the rollback)."""
    from legalrag.national_versions import rollback_corpus

    now, left = rollback_corpus(root(ctx).settings.home)
    typer.echo(f"now answering from {now}" + (f" (rolled back from {left})" if left else ""))
