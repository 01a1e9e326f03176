"""docs/results.md is generated from the saved benchmark outputs (bench/results/*.json) and stays short: the
page and the JSON must agree, and a user must be able to read it in five minutes."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("results_page", REPO / "tools" / "results_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_page_matches_the_saved_outputs():
    page = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    assert page == _generator().render(), "docs/results.md differs from bench/results/*.json: run " \
                                          "`python tools/results_page.py` and commit the page"


REFERENCE = re.compile(r"^\[([^\]]+)\]: (\S+)$", re.M)  # a link reference definition: not shown on the page


def test_page_is_short():
    lines = (REPO / "docs" / "results.md").read_text(encoding="utf-8").splitlines()
    n = sum(1 for line in lines if not REFERENCE.match(line))
    assert n < 300, f"docs/results.md shows {n} lines; keep it under 300 (details belong in docs/lab/)"


def test_no_line_is_a_paragraph():
    """A cell holds a figure and a few words; the detail is one link away."""
    lines = (REPO / "docs" / "results.md").read_text(encoding="utf-8").splitlines()
    long = [(i, len(line)) for i, line in enumerate(lines, 1) if len(line) > 400]
    assert not long, f"docs/results.md lines over 400 characters (line, length): {long}"


def test_long_cells_are_cut_at_a_clause_and_keep_a_figure():
    gen = _generator()
    text = "the trained dense component: R@10 0.629 against BM25 0.436; the best measured on 2 cores; " * 3
    cut = gen.brief(text, 60, figure=True)
    assert len(cut) <= 62 and cut.endswith(" …") and "0.629" in cut, cut
    assert gen.brief("short", 60) == "short"
    words = "on an index built with `--encoder stard-e5`, the trained dense component: R@10 **0.629** (p < 0.001)"
    assert "0.629" in gen.brief(words, 40, figure=True)
    assert gen.brief("a (b c d e f g h i j k l m n o p)", 12).endswith(")")


def _links(page: str) -> list[str]:
    inline = re.findall(r"\]\(([^)\s]+)\)", page)
    return inline + [target for _, target in REFERENCE.findall(page)]


def test_every_link_resolves():
    page = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    labels = {label for label, _ in REFERENCE.findall(page)}
    used = set(re.findall(r"\]\[([^\]]+)\]", page))
    assert used <= labels, f"docs/results.md uses undefined link labels {sorted(used - labels)}"
    targets = _links(page)
    assert len(targets) > 50, "the page links its saved outputs and lab records"
    for target in targets:
        file, _, anchor = target.partition("#")
        path = (REPO / "docs" / file).resolve()
        assert path.exists(), f"docs/results.md links {target}: {path.relative_to(REPO)} does not exist"
        if anchor:
            slugs = {_slug(m) for m in re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)}
            assert anchor in slugs, f"docs/results.md links {target}: no heading of {file} has that anchor"


def test_page_names_no_machine_path_and_no_process():
    page = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    found = re.findall(r"(?:/work/|/home/|/tmp/|/root/|/Users/|\.\./shared/|\bsession|\bissue #?\d*)", page, re.I)
    assert not found, f"docs/results.md names {found}: the page reports figures, not how they were made"


@pytest.mark.parametrize("path", sorted((REPO / "bench" / "results").glob("*.json")), ids=lambda p: p.name)
def test_every_saved_output_names_its_command_and_machine(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data.get("command") and data.get("machine"), f"{path.name}: add \"command\" and \"machine\""


def test_a_changed_figure_changes_the_page(tmp_path):
    gen = _generator()
    src = REPO / "bench" / "results" / "docs-stard-lexical.json"
    data = json.loads(src.read_text(encoding="utf-8"))
    (tmp_path / src.name).write_text(json.dumps(data), encoding="utf-8")
    before = gen.render(tmp_path)
    data["metrics"]["bm25"]["recall@10"] = 0.123
    (tmp_path / src.name).write_text(json.dumps(data), encoding="utf-8")
    after = gen.render(tmp_path)
    assert "R@10 0.454" in before and "R@10 0.123" in after and "0.454" not in after


def test_new_files_are_tolerated(tmp_path):
    gen = _generator()
    (tmp_path / "x-plain.json").write_text(json.dumps({"command": "c", "machine": "m", "recall": 0.5}))
    (tmp_path / "y-new.json").write_text(json.dumps({"command": "c", "machine": "m", "metrics": {"f1": 0.75},
                                                     "page": {"section": "new-area", "rows": [
                                                         {"configuration": "x", "result": "F1 {metrics[f1]:.2f}"}]}}))
    page = gen.render(tmp_path)
    assert "### new-area" in page and "| x | F1 0.75 [detail][y-new] |" in page and "x-plain.json" in page
    (tmp_path / "z-bad.json").write_text(json.dumps({"page": {"section": "s", "rows": [{"result": "{metrics[no]}"}]}}))
    with pytest.raises(gen.PageError, match="z-bad.json"):
        gen.render(tmp_path)


def test_the_template_holds_no_figures():
    """Figures come from the JSON only: the hand-written prose of the page has no measured number in it."""
    template = (REPO / "tools" / "results_template.md").read_text(encoding="utf-8")
    # names and the machine's description are not measurements
    template = re.sub(r"Qwen2\.5|\d+(\.\d+)?B\b|Python 3\.\d+|\d+ GiB of memory", "", template)
    found = re.findall(r"\d+\.\d+|\d+ ?%|\d[\d,]* (?:s|ms|MiB|GiB)\b", template)
    assert not found, f"tools/results_template.md holds figures {found}; put them in a bench/results/*.json"


def _slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@pytest.mark.parametrize("path", sorted((REPO / "bench" / "results").glob("*.json")), ids=lambda p: p.name)
def test_sources_point_at_an_existing_section(path):
    source = json.loads(path.read_text(encoding="utf-8")).get("source")
    if not source or not source.startswith("docs/"):
        pytest.skip(f"{path.name} names no docs/ section")
    file, _, anchor = source.partition("#")
    doc = REPO / file
    assert doc.exists(), f"{path.name}: {file} does not exist"
    slugs = {_slug(m) for m in re.findall(r"^#+ (.+)$", doc.read_text(encoding="utf-8"), re.MULTILINE)}
    assert not anchor or anchor in slugs, f"{path.name}: no heading of {file} has the anchor #{anchor}"
