"""Generate docs/results.md from the saved benchmark outputs in bench/results/*.json.

    python bench/results_page.py            # rewrite docs/results.md
    python bench/results_page.py --check    # exit 1 when docs/results.md differs from what the JSON gives

The page's prose is bench/results_template.md; every figure on it comes from a JSON file. A file adds rows to
the page with a ``page`` block (files without one are still listed under "Saved outputs")::

    {"name": "...", "command": "...", "machine": "...", "date": "YYYY-MM-DD", "metrics": {...},
     "page": {"section": "retrieval",                # a `{{section NAME}}` marker of the template
              "rows": [{"configuration": "...", "default": true, "best": true,
                        "result": "R@10 {metrics[bm25][recall@10]:.3f}",  # str.format over the file's JSON
                        "cost": "...", "needs": "CPU", "anchor": "..."}]}}

A section the template does not name gets its own heading under "More results". Rows of one section come in
the order of their files (``page.order``, default 1000, then the file name) and of the rows within a file.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
TEMPLATE = ROOT / "bench" / "results_template.md"
PAGE = ROOT / "docs" / "results.md"
MARKER = re.compile(r"^\{\{section (\S+)\}\}$", re.MULTILINE)
COLUMNS = ("configuration", "result", "cost", "needs", "anchor")


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


def table(rows: list[tuple[str, dict, dict]]) -> str:
    lines = ["| configuration | result | cost (2 CPU cores unless said) | needs | anchor (published) |",
             "|---|---|---|---|---|"]
    commands: list[tuple[str, dict]] = []
    for name, data, row in rows:
        cells = []
        for col in COLUMNS:
            text = cell(str(row.get(col, "")), data, f"bench/results/{name}: page row {col}")
            if col == "configuration" and row.get("default"):
                text += " *(default)*" if "default" not in text else ""
            cells.append(text)
        lines.append("| " + " | ".join(cells) + " |")
        if name not in [n for n, _ in commands]:
            commands.append((name, data))
    lines.append("")
    for name, data in commands:
        about = f"{data['data']}; " if data.get("data") else ""
        lines.append(f"- [`{name}`](../bench/results/{name}): {about}{data.get('machine', 'machine not recorded')}, "
                     f"{data.get('date', 'date not recorded')}: `{data.get('command', '(no command)')}`")
    return "\n".join(lines)


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
    listed = ", ".join(f"[`{n}`](../bench/results/{n})" for n, _ in files)
    text += f"\n## Saved outputs\n\nEvery figure above is read from these files: {listed}.\n"
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
              "docs/results.md differs from bench/results/*.json: run python bench/results_page.py")
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
