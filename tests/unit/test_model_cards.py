"""Each shipped model's card names the commands that reproduce it, and those commands are today's: every
`legalrag ...` line of a card's README and of its ``legalrag_model.json`` parses with the CLI as it stands (the
command exists, its options exist and take the values given)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import typer.main
from typer._click.exceptions import UsageError  # Typer vendors its own click

from legalrag.cli import app

MODELS = Path(__file__).resolve().parents[2] / "src" / "legalrag" / "data" / "models"
CARDS = sorted(p for p in MODELS.iterdir() if (p / "legalrag_model.json").exists())


def card_commands(folder: Path) -> list[str]:
    lines = [line.strip() for line in (folder / "README.md").read_text(encoding="utf-8").splitlines()]
    recorded = json.loads((folder / "legalrag_model.json").read_text(encoding="utf-8")).get("command", "")
    lines += [line.strip() for line in recorded.splitlines()]
    return [line for line in lines if line.startswith("legalrag ")]


def parse(line: str) -> None:
    """Parse ``line`` as the CLI would, without running the command; a click.UsageError when it does not parse."""
    group = typer.main.get_command(app)
    args = shlex.split(line)[1:]
    while hasattr(group, "commands"):
        name, *args = args
        if name not in group.commands:
            raise UsageError(f"no command {name!r}")
        group = group.commands[name]
    group.make_context(group.name, args)


def test_every_shipped_model_has_a_card_with_a_train_command():
    assert {p.name for p in CARDS} >= {"stard-e5", "judge-e5", "judge-structure", "judge-cite"}
    for folder in CARDS:
        assert any(line.startswith("legalrag train ") for line in card_commands(folder)), folder.name


@pytest.mark.parametrize("folder", CARDS, ids=[p.name for p in CARDS])
def test_the_card_commands_parse_with_todays_cli(folder):
    bad = []
    for line in card_commands(folder):
        try:
            parse(line)
        except UsageError as exc:
            bad.append(f"{line}\n    -> {exc.format_message()}")
    assert not bad, f"{folder.name}: commands the CLI no longer takes:\n" + "\n".join(bad)


def test_a_removed_option_is_caught():
    with pytest.raises(UsageError):
        parse("legalrag train split --no-such-option 1")
