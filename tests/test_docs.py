"""The user documents stay true: the README is short and its commands run, docs/cli.md is what the app says,
and every code block of README.md and docs/ (not docs/lab/) runs in a test or is marked illustrative."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```\s*$", re.M | re.S)
# pages whose blocks another test runs or checks: page -> that test
RUN_ELSEWHERE = {"docs/integrations.md": "tests/test_integrations_docs.py",
                 "docs/architecture.md": "tests/test_architecture.py"}
DATA = ("jsonl", "json", "toml")  # a data block: written to the file it names, or parsed


def blocks(path: Path) -> list[tuple[str, str, int]]:
    text = path.read_text(encoding="utf-8")
    return [(m.group(1).strip(), m.group(2), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md"))]


def test_readme_is_short():
    n = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert n <= 200, f"README.md has {n} lines; the reference belongs in docs/cli.md"


def test_cli_reference_is_generated_from_the_app():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "cli_docs.py"), "--check"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_code_block_runs_or_is_marked_illustrative(page):
    rel = str(page.relative_to(ROOT))
    for info, body, line in blocks(page):
        words = info.split()
        if "illustrative" in words:
            continue
        if rel in RUN_ELSEWHERE:
            assert rel in (ROOT / RUN_ELSEWHERE[rel]).read_text(encoding="utf-8"), (rel, RUN_ELSEWHERE[rel])
            continue
        assert words and words[0] in ("bash", "python", *DATA), (
            f"{rel}:{line}: a code block must say its language (bash, python, jsonl FILE...) and run in "
            "tests/test_docs.py, or be marked ```bash illustrative")
        if words[0] == "bash":
            assert rel == "README.md", f"{rel}:{line}: only README.md's bash blocks are run here; mark it illustrative"
        if words[0] == "bash":
            for cmd in _commands(body):
                assert cmd[0] == "legalrag", f"{rel}:{line}: {' '.join(cmd)} is not a legalrag command"


def _commands(body: str) -> list[list[str]]:
    out = []
    for raw in body.splitlines():
        args = shlex.split(raw, comments=True)
        if args:
            out.append(args)
    return out


def test_the_readme_commands_run(tmp_path, monkeypatch):
    """The README's runnable blocks, in order, in an empty folder with fresh settings and cache: a data block
    (```jsonl FILE) is written to FILE, each `legalrag ...` line is run and must succeed."""
    from legalrag.cli import app

    monkeypatch.chdir(tmp_path)
    env = {"LEGALRAG_CONFIG": str(tmp_path / "config.toml"), "LEGALRAG_HOME": str(tmp_path / "home"),
           "COLUMNS": "200", "NO_COLOR": "1"}
    for var in ("LEGALRAG_INDEX", "LEGALRAG_PROFILE", "LEGALRAG_MODEL", "LEGALRAG_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    ran = []
    for info, body, line in blocks(ROOT / "README.md"):
        words = info.split()
        if "illustrative" in words or not words:
            continue
        if words[0] in DATA and len(words) > 1:
            (tmp_path / words[1]).write_text(body, encoding="utf-8")
            continue
        for cmd in _commands(body):
            res = CliRunner().invoke(app, cmd[1:], env=env)
            assert res.exit_code == 0, f"README.md:{line}: {shlex.join(cmd)}\n{res.output}\n{res.exception!r}"
            ran.append((cmd, res.output))
    outputs = {" ".join(c): out for c, out in ran}
    assert "中华人民共和国民法典" in outputs['legalrag search 借款合同没有约定利息 --index idx/mine --k 1']
    assert outputs["legalrag config get answer.k"].strip() == "8"
    assert "answers by default" in outputs["legalrag index info"]
    assert len(ran) >= 9
