"""mutmut's working folder for one module (``runs/mutation/<module>/``), made ready before each run of
``tools/mutation.py``: links to ``src`` and ``tests``, the pytest settings, and inside ``mutants/`` (mutmut's
copy of the tree, where the tests run) links to the repository's other top-level entries and package data
brought up to date; a verdict file torn by ``kill -9`` is restored from its last good copy.

Every function takes the repository (or its ``src``) as an argument: the driver passes its own root, a test
passes a temporary tree.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path


def prepare(work: Path, fresh: bool, repo: Path) -> None:
    """Make ``work`` ready for ``mutmut run`` (``fresh``: start it over, every verdict dropped)."""
    if fresh and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    for name in ("src", "tests"):
        link = work / name
        if not link.exists():
            link.symlink_to(repo / name)
    shutil.copy2(repo / "pyproject.toml", work / "pyproject.toml")  # pytest's settings and markers
    link_rest_of_tree(work / "mutants", repo)
    sync_copy(work / "mutants" / "src", repo / "src")
    repair_verdicts(work)


MUTMUT_FILES = (".py.meta", ".py.meta.good", ".py.spans")  # its verdicts and spans, beside each mutated source


def sync_copy(copy: Path, source: Path) -> None:
    """Bring mutmut's copy of ``src`` up to date with ``source`` (the tree's ``src``), except the ``.py`` files
    mutmut writes itself.

    mutmut copies ``src`` once and afterwards skips every file that exists in the copy; on each run it rewrites
    the ``.py`` sources only. Package data changed since (``data/citations/support_model.json``, a prompt, a
    model card) stayed as it was, and a file removed from ``src`` stayed importable: the tests then ran the
    new code against the old data (after the support model's rewrite: ``KeyError: 'claim_cover'`` in
    ``SupportModel.logit``), and mutmut stopped with "Failed to run clean test"."""
    if not copy.is_dir():
        return
    for path in sorted(copy.rglob("*")):
        rel = path.relative_to(copy)
        if path.is_dir() or "__pycache__" in rel.parts:
            continue
        original = source / rel
        keep = path.name.endswith(MUTMUT_FILES) and (source / rel.parent / path.name.split(".py.")[0]).with_suffix(
            ".py").exists()
        if not keep and not original.exists():
            path.unlink()  # gone from the tree: not loadable from the copy either
    for original in sorted(source.rglob("*")):
        rel = original.relative_to(source)
        if original.is_dir() or original.suffix == ".py" or "__pycache__" in rel.parts:
            continue
        target = copy / rel
        st = original.stat()
        if target.exists() and target.stat().st_size == st.st_size and target.stat().st_mtime == st.st_mtime:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(original, target)


# what mutmut copies into mutants/ itself (src mutated, the rest as they are), and what no test reads
NOT_LINKED = {"src", "tests", "pyproject.toml", "setup.cfg", "runs", "mutants"}


def link_rest_of_tree(mutants: Path, repo: Path) -> None:
    """Give mutmut's copy of the tree the other files of ``repo``, as links: mutmut copies only the sources,
    ``tests/`` and the pytest settings, and the tests run inside that copy, where ``tests/support/paths.REPO``
    (and every ``Path(__file__).parents[n]``) is ``mutants/``. A test that reads a file the repository keeps
    outside ``src`` and ``tests`` (``bench/data/*.jsonl``, ``docs/*.md``, ``tools/*.py``, ``requirements/``) would
    fail there with FileNotFoundError, and mutmut stops with "failed to collect stats" or "Failed to run clean
    test" before the first mutant. The links are read-only in effect: no test writes into the tree."""
    mutants.mkdir(parents=True, exist_ok=True)
    for entry in sorted(repo.iterdir()):
        if entry.name.startswith(".") or entry.name in NOT_LINKED:
            continue
        link = mutants / entry.name
        if link.is_symlink() and link.resolve() != entry.resolve():
            link.unlink()
        if not link.exists() and not link.is_symlink():
            link.symlink_to(entry)


def metas(work: Path) -> list[Path]:
    return sorted((work / "mutants").rglob("*.py.meta")) if (work / "mutants").exists() else []


def repair_verdicts(work: Path) -> None:
    """A verdict file torn by kill -9: restore the last good copy, else generate that file's mutants again."""
    for meta in metas(work):
        try:
            json.loads(meta.read_text(encoding="utf-8"))
        except ValueError:
            good = meta.with_name(meta.name + ".good")
            if good.exists():
                replace_copy(good, meta)
                print(f"restored {meta.relative_to(work)} from its last good copy")
            else:
                for p in (meta, meta.with_suffix(""), meta.with_name(meta.name.replace(".meta", ".spans"))):
                    p.unlink(missing_ok=True)
                print(f"{meta.relative_to(work)} was torn; its mutants are generated again")


def keep_good_copies(work: Path) -> None:
    for meta in metas(work):
        try:
            json.loads(meta.read_text(encoding="utf-8"))
        except (ValueError, OSError):
            continue
        replace_copy(meta, meta.with_name(meta.name + ".good"))


def replace_text(path: Path, text: str) -> None:
    """``text`` written to a temporary file beside ``path`` and renamed onto it (``os.replace``): a run stopped
    mid-write never leaves a torn file (mutmut's config, the report) behind."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def replace_copy(source: Path, path: Path) -> None:
    """``source`` copied to a temporary file beside ``path`` and renamed onto it: the last good copy of a verdict
    file is never itself torn by a kill mid-copy."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        shutil.copy2(source, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

