"""The import graph follows the layer order written in docs/architecture.md: no module imports from a layer
above its own, and no import cycles, between areas or between modules. Lazy imports inside functions count:
they are dependencies all the same."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "legalrag"
DOC = REPO / "docs" / "architecture.md"


def layer_order() -> dict[str, int]:
    """``area -> layer`` from the ```layers block of docs/architecture.md (top line = highest layer)."""
    m = re.search(r"```layers\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert m, "docs/architecture.md must hold a ```layers block (one line per layer, highest first)"
    lines = [line.split("#")[0].split() for line in m.group(1).strip().splitlines()]
    lines = [words for words in lines if words]
    return {area: len(lines) - i for i, words in enumerate(lines) for area in words}


_SUBAREAS = {name for name in layer_order() if "." in name}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def area(module: str) -> str:
    """The area of a module: its top-level package (``legalrag.retrieval.bm25`` -> ``retrieval``), or a
    sub-package the layers block names on its own (``legalrag.evaluation.lexrag.data`` -> ``evaluation.lexrag``:
    the benchmarks sit above the features while the metrics of ``evaluation`` sit below them); the package itself
    -> ``__init__``."""
    parts = module.split(".")
    if len(parts) < 2:
        return "__init__"
    if len(parts) > 2 and f"{parts[1]}.{parts[2]}" in _SUBAREAS:
        return f"{parts[1]}.{parts[2]}"
    return parts[1]


# The one import against the layer order: the package's ``__init__`` reaches the front door (``legalrag.open``,
# in ``api``) lazily, inside its module ``__getattr__``, so that ``import legalrag`` stays cheap. Any other
# import of ``legalrag.api`` from ``__init__`` (at the top, or in another function) is still an upward import.
LAZY_FRONT_DOOR = ("legalrag", "__getattr__", "legalrag.api")


_IMPORT_CALLS = {"import_module", "__import__", "find_spec"}
_MODULE_NAME = re.compile(r"legalrag(\.\w+)+")


def named_imports(node: ast.AST) -> list[str]:
    """The modules an import by name reaches: ``importlib.import_module("legalrag.x")``, ``__import__(...)``,
    ``importlib.util.find_spec(...)`` with the name written in the call."""
    if not isinstance(node, ast.Call):
        return []
    name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
    if name in _IMPORT_CALLS and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        return [node.args[0].value]
    return []


def module_strings(tree: ast.AST) -> list[str]:
    """Every string of the code (docstrings aside) that is a legalrag module's dotted name: a name kept in a
    variable and imported later (``name = "legalrag.wiring"; import_module(name)``) is an import all the same."""
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docs and _MODULE_NAME.fullmatch(n.value)]


