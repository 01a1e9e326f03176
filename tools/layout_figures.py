"""The repository's layout in figures: how many files one follows from a command, import cycles, ``sys.path``
edits, public names defined twice, the largest module, and the CLI's parameters.

    python tools/layout_figures.py                 # a table of this tree
    python tools/layout_figures.py --json          # the same as JSON
    python tools/layout_figures.py --repo DIR      # another checkout (e.g. `git worktree add DIR REV`)
    python tools/layout_figures.py --before DIR --json-out bench/results/layout.json   # both, saved

- *files to follow* a command: the ``src/legalrag`` files reached by walking imports (lazy ones inside functions
  too) from the CLI module that defines it (``cli/ask.py``, ``cli/chat.py``), stopping at the vocabulary and
  utilities every module shares (``types``, ``errors``, ``io``, ``lang``, ``numerals``, ``_optional``, ``shipped``)
  and at ``__init__`` files that only re-export.
- *import cycles*: strongly connected components of the module import graph over ``src/``, ``bench/``,
  ``tools/`` and ``tests/`` (a script importing another script by name counts; the package's lazy
  ``__getattr__`` that reaches the Python front door, ``legalrag.open``, does not).
- *public names defined twice*: a top-level function or class without a leading ``_`` defined in two modules of
  ``src/legalrag`` (a re-export is not a definition). Not counted: the Typer commands of ``cli/`` (named after
  what a user types), the plug-in functions every index component kind or route module defines by protocol
  (``build_component``, ``load_component``, ``router``) and ``main``.
- *files an answer runs through*: the ``src/legalrag`` files in which a function runs (import-time code and
  ``cli/__init__``'s registration of the commands left out) when ``ask`` answers one question, and when ``chat``
  answers two turns, in this process (``--local``) over a BM25 index of the statute sample with a scripted LLM
  (``legalrag.testing.ScriptedLLM``, itself left out), as a profiler sees them; the shared vocabulary and
  utilities are left out as above. This is what a reader follows from the command to the answer; *areas* counts
  the top-level packages and modules among those files.
- *CLI parameters*: the visible options and arguments of every leaf command, ``--help`` excluded.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

SHARED = {"types", "errors", "io", "lang", "numerals", "_optional", "shipped"}
AREAS = ("src", "bench", "tools", "tests")


def module_names(repo: Path) -> dict[str, Path]:
    """module name -> file, for every Python file of the areas (src's as ``legalrag.x``; scripts by dotted path
    below their area, plus their bare name, which is how a script imports a neighbour)."""
    out: dict[str, Path] = {}
    for area in AREAS:
        base = repo / area
        if not base.exists():
            continue
        for path in base.rglob("*.py"):
            rel = path.relative_to(repo / "src" if area == "src" else repo)
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if parts:
                out[".".join(parts)] = path
    return out


def import_graph(repo: Path) -> dict[str, set[str]]:
    files = module_names(repo)
    bare = defaultdict(list)
    for name, path in files.items():
        if not name.startswith("legalrag"):
            bare[name.rsplit(".", 1)[-1]].append(name)
    graph: dict[str, set[str]] = defaultdict(set)
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0] if "." in mod else ""
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        except SyntaxError:
            continue
        # the front door: a package's module ``__getattr__`` importing a layer above it lazily (``legalrag.open``)
        front_door = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "__getattr__"
                      and path.name == "__init__.py" for n in ast.walk(f)}
        for node in ast.walk(tree):
            if id(node) in front_door:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: max(0, len(package.split(".")) - node.level + 1)]
                    base = ".".join(up + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                found = None
                probe = t
                while probe:
                    if probe in files:
                        found = probe
                        break
                    probe = probe.rsplit(".", 1)[0] if "." in probe else ""
                if found is None and t in bare and not mod.startswith("legalrag"):
                    # a script importing a neighbour script by its bare name (sys.path edits)
                    same_dir = [n for n in bare[t] if files[n].parent == path.parent]
                    found = same_dir[0] if same_dir else None
                if found and found != mod:
                    graph[mod].add(found)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def follow(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        mod = todo.pop()
        if mod in seen:
            continue
        seen.add(mod)
        for dep in graph.get(mod, ()):
            leaf = dep.split(".")[1] if dep.count(".") >= 1 else dep
            if dep == "legalrag" or (dep.count(".") == 1 and leaf in SHARED):
                continue
            todo.append(dep)
    return seen


PROTOCOL_NAMES = {"build_component", "load_component", "router", "main"}


def public_twice(repo: Path) -> list[tuple[str, list[str]]]:
    where = defaultdict(list)
    for path in (repo / "src" / "legalrag").rglob("*.py"):
        if path.relative_to(repo / "src" / "legalrag").parts[0] == "cli":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_") \
                    and node.name not in PROTOCOL_NAMES:
                where[node.name].append(str(path.relative_to(repo / "src")))
    return sorted((name, files) for name, files in where.items() if len(files) > 1)


def sys_path_edits(repo: Path) -> list[str]:
    hits = []
    for area in AREAS:
        for path in (repo / area).rglob("*.py") if (repo / area).exists() else ():
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if re.search(r"sys\.path\.(insert|append)\(", line) and not line.lstrip().startswith("#"):
                    hits.append(f"{path.relative_to(repo)}:{i}")
    return hits


def cli_parameters(repo: Path) -> int:
    code = ("import json, sys\nfrom legalrag.cli import app\nimport typer.main\n"
            "cmd = typer.main.get_command(app)\n"
            "def walk(g):\n"
            "    for name, c in g.commands.items():\n"
            "        if getattr(c, 'hidden', False) or getattr(c, 'deprecated', False):\n            continue\n"
            "        if hasattr(c, 'commands'):\n            yield from walk(c)\n"
            "        else:\n            yield c\n"
            "n = sum(1 for c in walk(cmd) for p in c.params if not getattr(p, 'hidden', False) and p.name != 'help')\n"
            "print(n)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(repo / "src"), "PATH": "/usr/bin:/bin"})
    return int(done.stdout.strip()) if done.returncode == 0 else -1


RUNTIME = r"""
import json, subprocess, sys, tempfile
from pathlib import Path
from typer.testing import CliRunner
from legalrag.cli import app
from legalrag.testing import ScriptedLLM
from legalrag.wiring import Root
SHARED = set(sys.argv[2].split(","))
tmp = Path(tempfile.mkdtemp())
sample = Path(sys.argv[1]) / "src" / "legalrag" / "data" / "statutes_sample.jsonl"
r = CliRunner().invoke(app, ["index", "build", "--corpus", str(sample), "--out", str(tmp / "idx"), "--retriever", "bm25",
                             "--lang", "zh", "--no-progress"])
