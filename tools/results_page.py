"""Generate docs/results.md from the saved benchmark outputs in bench/results/*.json.

    python tools/results_page.py            # rewrite docs/results.md
    python tools/results_page.py --check    # exit 1 when docs/results.md differs from what the JSON gives

The page's prose is tools/results_template.md; every figure on it comes from a JSON file. A file adds rows to
the page with a ``page`` block (files without one are still listed under "Saved outputs")::

    {"name": "...", "command": "...", "machine": "...", "date": "YYYY-MM-DD", "metrics": {...},
     "source": "docs/lab/notebook.md#a-heading",       # the lab record of the figures (optional)
     "page": {"section": "retrieval",                # a `{{section NAME}}` marker of the template
              "rows": [{"configuration": "...", "default": true, "best": true,
                        "result": "R@10 {metrics[bm25][recall@10]:.3f}",  # str.format over the file's JSON
                        "cost": "...", "needs": "CPU", "anchor": "..."}]}}

A section the template does not name gets its own heading under "More results". Rows of one section come in
the order of their files (``page.order``, default 1000, then the file name) and of the rows within a file.

The page stays a summary: a cell keeps its text up to a clause boundary within its column's budget (``BRIEF``)
and ends with "…" where it was cut; every row links its detail (the file's ``source`` in docs/, else the JSON
file), and a long command is shown by its first words, whole in the file. No line of the page is longer than
``LINE`` characters.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
TEMPLATE = ROOT / "tools" / "results_template.md"
PAGE = ROOT / "docs" / "results.md"
MARKER = re.compile(r"^\{\{section (\S+)\}\}$", re.MULTILINE)
COLUMNS = ("configuration", "result", "cost", "needs", "anchor")
# characters a cell keeps (the rest is one link away), the longest command shown whole, the longest line
BRIEF = {"configuration": 100, "result": 120, "cost": 70, "needs": 30, "anchor": 60}
COMMAND = 200
LINE = 400


class PageError(ValueError):
    pass


def load(results: Path = RESULTS) -> list[tuple[str, dict]]:
    out = []
    for path in sorted(results.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise PageError(f"{path.relative_to(ROOT)}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        if isinstance(data, dict):
            out.append((path.name, data))
    return out


def cell(template: str, data: dict, where: str) -> str:
    try:
        text = template.format(**data)
    except (KeyError, IndexError, ValueError, AttributeError) as exc:
        raise PageError(f"{where}: {template!r} does not format against the file's JSON ({exc!r})") from None
    return text.replace("|", "\\|").replace("\n", " ")


def sections(files: list[tuple[str, dict]]) -> dict[str, list[tuple[str, dict, dict]]]:
    """section -> [(file, its JSON, row)]."""
    out: dict[str, list] = {}
    for name, data in sorted(files, key=lambda f: ((f[1].get("page") or {}).get("order", 1000), f[0])):
        page = data.get("page")
        if not page:
            continue
        section = page.get("section")
        if not section:
            raise PageError(f"bench/results/{name}: page.section is missing")
        for row in page.get("rows", []):
            out.setdefault(section, []).append((name, data, row))
    return out


# a measured figure: a decimal, a share, a count of a total (not the 10 of R@10 or the 5 of e5-small)
FIGURE = re.compile(r"(?<![\w@.-])(?:\d+\.\d+|\d+ ?%|\d+/\d+|\d+ of \d+)")


def brief(text: str, limit: int, figure: bool = False) -> str:
    """``text`` up to its last clause boundary ("; ", ", ", " (") within ``limit`` characters, outside
    parentheses, code and bold, with "…" where it was cut; the whole text when it fits. With ``figure``, a cut
    that would keep no figure of a text that has one starts at the clause holding the first figure instead."""
    if len(text) <= limit:
        return text
    cuts: dict[str, int] = {}
    word = (limit, 0, False)  # the latest word boundary at any depth: (position, open parentheses, in bold)
    depth, code, bold, i = 0, False, False, 0
    while i < min(len(text), limit):
        ch = text[i]
        if ch == "`":
            code = not code
        elif not code and text.startswith("**", i):
            bold = not bold
            i += 1
        elif not code and ch in "([":
            if ch == "(" and depth == 0 and not bold and i > 0 and text[i - 1] == " ":
                cuts["("] = i - 1
            depth += 1
        elif not code and ch in ")]":
            depth = max(depth - 1, 0)
        if ch == " " and not code:
            word = (i, depth, bold)
        if depth == 0 and not code and not bold and ch in ";,: ":
            if text.startswith("; ", i):
                cuts[";"] = i
            elif text.startswith(", ", i) or text.startswith(": ", i):
                cuts[","] = i
        i += 1
    # the latest clause boundary that keeps at least half the budget, else the latest word boundary
    best = max((cuts[k] for k in (";", "(", ",") if cuts.get(k, 0) >= limit // 2), default=None)
    if best is not None:
        kept = text[:best].rstrip(" ,;:") + " …"
    else:
        at, open_, in_bold = word
        kept = text[:at].rstrip(" ,;:") + ("**" if in_bold else "") + " …" + ")" * open_
    first = FIGURE.search(text) if figure else None
    if first and not FIGURE.search(kept) and first.start() > 0:
        # a cell is a figure and a few words: start at the clause that holds the first figure
        start = max(text.rfind(sep, 0, first.start()) for sep in (": ", "; ", ", "))
        if start > 0:
            return "… " + brief(text[start + 2:], limit - 2, figure)
    return kept


def links(name: str, data: dict) -> tuple[str, str]:
    """(reference label, target relative to docs/) of a file's detail: its lab record, else the JSON file."""
    source = str(data.get("source") or "")
    label = Path(name).stem
    if source.startswith("docs/"):
        return label, source[len("docs/"):]
    return label, f"../bench/results/{name}"


