"""Every figure's recorded command runs on today's tree: each ``command`` (``commands``, ``training``, ``cli``) of
bench/results/*.json names scripts that exist and options they take. A step that runs ``python bench/...py`` or
``python tools/...py`` is parsed by that script's own argparse parser (nothing runs); a ``legalrag ...`` step (or
``python -m legalrag ...``) is parsed by the CLI, its ``-o KEY=VALUE`` keys checked against those its ``--help``
lists. Steps are separated by ``&&``, ``;``, ``|`` and newlines; prose in
parentheses, after `` # `` or after ``, `` is not part of a step; other programs (git, make, pytest) are skipped."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import inspect
import io
import json
import re
import shlex
import sys
from pathlib import Path
from unittest import mock

import pytest
import typer.main
from typer._click.exceptions import UsageError  # Typer vendors its own click

from legalrag.cli import app
from unit.test_model_cards import parse as parse_cli

REPO = Path(__file__).resolve().parents[2]
RESULTS = sorted((REPO / "bench" / "results").glob("*.json"))

# where a step starts: a bench or tools script run by python, or the CLI
# where a step starts: at its head (after VAR=value, nice, time, do) or after prose ending in ": ", a bench or tools
# script run by python, or the CLI
RECORDED = ("command", "commands", "training", "cli")  # the fields that hold commands
START = re.compile(r"(?:^\s*(?:\w+=\S*\s+|nice\s+-n\s+\d+\s+|time\s+|do\s+)*|:\s+)"
                   r"((?:\.venv/bin/)?python3?\s+(?:-m\s+legalrag\s|bench/|tools/)|legalrag\s)")


def recorded_commands(data: object) -> list[str]:
    """The command strings (``RECORDED`` fields) anywhere in a result file."""
    found: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key in RECORDED and isinstance(value, (str, list)):
                found += [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)]
            else:
                found += recorded_commands(value)
    elif isinstance(data, list):
        for value in data:
            found += recorded_commands(value)
    return found


def steps(command: str) -> list[list[str]]:
    """The python-script and CLI steps of ``command``, each as its argument list from the program on."""
    text = command
    while True:  # drop prose in parentheses (innermost first), and $(...) substitutions with it
        stripped = re.sub(r"\([^()]*\)", " ", text)
        if stripped == text:
            break
        text = stripped
    out = []
    for line in text.splitlines():
        line = re.split(r"\s#\s", line)[0]
        for part in re.split(r"&&|;|\|", line):
            part = part.split(", ")[0]
            start = START.search(part)
            if start:
                out.append(shlex.split(part[start.start(1):]))
    return out


class _Parsed(Exception):
    """Raised from inside a script's ``parse_args`` once its parser accepted the arguments."""


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_recorded_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look a module up by name
    spec.loader.exec_module(module)
    return module


_MODULES: dict[Path, object] = {}


def parse_script(path: Path, args: list[str]) -> None:
    """Parse ``args`` with the script's argparse parser without running the script: its ``build_parser()`` where it
    has one, else its ``main()`` up to the parser's ``parse_args`` (stopped there). A SystemExit when they do not
    parse (argparse's own error)."""
    if "ArgumentParser" not in path.read_text(encoding="utf-8"):  # main() would run the script itself
        raise AssertionError(f"{path.name} has no argparse parser to check the arguments with")
    module = _MODULES.get(path) or _MODULES.setdefault(path, _load(path))
    if hasattr(module, "build_parser"):
        module.build_parser().parse_args(args)
        return
    original = argparse.ArgumentParser.parse_args

    def stop_after_parsing(self, given=None, namespace=None):
        original(self, args if given is None else given, namespace)
        raise _Parsed

    with mock.patch.object(argparse.ArgumentParser, "parse_args", stop_after_parsing), \
            mock.patch.object(sys, "argv", [str(path), *args]):
        try:
            module.main(args) if inspect.signature(module.main).parameters else module.main()
        except _Parsed:
            return
    raise AssertionError(f"{path.name}: main() returned without parsing its arguments")


