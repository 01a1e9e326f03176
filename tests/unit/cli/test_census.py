"""The options that many commands share (declared once in ``cli/common.py``) keep their names, defaults,
checks and help text in every command's ``--help``; the old spellings of the commands that dropped them are
gone."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from legalrag.cli import app

runner = CliRunner()

from legalrag.cli.common import BENCH_INDEX_HELP, DEFAULT_INDEX_HELP, LLM_HELP

SHARED = {  # option -> (default, the help a user reads)
    "--model": (None, "Embedded model: qwen2.5-coder-1.5b (default), qwen2.5-coder-0.5b or a GGUF path."),
    "--model SPEC": (None, LLM_HELP),
    "--threads": (None, "CPU threads of the model or encoder (default: the runtime.threads setting, else all cores)."),
    "--index": (None, "Index directory (default: the index.path setting)."),
    "--index DEFAULT": (None, DEFAULT_INDEX_HELP),
    "--index BENCH": (None, BENCH_INDEX_HELP),  # the benchmarks: the 2023-06-05 snapshot their gold ids refer to
    "--json": (False, "Print JSON instead of text."),
}
COMMANDS = {  # command -> the shared options it takes
    "ask": ["--model SPEC", "--json"],
    "chat": ["--model SPEC", "--json"],
    "qa": ["--model SPEC", "--json"],
    "search": ["--model SPEC", "--index DEFAULT", "--json"],
    "eval retrieval": ["--model SPEC", "--index BENCH", "--json"],
    "eval mcq": ["--model SPEC", "--json"],
    "eval conversation": ["--model SPEC", "--index BENCH", "--json"],
    "eval answers": ["--model SPEC", "--index BENCH", "--json"],
    "eval consultation-judge": ["--model SPEC"],
    "judgment draft": ["--model SPEC", "--json"],
    "judgment predict": ["--model SPEC"],
    "cite": ["--model SPEC", "--json"],
    "eval cite": ["--model SPEC", "--json"],
    "eval consultation-generate": ["--model SPEC", "--index BENCH"],
    "agents rollouts": ["--model SPEC", "--index DEFAULT", "--json"],
    "mcp": ["--model SPEC", "--index DEFAULT"],
    "serve": ["--model SPEC"],
    "index build": ["--threads"],
    "index info": ["--index DEFAULT", "--json"],
    "train ranker": ["--index", "--json"],
    "train encoder": ["--index", "--json"],
    "llm info": ["--json"],
    "config show": ["--json"],
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
        name = opt.split()[0]
        assert params[name].default == default and params[name].help == help_text, (path, opt)
    if "--threads" in COMMANDS[path]:
        assert params["--threads"].min == 1


@pytest.mark.parametrize("path", ["ask", "judgment draft", "eval consultation-generate"])
def test_help_lists_the_shared_options(path):
    result = runner.invoke(app, [*path.split(), "--help"], env={"COLUMNS": "400", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    text = " ".join(" ".join(line.strip(" │") for line in result.output.splitlines()).split())
    for opt in COMMANDS[path]:
        assert f"{opt.split()[0]} " in text and SHARED[opt][1] in text, (path, opt)


def test_threads_below_one_is_a_usage_error():
    result = runner.invoke(app, ["index", "build", "--corpus", "c.jsonl", "--out", "idx", "--threads", "0"],
                           env={"COLUMNS": "250"})
    assert result.exit_code == 2 and "--threads" in result.output


def test_progress_switch_is_shared():
    for path in ["eval retrieval", "eval cite", "train encoder", "eval consultation-judge", "eval answers"]:
        params = {p.name: p for p in _command(path).params}
        assert params["progress"].opts == ["--progress"] and params["progress"].secondary_opts == ["--no-progress"]
        assert params["progress"].default is True


def test_json_always_means_the_output_format():
    """`--json` is a flag printing JSON in every command, never an option taking a file."""
    import typer.main

    def walk(group, prefix=()):
        for name, cmd in group.commands.items():
            if hasattr(cmd, "commands"):
                yield from walk(cmd, prefix + (name,))
            else:
                yield " ".join(prefix + (name,)), cmd

    for path, cmd in walk(typer.main.get_command(app)):
        for p in cmd.params:
            if "--json" in getattr(p, "opts", []):
                assert p.is_flag and p.default is False, path


def test_trained_folders_are_model_dir(tmp_path):
    for path in ["cite", "eval cite", "judgment predict", "judgment draft"]:
        opts = {o for p in _command(path).params for o in getattr(p, "opts", [])}
        assert "--model-dir" in opts, path
    serve = {o for p in _command("serve").params for o in getattr(p, "opts", [])}
    assert {"--cite-model-dir", "--judgment-model-dir"} <= serve
    assert not {"--cite-model", "--judgment-model"} & serve and not getattr(_command("serve"), "aliases", None)
    # the old `cite --model DIR` (a citation model folder) and `--llm NAME` are gone: --model names the LLM
    assert "--llm" not in {o for p in _command("cite").params for o in p.opts}


def _all_commands(group=None, prefix=()):
    group = group or typer.main.get_command(app)
    for name, cmd in group.commands.items():
        if hasattr(cmd, "commands"):
            yield from _all_commands(cmd, prefix + (name,))
        else:
            yield " ".join(prefix + (name,)), cmd


DROPPED = {  # command -> old spellings no longer accepted
    "eval retrieval": ["--run-out"], "eval consultation-generate": ["--sample"],
    "eval consultation-compare": ["--json-out"], "eval consultation-judge": ["--limit-turns"],
    "cite": ["--cases", "--rerank", "--no-rerank", "--llm"],
    "eval cite": ["--save-model", "--rerank", "--no-rerank", "--llm"],
    "judgment predict": ["--skip-first", "--encoder"], "judgment draft": ["--encoder"],
    "mcp": ["--llm-cache", "--no-llm-cache"], "agents rollouts": ["--first"],
}


@pytest.mark.parametrize("path", sorted(DROPPED))
def test_the_dropped_old_spellings_are_usage_errors(path):
    cmd = _command(path)
    assert not getattr(cmd, "aliases", None), path
    opts = {o for p in cmd.params for o in [*getattr(p, "opts", []), *getattr(p, "secondary_opts", [])]}
    for old in DROPPED[path]:
        assert old not in opts, (path, old)
    res = runner.invoke(app, [*path.split(), DROPPED[path][0], "x"])
    assert res.exit_code == 2 and "No such option" in res.output, res.output


def result_help(path: str) -> str:
    res = runner.invoke(app, [*path.split(), "--help"], env={"COLUMNS": "250", "NO_COLOR": "1"})
    assert res.exit_code == 0, res.output
    return " ".join(w for w in res.output.split() if w.startswith("--"))


def test_no_option_name_carries_two_meanings():
    """The census (tools/cli_options.py): every declaration of a name takes the same kind of value."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("cli_options", Path(__file__).parents[3] / "tools" / "cli_options.py")
    census = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(census)
    result = census.count()
    assert result["names_with_two_meanings"] == 0, result["two_meanings"]
    assert not set(DROPPED) & set(result["aliases"])