def command_text(command: str, limit: int = COMMAND) -> str:
    """The command, or its first steps (``&&``) that fit, else its first words up to an option's value."""
    if len(command) <= limit:
        return f"`{command}`"
    steps, head = command.split(" && "), ""
    for step in steps:
        longer = f"{head} && {step}" if head else step
        if len(longer) > limit:
            break
        head = longer
    if not head:
        words = command[:limit].split(" ")[:-1]
        while words and words[-1].startswith("-"):  # never an option without its value
            words.pop()
        head = " ".join(words)
    return f"`{head}` … (the whole command is in the file)"


def source_line(name: str, data: dict) -> str:
    """One bullet for a file: its link, date, data and machine (cut to fit ``LINE``) and its command."""
    data_budget, machine_budget, command_budget = 120, 110, COMMAND
    while True:
        about = f"{brief(str(data['data']), data_budget)}; " if data.get("data") else ""
        line = (f"- [`{name}`](../bench/results/{name}) ({data.get('date', 'date not recorded')}; {about}"
                f"{brief(str(data.get('machine', 'machine not recorded')), machine_budget)}): "
                f"{command_text(str(data.get('command', '(no command)')), command_budget)}")
        if len(line) <= LINE or command_budget < 40:
            return line
        data_budget, machine_budget, command_budget = (n * 4 // 5 for n in (data_budget, machine_budget,
                                                                            command_budget))


def table(rows: list[tuple[str, dict, dict]]) -> str:
    lines = ["| configuration | result | cost (2 CPU cores unless said) | needs | anchor (published) |",
             "|---|---|---|---|---|"]
    commands: list[tuple[str, dict]] = []
    for name, data, row in rows:
        label, _ = links(name, data)
        budget = dict(BRIEF)
        while True:
            cells = []
            for col in COLUMNS:
                text = brief(cell(str(row.get(col, "")), data, f"bench/results/{name}: page row {col}"),
                             budget[col], figure=col == "result")
                if col == "configuration" and row.get("default"):
                    text += " *(default)*" if "default" not in text else ""
                if col == "result":
                    text += f" [detail][{label}]"
                cells.append(text)
            line = "| " + " | ".join(cells) + " |"
            if len(line) <= LINE or budget["result"] < 40:
                break
            budget = {col: n * 4 // 5 for col, n in budget.items()}
        lines.append(line)
        if name not in [n for n, _ in commands]:
            commands.append((name, data))
    lines.append("")
    for name, data in commands:
        lines.append(source_line(name, data))
    lines.append("")
    lines += [f"[{label}]: {target}" for label, target in dict(links(n, d) for n, d in commands).items()]
    return "\n".join(lines)


def wrap(items: list[str], width: int = 390) -> str:
    """``items`` joined by ", " into lines of at most ``width`` characters (one paragraph in Markdown)."""
    lines, line = [], ""
    for item in items:
        piece = item if not line else f"{line}, {item}"
        if line and len(piece) > width:
            lines.append(line + ",")
            line = item
        else:
            line = piece
    return "\n".join([*lines, line])


def render(results: Path = RESULTS, template: Path = TEMPLATE) -> str:
    files = load(results)
    by_section = sections(files)
    text = template.read_text(encoding="utf-8")
    named = set(MARKER.findall(text))

    def fill(m: re.Match) -> str:
        rows = by_section.get(m.group(1))
        return table(rows) if rows else "(no saved result yet)"

    text = MARKER.sub(fill, text)
    extra = [s for s in by_section if s not in named]
    if extra:
        text += "\n## More results\n"
        for s in extra:
            text += f"\n### {s}\n\n{table(by_section[s])}\n"
    shown = {name for rows in by_section.values() for name, _, _ in rows}
    others = [f"[`{n}`](../bench/results/{n})" for n, _ in files if n not in shown]
    listed = wrap(["Every figure above is read from the file listed under its table. The other saved outputs, "
                   "whose figures the lab notebook quotes:", *others]).replace(":,", ":", 1)
    text += f"\n## Saved outputs\n\n{listed}.\n"
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    args = ap.parse_args(argv)
    try:
        page = render()
    except PageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.check:
        same = PAGE.exists() and PAGE.read_text(encoding="utf-8") == page
        print("docs/results.md matches bench/results/*.json" if same else
              "docs/results.md differs from bench/results/*.json: run python tools/results_page.py")
        return 0 if same else 1
    tmp = PAGE.with_suffix(".md.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(PAGE)
    print(f"wrote {PAGE.relative_to(ROOT)} ({page.count(chr(10))} lines, {len(files_in(page))} result files)")
    return 0


def files_in(page: str) -> list[str]:
    return sorted(set(re.findall(r"\(\.\./bench/results/([^)]+\.json)\)", page)))


if __name__ == "__main__":
    sys.exit(main())
