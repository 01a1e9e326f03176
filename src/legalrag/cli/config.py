"""`legalrag config show | get | set | unset | profiles | path`: the saved settings (``legalrag.settings``)."""

from __future__ import annotations

from typing import Optional

import typer

from legalrag.cli.apps import config_app
from legalrag.cli.common import JsonOption, print_json, root

ProfileOption = typer.Option(None, "--profile", help="Write into this named profile ([profiles.NAME.*]) instead "
                             "of the top-level tables.")


def _file(ctx: typer.Context):
    from legalrag.settings import config_path

    return config_path(root(ctx).config)


@config_app.command("path")
def path_cmd(ctx: typer.Context) -> None:
    """Print the settings file in use (it need not exist yet)."""
    typer.echo(str(_file(ctx)))


@config_app.command("show")
def show_cmd(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Every setting in effect, where its value came from, and the variable that overrides it."""
    from legalrag.settings import KEYS

    from legalrag.settings import get_value

    s = root(ctx).settings
    rows = [{"key": k.name, "value": _shown(get_value(s, k.name)), "from": s.origin[k.name], "env": k.env,
             "help": k.help} for k in KEYS]
    if as_json:
        print_json({"file": str(s.file), "file_exists": bool(s.file and s.file.exists()), "profile": s.profile,
                    "settings": rows})
        return
    from rich.console import Console
    from rich.table import Table

    state = "" if s.file and s.file.exists() else " (does not exist yet: defaults and environment only)"
    t = Table(title=f"Settings from {s.file}{state}; profile: {s.profile or 'none'}")
    for col in ("key", "value", "from", "variable"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["key"], "" if r["value"] is None else str(r["value"]), r["from"], r["env"])
    Console().print(t)


def _shown(value):
    from pathlib import Path

    return str(value) if isinstance(value, Path) else value


@config_app.command("get")
def get_cmd(ctx: typer.Context, key: str = typer.Argument(..., help="A dotted key, e.g. index.path (see "
                                                              "`legalrag config show`)."),
            as_json: JsonOption = False) -> None:
    """Print KEY's value in effect (nothing when unset), for scripts: `legalrag config get index.path`."""
    from legalrag.settings import get_value

    s = root(ctx).settings
    value = _shown(get_value(s, key))
    if as_json:
        print_json({"key": key, "value": value, "from": s.origin[key]})
    elif value is not None:
        typer.echo(value)


@config_app.command("profiles")
def profiles_cmd(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """The profiles the settings file defines and the built-in ones; the active one is marked with *."""
    from legalrag.settings import profiles

    found = profiles(_file(ctx))
    names = [name for name, _ in found]
    active = root(ctx).settings.profile
    if as_json:
        print_json({"profiles": names, "active": active})
        return
    if not names:
        typer.echo("no profiles; add one with `legalrag config set --profile NAME KEY VALUE`")
    for name, built_in in found:
        typer.echo(f"{'*' if name == active else ' '} {name}{' (built in)' if built_in else ''}")


@config_app.command("set")
def set_cmd(ctx: typer.Context, key: str = typer.Argument(..., help="A dotted key, e.g. llm.endpoint (see "
                                                              "`legalrag config show`)."),
            value: str = typer.Argument(...), profile: Optional[str] = ProfileOption) -> None:
    """Save KEY = VALUE in the settings file, keeping its comments and order; a relative path is saved absolute."""
    from legalrag.settings_edit import set_value

    path = _file(ctx)
    typed = set_value(path, key, value, profile or root(ctx).profile)
    scope = f" (profile {profile or root(ctx).profile})" if (profile or root(ctx).profile) else ""
    typer.echo(f"{key} = {typed!r}{scope} saved in {path}")


@config_app.command("unset")
def unset_cmd(ctx: typer.Context, key: str = typer.Argument(...), profile: Optional[str] = ProfileOption) -> None:
    """Remove KEY from the settings file (the default or the environment applies again)."""
    from legalrag.settings_edit import unset_value

    path = _file(ctx)
    removed = unset_value(path, key, profile or root(ctx).profile)
    typer.echo(f"{key} removed from {path}" if removed else f"{key} was not set in {path}")
