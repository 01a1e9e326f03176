"""Every leaf command's help tells the truth about its options: the default index is named as the code opens it,
a default a help text states is the parameter's default, a ``[default: X]`` shown is the parameter's default,
and no help names an option its command does not have."""

from __future__ import annotations

import re

import pytest
import typer.main

from legalrag.cli import app
from legalrag.cli.cite import CITE_INDEX_HELP
from legalrag.cli.common import BENCH_INDEX_HELP, DEFAULT_INDEX_HELP

ROOT = typer.main.get_command(app)
GLOBAL = {o for p in ROOT.params for o in p.opts}


def _leaves(group=ROOT, prefix=()):
    for name, cmd in group.commands.items():
        if hasattr(cmd, "commands"):
            yield from _leaves(cmd, prefix + (name,))
        else:
            yield " ".join(prefix + (name,)), cmd


LEAVES = dict(_leaves())


def _opts(cmd) -> set[str]:
    return {o for p in cmd.params for o in [*getattr(p, "opts", []), *getattr(p, "secondary_opts", [])]}


def _visible(cmd):
    return [p for p in cmd.params if not getattr(p, "hidden", False) and p.name != "help"]


# Commands that open the default index when --index is not given (``Root.index(None)``: the index.path setting,
# else the national-law index), and the two whose default is the criminal law the shipped citation model reads.
DEFAULT_INDEX = {"search", "index info", "check", "mcp", "agents rollouts"}
# The benchmarks' default: the 2023-06-05 snapshot their gold ids refer to (``Root.index(None, snapshot=True)``).
BENCH_INDEX = {"eval retrieval", "eval answers", "eval conversation", "eval consultation-generate", "train selector",
               "train scope-model", "train support-model", "train policy"}
CRIMINAL_LAW_INDEX = {"cite", "eval cite"}


def test_the_walk_sees_every_area():
    assert {"search", "eval retrieval", "eval cite", "index build", "judgment draft", "config set"} <= set(LEAVES)


@pytest.mark.parametrize("path", sorted(DEFAULT_INDEX | BENCH_INDEX | CRIMINAL_LAW_INDEX))
def test_index_help_names_the_default_the_code_opens(path):
    index = next(p for p in LEAVES[path].params if "--index" in getattr(p, "opts", []))
    assert index.default is None
    expected = CITE_INDEX_HELP if path in CRIMINAL_LAW_INDEX else BENCH_INDEX_HELP if path in BENCH_INDEX \
        else DEFAULT_INDEX_HELP
    assert index.help == expected, path


def test_no_index_help_claims_the_statute_sample():
    """The sample is the default only in an install without the national-law data; no help says otherwise."""
    for path, cmd in LEAVES.items():
        for p in cmd.params:
            if "--index" in getattr(p, "opts", []):
                assert "statute sample" not in (p.help or ""), path


@pytest.mark.parametrize("path", sorted(LEAVES))
def test_a_stated_default_is_the_parameters_default(path):
    """A help text that says ``(default N)`` or ``(default: N)`` for a number, or ``[default: X]``, names the value
    the parameter really defaults to."""
    for p in _visible(LEAVES[path]):
        text = p.help or ""
        for m in re.finditer(r"\[default: ([^\]]+)\]", text):
            assert m.group(1) == str(p.default), (path, p.name, m.group(0), p.default)
        if getattr(p, "default", None) is None or isinstance(p.default, (list, tuple)):
            continue  # a default from the settings or computed at run time, described in words
        m = re.search(r"\(default:? (-?\d+(?:\.\d+)?)[),;]", text)
        if m and "-o" not in p.opts:
            assert float(m.group(1)) == float(p.default), (path, p.name, m.group(0), p.default)


@pytest.mark.parametrize("path", sorted(LEAVES))
def test_the_default_shown_in_help_is_the_parameters(path):
    """What ``--help`` shows after an option (``[default: X]``) comes from the parameter itself."""
    cmd = LEAVES[path]
    ctx = cmd.make_context(path, [], resilient_parsing=True)
    for p in _visible(cmd):
        if getattr(p, "param_type_name", "") != "option" or not getattr(p, "show_default", False):
            continue
        record = p.get_help_record(ctx)
        shown = re.search(r"\[default: ([^\]]+)\]", record[1] if record else "")
        if shown and not p.is_flag and not isinstance(p.default, (list, tuple)):
            value = p.default.value if hasattr(p.default, "value") else p.default
            assert shown.group(1).split("; ")[0] == str(value), (path, p.name, shown.group(1), p.default)


def _named_options(text: str):
    """``--name`` tokens of a help text, with the command a backticked span gives them (``search -o nprobe=N``,
    ``eval retrieval --out``): None when the option is this command's own."""
    spans = [(m.start(), m.end(), m.group(1)) for m in re.finditer(r"`([^`]*)`", text)]
    for m in re.finditer(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text):
        other = None
        for start, end, span in spans:
            if start < m.start() < end:
                words = span.removeprefix("legalrag ").split()
                for n in (2, 1):
                    if " ".join(words[:n]) in LEAVES:
                        other = " ".join(words[:n])
                        break
        yield m.group(1), other


ANYWHERE = set().union(*(_opts(c) for c in LEAVES.values()), GLOBAL)


@pytest.mark.parametrize("path", sorted(LEAVES))
def test_help_names_only_options_that_exist(path):
    """An option a help text names is one of its command's, or of the command a backticked span names
    (`eval retrieval --out`); one that speaks of where an artefact is used ("read by --encoder DIR") names an
    option some command has."""
    cmd = LEAVES[path]
    texts = [("(command)", cmd.help or "")] + [(p.name, p.help or "") for p in cmd.params]
    for name, text in texts:
        for opt, other in _named_options(text):
            if other:
                assert opt in _opts(LEAVES[other]) or opt in GLOBAL, (path, name, opt, other)
            else:
                assert opt in ANYWHERE, (path, name, opt)


OWN_ONLY = {"search", "index build", "index info", "cite", "eval retrieval", "eval cite", "eval answers",
            "eval conversation", "eval consultation-generate", "eval consultation-judge", "judgment predict",
            "judgment draft", "mcp", "agents rollouts", "qa", "eval mcq", "check"}


@pytest.mark.parametrize("path", sorted(OWN_ONLY))
def test_an_unqualified_option_is_the_commands_own(path):
    """In these commands an option named without a command (`search --retriever` names one) is their own."""
    cmd = LEAVES[path]
    for name, text in [("(command)", cmd.help or "")] + [(p.name, p.help or "") for p in cmd.params]:
        for opt, other in _named_options(text):
            assert other or opt in _opts(cmd) or opt in GLOBAL, (path, name, opt)


def test_option_keys_named_in_help_are_keys_of_the_model():
    """``-o KEY=...`` in a help text names a key the command's options model has."""
    from legalrag.cli import _options, _train_options

    models = {path: next((p for p in cmd.params if "-o" in getattr(p, "opts", [])), None) for path, cmd in LEAVES.items()}
    for path, param in models.items():
        if param is None:
            continue
        listed = set(re.findall(r"(?:Keys: |; )([a-z_0-9]+): ", param.help))
        model = next((m for m in [*vars(_options).values(), *vars(_train_options).values()]
                      if isinstance(m, type) and issubclass(m, _options.Options)
                      and m is not _options.Options and set(m.model_fields) == listed), None)
        assert model is not None, path
