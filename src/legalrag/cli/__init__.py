"""The ``legalrag`` command line: a thin Typer app.

Each area keeps its commands in its own module in this package (``cli/retrieval.py``, ``cli/llm.py``...),
registered on the shared apps from ``cli/apps.py``. Modules are discovered here, so adding an area touches
no shared file. Command bodies import heavy code lazily, so ``legalrag --help`` stays fast. ``ask`` and
``chat`` load only their own module when the entry point (``legalrag.__main__.main``) says so: the other
command modules' imports cost about a second on a busy 2-core machine, before a warm server's first article.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

from legalrag.cli.apps import app
from legalrag.errors import LegalRagError


def _load_commands(only: frozenset[str] | None = None) -> None:
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if mod.name not in ("apps", "common") and not mod.name.startswith("_") and (only is None or mod.name in only):
            importlib.import_module(f"{__name__}.{mod.name}")


def _wanted() -> frozenset[str] | None:
    # The entry point names the one command module a process needs (``legalrag.__main__``); a module attribute,
    # not an environment variable, so that a process this one starts (the background server) loads them all.
    import legalrag

    return getattr(legalrag, "_cli_commands", None)


_load_commands(_wanted())


def main() -> None:
    """Entry point: LegalRagError becomes a one-line message on stderr and exit code 1."""
    try:
        app(standalone_mode=False)
    except LegalRagError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    except SystemExit:
        raise
    except Exception as exc:  # usage errors (a bad option value: exit 2, as click does) and aborts
        import typer

        if isinstance(exc, typer.Abort):
            sys.exit(130)
        show, code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if callable(show) and isinstance(code, int):  # click's / Typer's ClickException
            show()
            sys.exit(code)
        raise
