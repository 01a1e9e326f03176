"""Lines of Python and the places that build an LLM, an encoder or a reranker, at a git revision.

    python tools/code_size.py a5e398f HEAD      # before and after the composition root

A "place" is a module (under src/ or bench/) with at least one call that constructs one of the classes (or,
before the composition root, called the factories that turned a name into one): the figure the wiring
refactor is judged by (target: one module each, in the legalrag/wiring/ package, with bench/ going through it).
"""

from __future__ import annotations

import re
import subprocess
import sys

KINDS = {
    "LLM": r"\b(EmbeddedLLM|OpenAICompatLLM|CachedLLM|XllamaLLM)\(",
    "encoder": r"\b(E5Small|USEMultilingual|SentenceTransformerEncoder|OpenAIEmbeddings)\(|def encoder_from_spec\(|"
               r"\bencoder_from_spec\(",
    "reranker": r"\b(LLMListwiseReranker|LLMPointwiseReranker|LLMYesNoReranker)\(|importlib\.import_module\(module\), func\)\(index",
}


def files(rev: str) -> list[str]:
    out = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "src", "bench"], capture_output=True,
                         text=True, check=True).stdout.split()
    return [f for f in out if f.endswith(".py")]


def show(rev: str, path: str) -> str:
    return subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True).stdout


def measure(rev: str) -> dict:
    lines = {"src": 0, "bench": 0}
    code = {"src": 0, "bench": 0}
    places: dict[str, set[str]] = {k: set() for k in KINDS}
    for path in files(rev):
        text = show(rev, path)
        top = path.split("/")[0]
        lines[top] += text.count("\n")
        code[top] += sum(1 for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#"))
        for kind, pattern in KINDS.items():
            for ln in text.splitlines():
                s = ln.split("#")[0]
                if re.search(pattern, s) and not re.match(r"\s*(class |return f\"|\"\"\"|[A-Za-z ]*``)", s) \
                        and "__repr__" not in s and "f\"" not in s:
                    places[kind].add(path)
    return {"lines": lines, "code_lines": code, "places": {k: sorted(v) for k, v in places.items()}}


def main() -> None:
    revs = sys.argv[1:] or ["HEAD"]
    for rev in revs:
        m = measure(rev)
        print(f"== {rev}: Python lines src {m['lines']['src']} (non-blank, non-comment {m['code_lines']['src']}), "
              f"bench {m['lines']['bench']}")
        for kind, where in m["places"].items():
            src = [w for w in where if w.startswith("src/")]
            print(f"  {kind}: {len(src)} module(s) in src/ {src}; {len(where) - len(src)} in bench/")


if __name__ == "__main__":
    main()
