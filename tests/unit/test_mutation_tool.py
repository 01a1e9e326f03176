"""The mutation driver's copy of the tree: the files tests read outside ``src`` and ``tests`` are there, package
data changed since the copy was made is brought up to date, mutmut's own files and the mutated sources are
left alone; a resumed run adds its wall time."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load(monkeypatch, name: str):
    """A tools/ script loaded by its path, as the recorded-commands test loads it (tools/ not on sys.path)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tool(monkeypatch):
    return _load(monkeypatch, "mutation")


@pytest.fixture
def copier(monkeypatch):
    return _load(monkeypatch, "mutation_copy")


def _write(path: Path, text: str, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_package_data_changed_since_the_copy_is_copied_again_and_removed_files_go(copier, tmp_path):
    repo, copy = tmp_path / "repo", tmp_path / "work" / "mutants" / "src"
    _write(repo / "src/pkg/data/model.json", '{"features": ["claim_cover"]}')
    _write(repo / "src/pkg/marks.py", "def mark(): return 1\n")
    _write(repo / "src/pkg/prompts/same.md", "unchanged", mtime=1_000_000)
    _write(copy / "pkg/data/model.json", '{"features": ["cover"]}')  # the copy of an older tree
    _write(copy / "pkg/prompts/same.md", "unchanged", mtime=1_000_000)
    _write(copy / "pkg/marks.py", "def mark(): return trampoline()\n")  # mutmut's mutated source
    for name in ("marks.py.meta", "marks.py.meta.good", "marks.py.spans"):
        _write(copy / "pkg" / name, "{}")
    _write(copy / "pkg/gone.py", "X = 1\n")  # removed from src since
    _write(copy / "pkg/data/old.json", "{}")
    _write(copy / "pkg/gone.py.meta", "{}")  # the verdicts of a source that no longer exists
    copier.sync_copy(copy, repo / "src")
    assert (copy / "pkg/data/model.json").read_text(encoding="utf-8") == '{"features": ["claim_cover"]}'
    assert (copy / "pkg/marks.py").read_text(encoding="utf-8") == "def mark(): return trampoline()\n"
    assert sorted(p.name for p in (copy / "pkg").iterdir() if p.is_file()) == [
        "marks.py", "marks.py.meta", "marks.py.meta.good", "marks.py.spans"]
    assert not (copy / "pkg/data/old.json").exists()
    assert (copy / "pkg/prompts/same.md").stat().st_mtime == 1_000_000


def test_a_copy_not_made_yet_is_left_to_mutmut(copier, tmp_path):
    _write(tmp_path / "repo/src/pkg/data/model.json", "{}")
    copier.sync_copy(tmp_path / "work" / "mutants" / "src", tmp_path / "repo/src")
    assert not (tmp_path / "work").exists()


def test_the_files_tests_read_outside_src_and_tests_are_linked_into_the_copy(copier, tmp_path):
    repo, mutants = tmp_path / "repo", tmp_path / "work" / "mutants"
    _write(repo / "bench/data/scope-messages.jsonl", '{"text": "你好"}\n')
    _write(repo / "docs/results.md", "# Results\n")
    _write(repo / "Makefile", "test:\n")
    for name in ("src/pkg/a.py", "tests/test_a.py", "runs/mutation/x/log", ".git/HEAD", "pyproject.toml"):
        _write(repo / name, "")
    _write(mutants / "tests/test_a.py", "")  # what mutmut copied itself
    copier.link_rest_of_tree(mutants, repo)
    assert (mutants / "bench/data/scope-messages.jsonl").read_text(encoding="utf-8") == '{"text": "你好"}\n'
    assert sorted(p.name for p in mutants.iterdir() if p.is_symlink()) == ["Makefile", "bench", "docs"]
    assert not (mutants / "tests").is_symlink()
    copier.link_rest_of_tree(mutants, repo)  # again: the same links
    assert (mutants / "docs").resolve() == (repo / "docs").resolve()


def test_a_resumed_run_adds_its_wall_time_and_a_fresh_one_replaces_it(tool):
    kept = {"wall_s": 120.0, "stopped": "budget: resume with the same command", "nice": 15}
    resumed = tool.merged_run(kept, {"wall_s": 60.5, "exit": 0, "nice": 10, "fresh": False})
    assert resumed == {"wall_s": 180.5, "exit": 0, "nice": 10}
    fresh = tool.merged_run(kept, {"wall_s": 60.5, "exit": -15, "stopped": "budget", "fresh": True})
    assert fresh == {"wall_s": 60.5, "exit": -15, "stopped": "budget", "nice": 15}
    assert tool.merged_run(kept, {}) == kept  # `report` alone keeps what was recorded


def test_a_module_folder_is_made_ready_and_fresh_drops_its_verdicts(copier, tmp_path):
    repo, work = tmp_path / "repo", tmp_path / "work"
    _write(repo / "src/pkg/marks.py", "def mark(): return 1\n")
    _write(repo / "src/pkg/data/model.json", "new")
    _write(repo / "tests/test_a.py", "")
    _write(repo / "pyproject.toml", "[tool.pytest.ini_options]\n")
    _write(repo / "docs/results.md", "# Results\n")
    _write(work / "mutants/src/pkg/data/model.json", "old")
    _write(work / "mutants/src/pkg/marks.py.meta", "{torn")  # killed mid-write, no good copy
    _write(work / "mutants/src/pkg/marks.py", "def mark(): return trampoline()\n")
    copier.prepare(work, False, repo)
    assert (work / "src").resolve() == (repo / "src").resolve() and (work / "tests").is_symlink()
    assert (work / "pyproject.toml").read_text(encoding="utf-8") == "[tool.pytest.ini_options]\n"
    assert (work / "mutants/docs").is_symlink()
    assert (work / "mutants/src/pkg/data/model.json").read_text(encoding="utf-8") == "new"
    assert not (work / "mutants/src/pkg/marks.py.meta").exists()  # its mutants are generated again
    assert not (work / "mutants/src/pkg/marks.py").exists()
    _write(work / "mutmut.log", "a run")
    copier.prepare(work, True, repo)
    assert not (work / "mutmut.log").exists() and (work / "src").is_symlink()


def test_a_module_whose_verdicts_are_not_here_keeps_its_recorded_counts(tool, tmp_path, monkeypatch):
    """A fresh checkout has no ``runs/``: the report keeps each module's recorded counts (marked stale when its
    sources or tests changed since) instead of writing a row of zeros over them."""
    src = _write(tmp_path / "src/pkg/marks.py", "def mark(): return 1\n")
    test = _write(tmp_path / "tests/test_marks.py", "def test(): pass\n")
    target = tool.Target((str(src.relative_to(tmp_path)),), (str(test.relative_to(tmp_path)),))
    monkeypatch.setattr(tool, "REPO", tmp_path)
    monkeypatch.setattr(tool, "WORK", tmp_path / "runs")
    monkeypatch.setattr(tool, "RESULTS", tmp_path / "mutation.json")
    monkeypatch.setattr(tool, "MODULES", {"pkg.marks": target})
    counts = {"mutants": 10, "killed": 9, "survived": 1, "no_tests": 0, "timeout": 0, "equivalent": 0,
              "not_checked": 0, "kill_rate": 0.9, "fingerprint": tool.fingerprint(target)}
    (tmp_path / "mutation.json").write_text(tool.json.dumps({"modules": {"pkg.marks": {**counts, "wall_s": 5.0}}}),
                                            encoding="utf-8")
    kept = tool.write_report({}, "python tools/mutation.py report")["modules"]["pkg.marks"]
    assert {k: kept[k] for k in counts} == counts and "stale" not in kept and kept["wall_s"] == 5.0
    src.write_text("def mark(): return 2\n", encoding="utf-8")  # the module changed since it was measured
    stale = tool.write_report({}, "python tools/mutation.py report")["modules"]["pkg.marks"]
    assert stale["kill_rate"] == 0.9 and "rerun" in stale["stale"]
    assert tool.fingerprint(target) != counts["fingerprint"]
