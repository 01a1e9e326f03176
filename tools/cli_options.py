"""Count the command line's options: commands, option declarations, distinct option names, the names declared
most often (with how many of those declarations come from the shared ones in ``cli/common.py``), the names that
carry two meanings, and the old spellings kept as deprecated aliases.

    python tools/cli_options.py                    # a table
    python tools/cli_options.py --json             # the same as JSON
    python tools/cli_options.py --save             # before (the source of REV, default main~ see --before) and
                                                   # after (this tree), into bench/results/cli-census.json
    python tools/cli_options.py --src DIR --json   # the census of another source tree (e.g. `git archive REV src`)

An option is a ``--name`` of a command (its ``--x/--no-x`` pair counts once, by its first name); arguments and
``--help`` are not options. A declaration is one option of one command. A name has two meanings when its
declarations take different kinds of value: an on/off flag, a number, a file or folder, or text (a choice counts
as text); ``--rerank`` as a reranker's name in one command and an on/off switch in another is such a name.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def commands(group, prefix=()):
    for name, cmd in sorted(group.commands.items()):
        if hasattr(cmd, "commands"):  # a group (Typer vendors its own click, so no isinstance check)
            yield from commands(cmd, prefix + (name,))
        else:
            yield " ".join(prefix + (name,)), cmd


def count() -> dict:
    import typer

    from legalrag.cli import app

    root = typer.main.get_command(app)
    shared = _shared_params()
    per_command: dict[str, list[str]] = {}
    from_common = Counter()
    for path, cmd in commands(root):
        names = []
        for p in cmd.params:
            if _is_option(p) and p.opts[0] != "--help":
                names.append(p.opts[0])
                if (p.opts[0], p.help) in shared:
                    from_common[p.opts[0]] += 1
        per_command[path] = names
    decl = Counter(n for names in per_command.values() for n in names)
    global_opts = [p.opts[0] for p in root.params if _is_option(p)]
    kinds: dict[str, dict[str, list[str]]] = {}
    for path, cmd in commands(root):
        for p in cmd.params:
            if _is_option(p) and p.opts[0] != "--help":
                kinds.setdefault(p.opts[0], {}).setdefault(_kind(p), []).append(path)
    two = {n: k for n, k in sorted(kinds.items()) if len(k) > 1}
    aliases = {path: dict(getattr(cmd, "aliases", {})) for path, cmd in commands(root) if getattr(cmd, "aliases", None)}
    return {"commands": len(per_command), "declarations": sum(decl.values()), "distinct_names": len(decl),
            "names_with_two_meanings": len(two), "two_meanings": two,
            "deprecated_aliases": sum(len(a) for a in aliases.values()), "aliases": aliases,
            "from_cli_common": sum(from_common.values()),
            "hidden": sum(1 for _, cmd in commands(root) for p in cmd.params if _is_option(p) and p.hidden),
            "global_options": global_opts,
            "most_declared": [{"name": n, "declarations": c, "from_cli_common": from_common.get(n, 0)}
                              for n, c in decl.most_common(12)],
            "per_command": per_command}


def _kind(p) -> str:
    """flag | number | path | text: the kind of value an option takes."""
    if p.is_flag:
        return "flag"
    import inspect
    import typing

    annotation = getattr(getattr(p, "type_descriptor", None), "annotation", None)
    if annotation is None:  # an older Typer: click's own type object
        name = getattr(getattr(p, "type", None), "name", "text")
        return {"integer": "number", "float": "number", "path": "path", "boolean": "flag"}.get(name, "text")
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    while typing.get_origin(annotation) in (typing.Union, list, typing.List) or type(annotation).__name__ == "UnionType":
        annotation = args[0] if args else str
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if inspect.isclass(annotation) and issubclass(annotation, bool):
        return "flag"
    if inspect.isclass(annotation) and issubclass(annotation, (int, float)):
        return "number"
    if inspect.isclass(annotation) and issubclass(annotation, Path):
        return "path"
    return "text"


def _is_option(p) -> bool:
    return getattr(p, "param_type_name", "") == "option" and bool(p.opts)


def _shared_params() -> set[tuple[str, str]]:
    """(name, help) of the option aliases declared in cli/common.py."""
    import typing

    from legalrag.cli import common

    out = set()
    for value in vars(common).values():
        for meta in getattr(value, "__metadata__", ()) if typing.get_origin(value) is typing.Annotated else ():
            decls = getattr(meta, "param_decls", None) or ()
            default = getattr(meta, "default", None)
            if not decls and isinstance(default, str) and default.startswith("--"):
                decls = (default,)  # typer.Option("--name", ...) inside Annotated: the name is the first argument
            if decls and getattr(meta, "help", None) is not None:
                out.add((decls[0].split("/")[0], meta.help))
    return out


def census_of(src: Path) -> dict:
    """The census of the source tree ``src`` (a ``src`` folder), in a fresh interpreter."""
    import os
    import subprocess

    out = subprocess.run([sys.executable, __file__, "--json"], check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(Path(src).resolve())})
    return json.loads(out.stdout)


def save(before_rev: str) -> Path:
    """Census of ``before_rev``'s source and of this tree, into bench/results/cli-census.json."""
    import subprocess
    import tarfile
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        tar = Path(tmp) / "src.tar"
        subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(tar), before_rev, "src"], check=True)
        with tarfile.open(tar) as t:
            t.extractall(tmp, filter="data")
        before = census_of(Path(tmp) / "src")
    after = census_of(ROOT / "src")
    slim = ("commands", "declarations", "distinct_names", "names_with_two_meanings", "two_meanings",
            "deprecated_aliases", "from_cli_common", "hidden")
    data = {"name": "Command-line option census: declarations, distinct names, names with two meanings",
            "command": f"python tools/cli_options.py --save --before {before_rev}",
            "machine_note": "shared with other jobs (counts do not depend on it)",
            "data": "the Typer app of legalrag (src/legalrag/cli), before: the source of " + before_rev,
            "metrics": {"before": {k: before[k] for k in slim}, "after": {k: after[k] for k in slim},
                        "aliases": after["aliases"]}}
    path = ROOT / "bench" / "results" / "cli-census.json"
    from legalrag.evaluation.record import write_result

    write_result(path, **data)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--src", type=Path, default=ROOT / "src", help="the source tree to count (default: this one)")
    ap.add_argument("--save", action="store_true", help="write bench/results/cli-census.json (before and after)")
    ap.add_argument("--before", default="main", help="the revision whose source is 'before' (with --save)")
    args = ap.parse_args()
    if args.save:
        print(f"saved {save(args.before)}")
        return
    if args.src.resolve() != (ROOT / "src").resolve():
        result = census_of(args.src)  # another tree: counted in an interpreter that imports legalrag from it
    else:
        result = count()
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return
    print(f"{result['commands']} commands, {result['declarations']} option declarations "
          f"({result['from_cli_common']} of them the shared ones of cli/common.py, {result['hidden']} hidden old "
          f"spellings), {result['distinct_names']} distinct option names, {result['names_with_two_meanings']} names "
          f"with two meanings, {result['deprecated_aliases']} deprecated aliases; global options: "
          f"{', '.join(result['global_options']) or 'none'}")
    for name, kinds in result["two_meanings"].items():
        print(f"  two meanings: {name}: " + "; ".join(f"{k} in {', '.join(c)}" for k, c in kinds.items()))
    for row in result["most_declared"]:
        print(f"  {row['name']:<20} {row['declarations']:>3} declarations, {row['from_cli_common']:>3} from cli/common.py")


if __name__ == "__main__":
    main()
