"""Run the real ``legalrag`` entry point in-process (exit code handling included), for CLI tests."""

from __future__ import annotations

import sys


def run_cli(monkeypatch, capsys, *args):
    """Returns (exit code, stdout, stderr)."""
    from legalrag.cli import main

    monkeypatch.setattr(sys, "argv", ["legalrag", *map(str, args)])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out = capsys.readouterr()
    return code, out.out, out.err
