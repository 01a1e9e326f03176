"""The mutation driver writes mutmut's config and copies its verdict files to a temporary file beside each and
renames it into place: the file a reader finds is always a whole one, and no temporary file is left behind."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def tool(monkeypatch):
    spec = importlib.util.spec_from_file_location("mutation", REPO / "tools" / "mutation.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "mutation", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_config_replaces_the_old_one_whole_and_leaves_no_temporary_file(tool, tmp_path):
    (tmp_path / "setup.cfg").write_text("[mutmut]\nold = 1\n", encoding="utf-8")
    target = tool.Target(("src/legalrag/clauses.py",), ("tests/unit/test_clauses.py",))
    tool.write_config(tmp_path, target, ["tests/unit/test_clauses.py"], 10.0)
    text = (tmp_path / "setup.cfg").read_text(encoding="utf-8")
    assert text.startswith("[mutmut]\nsource_paths = src\nonly_mutate =\n    src/legalrag/clauses.py\n")
    assert "old = 1" not in text and "timeout_multiplier = 10.0" in text
    assert [p.name for p in tmp_path.iterdir()] == ["setup.cfg"]


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tool, tmp_path):
    path = tmp_path / "setup.cfg"
    path.write_text("whole", encoding="utf-8")
    with pytest.raises(TypeError):
        tool.replace_text(path, None)  # nothing writable: the write fails before the rename
    assert path.read_text(encoding="utf-8") == "whole" and [p.name for p in tmp_path.iterdir()] == ["setup.cfg"]


def test_the_good_copy_of_a_verdict_file_is_renamed_into_place(tool, tmp_path):
    meta = tmp_path / "mutants" / "src" / "m.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text('{"exit_code_by_key": {}}', encoding="utf-8")
    tool.keep_good_copies(tmp_path)
    good = meta.with_name("m.py.meta.good")
    assert good.read_text(encoding="utf-8") == '{"exit_code_by_key": {}}'
    assert sorted(p.name for p in meta.parent.iterdir()) == ["m.py.meta", "m.py.meta.good"]