assert r.exit_code == 0, r.output
reply = "结论：可以。法律依据：《中华人民共和国劳动合同法》第八十二条。"
args = {"ask": ["ask", "用人单位不签劳动合同怎么办", "--index", str(tmp / "idx"), "--local"],
        "chat": ["chat", "--index", str(tmp / "idx"), "--local"]}
mode = sys.argv[3]
src = str(Path(sys.argv[1]).resolve() / "src" / "legalrag") + "/"
ran = set()
def profile(frame, event, arg):
    code = frame.f_code
    if event == "call" and code.co_name != "<module>" and code.co_filename.startswith(src):
        ran.add(code.co_filename[len(src):])
llm = ScriptedLLM([reply] * 8)
sys.setprofile(profile)
r = CliRunner().invoke(app, args[mode], obj=Root(llm=llm),
                       input="用人单位不签劳动合同怎么办\n那最多能要几个月？\n" if mode == "chat" else None)
sys.setprofile(None)
assert r.exit_code == 0, r.output
loaded = sorted(f for f in ran if f.split("/")[0].removesuffix(".py") not in SHARED
                and f not in ("testing.py", "cli/__init__.py"))
print(json.dumps(loaded))
"""


def modules_loaded(repo: Path, mode: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", RUNTIME, str(repo), ",".join(SHARED), mode], capture_output=True,
                          text=True, env={"PYTHONPATH": str(repo / "src"), "PATH": "/usr/bin:/bin",
                                          "HOME": tempfile.mkdtemp(), "HF_HUB_OFFLINE": "1"}, cwd=repo)
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
        return []
    return json.loads(done.stdout.strip().splitlines()[-1])


def figures(repo: Path) -> dict:
    graph = import_graph(repo)
    src_files = list((repo / "src" / "legalrag").rglob("*.py"))
    largest = max(src_files, key=lambda p: len(p.read_text(encoding="utf-8").splitlines()))
    cyc = cycles(graph)
    twice = public_twice(repo)
    ask, chat = modules_loaded(repo, "ask"), modules_loaded(repo, "chat")
    return {
        "files_to_follow_ask": len(follow(graph, "legalrag.cli.ask")),
        "files_to_follow_chat": len(follow(graph, "legalrag.cli.chat")),
        "files_an_ask_runs_through": len(ask),
        "areas_an_ask_crosses": len({f.split("/")[0] for f in ask}),
        "files_a_chat_runs_through": len(chat),
        "areas_a_chat_crosses": len({f.split("/")[0] for f in chat}),
        "import_cycles": len(cyc),
        "cycles": cyc,
        "sys_path_edits": len(sys_path_edits(repo)),
        "public_names_defined_twice": len(twice),
        "names_twice": twice,
        "cli_parameters": cli_parameters(repo),
        "largest_module": str(largest.relative_to(repo)),
        "largest_module_lines": len(largest.read_text(encoding="utf-8").splitlines()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--before", type=Path, help="a checkout of the earlier layout, measured beside this one")
    parser.add_argument("--json-out", type=Path, help="save the figures (and --before's) as a results file")
    args = parser.parse_args()
    result = figures(args.repo)
    if args.json_out:
        from legalrag.evaluation.record import write_result

        before = figures(args.before) if args.before else None
        write_result(args.json_out, {"after": result, **({"before": before} if before else {})},
                     name="the repository's layout: files an answer runs through, cycles, path edits, names "
                          "defined twice, CLI parameters, largest module", source="docs/lab/layout.md")
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        for key, value in result.items():
            if key not in ("cycles", "names_twice"):
                print(f"{key:28s} {value}")
        for c in result["cycles"]:
            print("cycle:", " -> ".join(c))
        for name, files in result["names_twice"]:
            print(f"twice: {name}: {', '.join(files)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
