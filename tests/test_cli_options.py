"""The LLM options that many commands share (declared once in ``cli/common.py``) keep their names, defaults,
checks and help text in every command's ``--help``."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from legalrag.cli import app

runner = CliRunner()

SHARED = {  # option -> (default, the help a user reads)
    "--model": (None, "Embedded model: qwen2.5-1.5b (default), qwen2.5-0.5b or a GGUF path."),
    "--endpoint": (None, "OpenAI-compatible endpoint URL (instead of the embedded model)."),
    "--endpoint-model": (None, "Model name at --endpoint."),
    "--threads": (None, "CPU threads of the embedded model (default: all cores)."),
}
COMMANDS = {  # command -> the shared options it takes
    "ask": ["--model", "--endpoint", "--endpoint-model", "--threads"],
    "chat": ["--model", "--endpoint", "--endpoint-model"],
    "qa": ["--model", "--endpoint", "--endpoint-model"],
    "eval mcq": ["--model", "--endpoint", "--endpoint-model"],
    "judgment draft": ["--model", "--endpoint", "--endpoint-model"],
    "cite": ["--endpoint", "--endpoint-model"],
    "eval consultation-generate": ["--model", "--endpoint", "--endpoint-model", "--threads"],
    "agents rollouts": ["--endpoint", "--endpoint-model", "--threads"],
    "serve": ["--endpoint-model", "--threads"],
    "llm serve": ["--threads"],
}


def _command(path: str):
    cmd = typer.main.get_command(app)
    for name in path.split():
        cmd = cmd.commands[name]
    return cmd


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_shared_llm_options_keep_name_default_and_help(path):
    params = {p.opts[0]: p for p in _command(path).params if p.opts}
    for opt in COMMANDS[path]:
        default, help_text = SHARED[opt]
        assert params[opt].default == default and params[opt].help == help_text, (path, opt)
    if "--threads" in COMMANDS[path]:
        assert params["--threads"].min == 1


@pytest.mark.parametrize("path", ["ask", "judgment draft", "eval consultation-generate"])
def test_help_lists_the_shared_options(path):
    result = runner.invoke(app, [*path.split(), "--help"], env={"COLUMNS": "250", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for opt in COMMANDS[path]:
        assert any(f" {opt} " in line and SHARED[opt][1] in line for line in lines), (path, opt)


def test_threads_below_one_is_a_usage_error():
    result = runner.invoke(app, ["ask", "what is theft", "--threads", "0"], env={"COLUMNS": "250"})
    assert result.exit_code == 2 and "--threads" in result.output


def test_progress_switch_is_shared():
    for path in ["eval retrieval", "eval cite", "train encoder", "eval consultation-judge"]:
        params = {p.name: p for p in _command(path).params}
        assert params["progress"].opts == ["--progress"] and params["progress"].secondary_opts == ["--no-progress"]
        assert params["progress"].default is True