def cli_command(words: list[str]):
    """The click command ``legalrag WORDS...`` names (WORDS after ``legalrag``) and its own arguments."""
    group = typer.main.get_command(app)
    while hasattr(group, "commands"):
        name, *words = words
        group = group.commands[name]
    return group, words


def unknown_option_keys(words: list[str]) -> list[str]:
    """The ``-o KEY=VALUE`` keys the command's ``--help`` does not list (its options model refuses them)."""
    command, args = cli_command(words)
    param = next((p for p in command.params if "-o" in p.opts), None)
    if param is None:
        return []
    listed = set(re.findall(r"(?:Keys: |; )(\w+): ", param.help or ""))
    given = command.make_context(command.name, list(args)).params.get(param.name) or ()
    return [pair.partition("=")[0].replace("-", "_") for pair in given
            if pair.partition("=")[0].replace("-", "_") not in listed]


def check_step(argv: list[str]) -> str | None:
    """None when the step parses today, else why not."""
    if argv[0] == "legalrag" or argv[1:3] == ["-m", "legalrag"]:
        line = shlex.join(["legalrag", *(argv[1:] if argv[0] == "legalrag" else argv[3:])])
        try:
            parse_cli(line)
        except UsageError as exc:
            return exc.format_message()
        unknown = unknown_option_keys(shlex.split(line)[1:])
        return f"no -o key {', '.join(unknown)} (see the command's --help)" if unknown else None
    script = REPO / argv[1]
    if not script.is_file():
        return f"no script {argv[1]}"
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
            parse_script(script, argv[2:])
    except SystemExit:
        return errors.getvalue().strip().splitlines()[-1] if errors.getvalue().strip() else "argparse exited"
    return None


CASES = [(path, command) for path in RESULTS for command in recorded_commands(json.loads(path.read_text("utf-8")))]


@pytest.mark.parametrize("path", RESULTS, ids=[p.name for p in RESULTS])
def test_every_recorded_command_parses_today(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    note = data.get("command_note", "")
    bad = []
    for command in recorded_commands(data):
        for argv in steps(command):
            if note and shlex.join(argv[:3]) in note:
                continue  # a computation today's tree no longer has: the note names the code that made the figure
            why = check_step(argv)
            if why:
                bad.append(f"{shlex.join(argv)}\n    -> {why}")
    assert not bad, f"{path.name}: recorded steps today's tree does not take:\n" + "\n".join(bad)


def test_a_kept_command_says_which_code_made_its_figure():
    for path in RESULTS:
        note = json.loads(path.read_text(encoding="utf-8")).get("command_note")
        if note is not None:
            assert "as measured" in note and re.search(r"\S+\.py", note), f"{path.name}: command_note {note!r}"


def test_the_results_record_commands_that_are_checked():
    checked = sum(len(steps(command)) for _, command in CASES)
    assert checked > 80, f"only {checked} steps found in bench/results/*.json: the step splitter is broken"


def test_steps_split_and_skip_prose_and_other_programs():
    command = ("LEGALRAG_HOME=$(mktemp -d) python bench/x.py --a 1 (then copied) && git status; "
               "for R in a b; do legalrag eval retrieval --retriever $R; done | tee log  # note: python tools/y.py\n"
               "after the fix: python tools/z.py --b, stopped at the deadline")
    assert steps(command) == [["python", "bench/x.py", "--a", "1"], ["legalrag", "eval", "retrieval", "--retriever",
                                                                     "$R"], ["python", "tools/z.py", "--b"]]


def test_a_removed_script_subcommand_or_option_is_caught():
    assert check_step(["python", "bench/bench_judgment_structure.py", "train"]) == \
        "no script bench/bench_judgment_structure.py"
    assert check_step(["python", "tools/results_page.py", "--no-such-option"])
    assert check_step(["python", "tools/results_page.py", "--check"]) is None
    assert check_step(["legalrag", "train", "judge-structure", "--no-such-option", "1"])
    assert check_step(["legalrag", "eval", "retrieval", "--queries", "q.jsonl", "-o", "k=10"]) is None
    assert check_step(["legalrag", "eval", "retrieval", "--queries", "q.jsonl", "-o", "depth=10"]) == \
        "no -o key depth (see the command's --help)"
