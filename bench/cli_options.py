"""Count the command line's options: commands, option declarations, distinct option names, and the names
declared most often (with how many of those declarations come from the shared ones in ``cli/common.py``).

    python bench/cli_options.py            # a table
    python bench/cli_options.py --json     # the same as JSON (bench/results/docs-cli-options.json keeps one)

An option is a ``--name`` of a command (its ``--x/--no-x`` pair counts once, by its first name); arguments and
``--help`` are not options. A declaration is one option of one command.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


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
    return {"commands": len(per_command), "declarations": sum(decl.values()), "distinct_names": len(decl),
            "from_cli_common": sum(from_common.values()),
            "hidden": sum(1 for _, cmd in commands(root) for p in cmd.params if _is_option(p) and p.hidden),
            "global_options": global_opts,
            "most_declared": [{"name": n, "declarations": c, "from_cli_common": from_common.get(n, 0)}
                              for n, c in decl.most_common(12)],
            "per_command": per_command}


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = count()
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return
    print(f"{result['commands']} commands, {result['declarations']} option declarations "
          f"({result['from_cli_common']} of them the shared ones of cli/common.py, {result['hidden']} hidden old "
          f"spellings), {result['distinct_names']} distinct option names; global options: "
          f"{', '.join(result['global_options']) or 'none'}")
    for row in result["most_declared"]:
        print(f"  {row['name']:<20} {row['declarations']:>3} declarations, {row['from_cli_common']:>3} from cli/common.py")


if __name__ == "__main__":
    main()
