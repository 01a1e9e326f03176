"""The ``legalrag`` command line: a thin Typer app.

Each area keeps its commands in its own module in this package (``cli/retrieval.py``, ``cli/llm.py``...),
registered on the shared apps from ``cli/apps.py``. Modules are discovered here, so adding an area touches
no shared file. Command bodies import heavy code lazily, so ``legalrag --help`` stays fast.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

from legalrag.cli.apps import app
from legalrag.errors import LegalRagError


def _load_commands() -> None:
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if mod.name not in ("apps", "common") and not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")


_load_commands()


def main() -> None:
    """Entry point: LegalRagError becomes a one-line message on stderr and exit code 1."""
    try:
        app(standalone_mode=False)
    except LegalRagError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    except SystemExit:
        raise
    except Exception as exc:  # click's usage errors and aborts
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Abort):
            sys.exit(130)
        raise
