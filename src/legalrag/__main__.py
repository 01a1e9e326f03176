"""``python -m legalrag`` and the ``legalrag`` script: the command line, loading only the command module that
``ask`` or ``chat`` needs (their client path to a warm server starts in a fraction of a second)."""

from __future__ import annotations

import sys

FAST = {"ask": "ask", "chat": "chat"}  # command -> the one module it needs
GLOBAL_OPTIONS = ("--config", "--profile")  # the app's options that take a value, before the command


def command_of(argv: list[str]) -> str | None:
    """The command word of ``argv`` (the global options and their values skipped)."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in GLOBAL_OPTIONS:
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        return arg
    return None


def main() -> None:
    import legalrag

    command = command_of(sys.argv[1:])
    if command in FAST:
        legalrag._cli_commands = frozenset({FAST[command]})  # read by legalrag.cli when it registers commands
    from legalrag.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