def imports() -> dict[str, set[str]]:
    """module -> the legalrag modules it imports (resolved to existing modules)."""
    files = {module_name(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        lazy = {id(n) for f in tree.body if isinstance(f, ast.FunctionDef) and (mod, f.name) == LAZY_FRONT_DOOR[:2]
                for n in ast.walk(f)}
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            targets += named_imports(node)
            for t in targets:
                if t.startswith("legalrag"):
                    while t and t not in files:  # `from legalrag.x import name` -> legalrag.x
                        t = t.rsplit(".", 1)[0] if "." in t else ""
                    if t and t != mod and not (id(node) in lazy and t == LAZY_FRONT_DOOR[2]):
                        graph[mod].add(t)
    return graph


def _layout_tool():
    """tools/layout_figures.py, whose strongly-connected-components search (Tarjan) this test shares."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("layout_figures", REPO / "tools" / "layout_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node."""
    return _layout_tool().cycles(graph)


def test_every_area_has_a_layer():
    layers = layer_order()
    areas = {area(module_name(p)) for p in SRC.rglob("*.py")}
    missing = sorted(areas - set(layers))
    assert not missing, f"add these areas to the ```layers block of docs/architecture.md: {missing}"


def test_every_package_and_module_is_in_the_diagram():
    """The map at the top of docs/architecture.md names every package (``name/``) and top-level module
    (``name.py``) of src/legalrag, so a new one cannot be added without placing it on the map."""
    text = DOC.read_text(encoding="utf-8")
    m = re.search(r"## Layers\n+```\n(.*?)```", text, re.DOTALL)
    assert m, "docs/architecture.md must open its Layers section with the diagram (a plain ``` block)"
    diagram = m.group(1)
    packages = [f"{p.name}/" for p in sorted(SRC.iterdir()) if (p / "__init__.py").exists()]
    modules = [p.name for p in sorted(SRC.glob("*.py")) if not p.name.startswith("__")]
    missing = [name for name in packages + modules if not re.search(rf"(?<![\w/]){re.escape(name)}", diagram)]
    assert not missing, f"add these to the diagram of docs/architecture.md: {missing}"


def test_no_upward_imports():
    layers = layer_order()
    bad = []
    for mod, targets in imports().items():
        for t in targets:
            a, b = area(mod), area(t)
            if a != b and layers.get(b, 0) > layers.get(a, 0):
                bad.append(f"{mod} (layer {layers.get(a)}) imports {t} (layer {layers.get(b)})")
    assert not bad, "upward imports:\n" + "\n".join(sorted(bad))


def test_no_library_code_reaches_up_to_the_composition_root():
    """Below ``wiring`` nothing imports it, by an import statement, by ``importlib`` or ``__import__``, or by a
    module name kept in a string: collaborators (the support model, encoders, LLMs) are passed down, never
    looked up (``citecheck.support`` once loaded ``legalrag.wiring`` by name to find its model)."""
    layers = layer_order()
    below = {a for a, n in layers.items() if n < layers["wiring"]}
    bad = []
    for path in SRC.rglob("*.py"):
        mod = module_name(path)
        if area(mod) not in below:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        named = [t for t in module_strings(tree) if t == "legalrag.wiring" or t.startswith("legalrag.wiring.")]
        bad += [f"{mod} names {t!r}" for t in named]
    bad += [f"{mod} imports {t}" for mod, targets in imports().items() if area(mod) in below
            for t in targets if area(t) == "wiring"]
    assert not bad, "library code reaching up to legalrag.wiring:\n" + "\n".join(sorted(set(bad)))


@pytest.mark.parametrize("code", [
    "import importlib\nimportlib.import_module('legalrag.wiring')",
    "def f():\n    from importlib import import_module\n    return import_module('legalrag.wiring.encoders')",
    "__import__('legalrag.wiring')",
    "ROOT = 'legalrag.wiring'\ndef f():\n    import importlib\n    return importlib.import_module(ROOT)",
])
def test_an_import_by_name_is_seen(code):
    tree = ast.parse(code)
    found = {t for n in ast.walk(tree) for t in named_imports(n)} | set(module_strings(tree))
    assert any(t.startswith("legalrag.wiring") for t in found), code


def test_a_docstring_naming_the_root_is_not_an_import():
    tree = ast.parse('"""legalrag.wiring"""\ndef f():\n    """legalrag.wiring.encoders"""\n    return 1')
    assert module_strings(tree) == [] and not [t for n in ast.walk(tree) for t in named_imports(n)]


def test_no_cycles_between_areas():
    graph: dict[str, set[str]] = defaultdict(set)
    for mod, targets in imports().items():
        for t in targets:
            if area(mod) != area(t):
                graph[area(mod)].add(area(t))
    assert not cycles(graph), f"import cycles between areas: {cycles(graph)}"


def test_no_cycles_between_modules():
    found = cycles(imports())
    assert not found, f"import cycles between modules: {found}"


def test_only_the_composition_root_builds_models():
    """LLMs, encoders and rerankers are constructed in the legalrag/wiring/ package only (tests and bench aside)."""
    pattern = re.compile(r"\b(EmbeddedLLM|OpenAICompatLLM|CachedLLM|E5Small|USEMultilingual|SentenceTransformerEncoder|"
                         r"OpenAIEmbeddings|LLMListwiseReranker|LLMPointwiseReranker|LLMYesNoReranker)\(")
    places = []
    for path in SRC.rglob("*.py"):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#")[0]
            if pattern.search(code) and not re.match(r"\s*(class|def|return f\")", code) and '"""' not in code \
                    and "``" not in code and "repr" not in code:
                places.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    outside = [p for p in places if not p.startswith("src/legalrag/wiring/")]
    assert not outside, "models built outside legalrag/wiring/:\n" + "\n".join(outside)


def test_the_answer_engine_is_built_in_one_place():
    """Every path that answers (ask, chat, serve's /ask, /consult and OpenAI route, the MCP tools, the answer
    and consultation benchmarks) gets its ``AnswerEngine`` from ``engine.engine_for``: the constructor is
    called there and nowhere else in src/legalrag."""
    places = set()
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        owner = {id(c): f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for c in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (getattr(node.func, "id", None) == "AnswerEngine"
                                               or getattr(node.func, "attr", None) == "AnswerEngine"):
                places.add(f"{path.relative_to(REPO)}:{owner.get(id(node), '<module>')}")
    assert places == {"src/legalrag/answer/engine.py:engine_for"}, f"AnswerEngine built outside engine_for: {sorted(places)}"


@pytest.mark.parametrize("name", ["legalrag", "legalrag.wiring", "legalrag.cli"])
def test_importing_loads_no_heavy_library(name):
    import subprocess
    import sys

    code = (f"import sys, {name}; heavy = [m for m in ('torch', 'faiss', 'httpx', 'xllamacpp', 'lightgbm', "
            "'sentence_transformers', 'fastapi') if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                         env={"PYTHONPATH": str(SRC.parent), "PATH": ""}, check=True)
    assert out.stdout.strip() == "", f"`import {name}` loads {out.stdout.strip()}"
