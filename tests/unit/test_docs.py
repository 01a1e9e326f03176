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

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```\s*$", re.M | re.S)
# pages whose blocks another test runs or checks: page -> that test
RUN_ELSEWHERE = {"docs/integrations.md": "tests/unit/integrations/test_tools_docs.py",
                 "docs/architecture.md": "tests/unit/test_architecture.py"}
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
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "cli_docs.py"), "--check"], capture_output=True,
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
            "tests/unit/test_docs.py, or be marked ```bash illustrative")
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
    (```jsonl FILE) is written to FILE, each `legalrag ...` line is run and must succeed, a ```python block is
    run with the same settings (it may use what the blocks above it built)."""
    from legalrag.cli import app

    monkeypatch.chdir(tmp_path)
    env = {"LEGALRAG_CONFIG": str(tmp_path / "config.toml"), "LEGALRAG_HOME": str(tmp_path / "home"),
           "COLUMNS": "200", "NO_COLOR": "1"}
    for var in ("LEGALRAG_INDEX", "LEGALRAG_PROFILE", "LEGALRAG_MODEL", "LEGALRAG_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    ran, printed = [], {}
    for info, body, line in blocks(ROOT / "README.md"):
        words = info.split()
        if "illustrative" in words or not words:
            continue
        if words[0] in DATA and len(words) > 1:
            (tmp_path / words[1]).write_text(body, encoding="utf-8")
            continue
        if words[0] == "python":
            import contextlib
            import io

            for var, value in env.items():
                monkeypatch.setenv(var, value)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(body, f"README.md:{line}", "exec"), {"__name__": "__readme__"})
            printed[line] = out.getvalue()
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
    python = "".join(printed.values())  # "Use it from Python": search, check and ask over idx/mine
    assert "中华人民共和国民法典第六百八十条" in python and "['not_found']" in python, python


# names the architecture page gives in backticks that are not module paths: the sub-directories of an index
# (docs/architecture.md, "Indexes")
NOT_MODULES = {"bm25/", "qld/", "hybrid/", "ranker/"}
DATA_FILE = re.compile(r"[\w.*-]*\.(json|jsonl|npy|md|toml|txt|gguf|html)")  # a file an index or a folder holds
SRC = ROOT / "src" / "legalrag"
STDLIB = {"dataclasses", "importlib", "pkgutil"}  # the standard library's names the page gives


def _resolves(dotted: str) -> bool:
    """``dotted`` (a module, or a module's attribute) exists: found from the source tree, then imported (nothing
    heavy loads at import time) for an attribute."""
    import importlib
    import importlib.util

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            found = importlib.util.find_spec(module)
        except (ModuleNotFoundError, ValueError):
            found = None
        if found is None:
            continue
        obj = importlib.import_module(module)
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def architecture_names() -> list[str]:
    """The module paths docs/architecture.md names in backticks (outside its code blocks): ``x/y.py``, ``x/``,
    ``x/*.md``, ``x/y.name``, ``y.py``, ``legalrag.x.y`` and ``x.y.name`` (read as ``legalrag.x.y.name``)."""
    text = FENCE.sub("", (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    out = []
    for name in re.findall(r"`([^`\s]+)`", text):
        name = re.sub(r"\(.*\)$", "", name)  # `cli.common.root(ctx)` -> cli.common.root
        if name in NOT_MODULES or "<" in name or "=" in name:
            continue
        if "/" in name and re.fullmatch(r"[\w.*-]+(/[\w.*-]*)+", name):
            out.append(name)
        elif re.fullmatch(r"\w+\.py", name):
            out.append(name)
        elif re.fullmatch(r"[a-z_]\w*(\.\w+)+", name) and not DATA_FILE.fullmatch(name):
            out.append(name)
    return out


@pytest.mark.parametrize("name", architecture_names())
def test_the_architecture_page_names_existing_modules(name):
    """Package paths are written from src/legalrag (`retrieval/base.py`), others from the repository root
    (`tests/unit/test_architecture.py`); dotted names from the package (`answer.engine.engine_for`)."""
    if "/" in name or name.endswith(".py"):
        path, attr = name, ""
        last = name.rstrip("/").rsplit("/", 1)[-1]
        if "." in last and not DATA_FILE.fullmatch(last) and not last.endswith(".py") and "*" not in last:
            path, _, attr = name.rpartition(".")  # `retrieval/index.COMPONENT_KINDS`
            path += ".py"
        found = [r for r in (SRC, ROOT) if (r / path).exists() or ("*" in path and list(r.glob(path)))]
        assert found, f"docs/architecture.md names `{name}`, which is not a file or folder of the repository"
        if attr:
            module = "legalrag." + path.removesuffix(".py").replace("/", ".")
            assert _resolves(f"{module}.{attr}"), f"docs/architecture.md names `{name}`: {module} has no {attr}"
        return
    dotted = name if name.startswith("legalrag.") else f"legalrag.{name}"
    assert _resolves(dotted) or (name.split(".")[0] in STDLIB and _resolves(name)), (
        f"docs/architecture.md names `{name}`, which is not a module or name of the package")


def test_the_architecture_page_names_are_found():
    names = architecture_names()
    assert len(names) > 40 and "retrieval/base.py" in names and "wiring.make_policy_llm" in names


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", ["README.md", "docs/architecture.md"])
def test_the_links_of_the_front_pages_resolve(page):
    """Every relative link of the README and the architecture page names an existing file (and heading)."""
    path = ROOT / page
    for target in re.findall(r"\]\(([^)\s]+)\)", FENCE.sub("", path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        assert linked.exists(), f"{page} links {target}, which does not exist"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", linked.read_text(encoding="utf-8"), re.M)
            assert anchor in {_slug(h) for h in headings}, f"{page} links {target}: no such heading"
