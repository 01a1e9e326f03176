"""Prompt templates: one Markdown file per task, ``prompts/<name>.md``, rendered into chat messages.

A template is a sequence of sections, each opened by a header line naming the role (``## system``,
``## user``, ``## assistant``; ``###`` works too), whose bodies are Jinja2 templates::

    <!-- variables: question, sources -->
    ## system
    You answer from the sources only.
    ## user
    {{ sources }}
    Question: {{ question }}

The optional ``<!-- variables: ... -->`` line declares the variables; when present, the loader checks at load
time that the template uses exactly those. Either way the variables a template needs are found when it is
loaded, and ``render`` raises ``InputError`` for a missing or an unknown variable, so a typo never silently
yields an empty slot. Syntax errors are reported at load time with file and line.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from legalrag._optional import require
from legalrag.errors import InputError

ROLES = ("system", "user", "assistant")
_HEADER = re.compile(r"^#{2,3}[ \t]*(system|user|assistant)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_DECLARED = re.compile(r"<!--\s*variables\s*:\s*(.*?)\s*-->", re.IGNORECASE | re.DOTALL)
_NAME = re.compile(r"^[A-Za-z0-9_\-]+(/[A-Za-z0-9_\-]+)*$")


@dataclass(frozen=True)
class Prompt:
    """A loaded template: ``sections`` are (role, Jinja2 source) pairs; ``variables`` the names it needs."""

    name: str
    path: str
    sections: tuple[tuple[str, str], ...]
    variables: frozenset[str]

    def render(self, **variables: Any) -> list[dict[str, str]]:
        """Chat messages with the variables filled in; missing or unknown variables raise InputError."""
        given = set(variables)
        missing, unknown = self.variables - given, given - self.variables
        if missing or unknown:
            parts = []
            if missing:
                parts.append(f"missing {sorted(missing)}")
            if unknown:
                parts.append(f"unknown {sorted(unknown)}")
            raise InputError(f"prompt {self.name!r} was rendered with wrong variables: {'; '.join(parts)}. "
                             f"It takes exactly {sorted(self.variables)}", path=self.path)
        env = _env()
        messages = []
        for role, source in self.sections:
            content = env.from_string(source).render(**variables).strip()
            messages.append({"role": role, "content": content})
        return messages


@functools.lru_cache(maxsize=1)
def _env() -> Any:
    jinja2 = require("jinja2", "llm")
    # No HTML escaping (these are prompts, not web pages); undefined names fail loudly.
    return jinja2.Environment(autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def prompts_dir() -> Path:
    return Path(str(resources.files("legalrag"))) / "prompts"


def list_prompts() -> list[str]:
    root = prompts_dir()
    return sorted(p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.md"))


def parse_prompt(text: str, name: str = "<string>", path: str = "<string>") -> Prompt:
    """Parse template text (see the module docstring); errors name the file and line."""
    jinja2 = require("jinja2", "llm")
    meta = require("jinja2.meta", "llm")
    matches = list(_HEADER.finditer(text))
    if not matches:
        raise InputError("no '## system' / '## user' section header found; a template is a list of sections "
                         "opened by '## <role>' lines", path=path)
    head = text[:matches[0].start()]
    declared_m = _DECLARED.search(head)
    stray = _DECLARED.sub(lambda m: "\n" * m.group(0).count("\n"), head)
    if stray.strip():
        line = stray[:len(stray) - len(stray.lstrip())].count("\n") + 1
        raise InputError("text before the first '## <role>' header; move it into a section or delete it",
                         path=path, line=line)
    env = _env()
    sections, found = [], set()
    for i, m in enumerate(matches):
        body = text[m.end():matches[i + 1].start() if i + 1 < len(matches) else len(text)]
        body = body[1:] if body.startswith("\n") else body
        role = m.group(1).lower()
        try:
            ast = env.parse(body)
        except jinja2.TemplateSyntaxError as exc:
            line = text[:m.end()].count("\n") + 1 + (exc.lineno or 1)
            raise InputError(f"template syntax error in the {role} section: {exc.message}", path=path,
                             line=line) from None
        found |= meta.find_undeclared_variables(ast)
        sections.append((role, body))
    if declared_m is not None:
        declared = {v.strip() for v in declared_m.group(1).replace("\n", ",").split(",") if v.strip()}
        if declared != found:
            raise InputError(f"declared variables {sorted(declared)} differ from those the template uses "
                             f"{sorted(found)}: undeclared {sorted(found - declared)}, unused "
                             f"{sorted(declared - found)}; fix the '<!-- variables: ... -->' line", path=path, line=1)
    return Prompt(name=name, path=path, sections=tuple(sections), variables=frozenset(found))


@functools.lru_cache(maxsize=256)
def _load_file(path: str, mtime_ns: int) -> Prompt:
    text = Path(path).read_text(encoding="utf-8")
    return parse_prompt(text, name=Path(path).stem, path=path)


def load_prompt(name: str | os.PathLike) -> Prompt:
    """The template ``prompts/<name>.md`` of the package, or a template file given by path."""
    s = os.fspath(name)
    if s.endswith(".md") or os.sep in s and Path(s).exists():
        path = Path(s)
        if not path.is_file():
            raise InputError("prompt template file not found", path=s)
    else:  # a packaged template
        if not _NAME.match(s):
            raise InputError(f"bad prompt name {s!r}: use letters, digits, '_', '-' and '/' only")
        path = prompts_dir() / f"{s}.md"
        if not path.is_file():
            raise InputError(f"no prompt template named {s!r} (looked for {path}); available: "
                             f"{', '.join(list_prompts()) or 'none'}")
        prompt = _load_file(str(path), path.stat().st_mtime_ns)
        return replace(prompt, name=s)
    return _load_file(str(path), path.stat().st_mtime_ns)


def render_prompt(name: str | os.PathLike, **variables: Any) -> list[dict[str, str]]:
    """The chat messages of template ``name`` with exactly its variables filled in (a missing or unknown
    variable is an InputError). The one way every stage turns a template into messages."""
    return load_prompt(name).render(**variables)


def article_block(doc: Any, max_chars: int) -> str:
    """A document (title and text) for a prompt, the text's whitespace folded and cut to ``max_chars``
    characters (an ellipsis marks the cut)."""
    text = " ".join(doc.text.split())
    if len(text) > max_chars:
        text = text[:max_chars] + "…"
    return f"{doc.title}\n{text}" if doc.title else text


__all__ = ["Prompt", "ROLES", "article_block", "list_prompts", "load_prompt", "parse_prompt", "prompts_dir", "render_prompt"]
