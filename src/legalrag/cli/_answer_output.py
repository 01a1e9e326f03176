"""How the CLI prints an answer: the text, then every citation with its mark (✓ supported, ? exists but not shown
to support its sentence, ✗ not found, ↻ repealed, ∅ no corpus for the jurisdiction)."""

from __future__ import annotations

import sys
from typing import Any, Sequence

from legalrag.answer.question import answer_question
from legalrag.lang import legal_notice
from legalrag.serialize import answer_notes
from legalrag.llm.base import LLM
from legalrag.types import Answer, Hit


class TerminalStream:
    """An ``on_text`` callback that writes each piece to standard output as it comes and keeps them, so the caller
    can tell whether the final answer still needs printing (a rewritten reply, a model that failed part-way)."""

    def __init__(self) -> None:
        self.pieces: list[str] = []

    def __call__(self, piece: str) -> None:
        self.pieces.append(piece)
        sys.stdout.write(piece)
        sys.stdout.flush()

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def showed(self, final: str) -> bool:
        """Whether what was streamed is ``final`` (whitespace at either end aside)."""
        return self.text.strip() == final.strip()


def print_answer(answer: Answer, console: Any = None, show_text: bool = True, route: str = "",
                 note: str = "") -> None:
    """Human output: the answer (unless it was already streamed), then each citation with its mark."""
    from rich.console import Console
    from rich.markup import escape

    console = console or Console()
    if show_text:
        console.print(answer.text.strip(), highlight=False, markup=False)
    console.print()
    declined = next((st.output for st in answer.steps if st.agent == "guard"
                     and st.action in ("injection", "not_covered")), None)
    if declined is not None:
        pass  # a one-line explanation: no citations to check
    elif not answer.citations:
        console.print("[yellow]The answer cites no article: nothing in it is shown to be supported.[/yellow]")
    else:
        console.print("[bold]Citations checked against the corpus:[/bold]")
        for c in answer.citations:
            console.print("  " + citation_line(c, escape), highlight=False)
    for line in answer_notes(answer) + ([note] if note else []):
        console.print(f"[yellow]Note: {escape(line)}[/yellow]", highlight=False)
    console.print(f"[bold]{escape(legal_notice(answer.question))}[/bold]", highlight=False)
    t = answer.timings
    console.print(f"[dim]retrieval {t.get('retrieval_s', 0):.2f} s, first token after {t.get('ttft_s', 0):.2f} s, "
                  f"generation {t.get('generation_s', 0):.2f} s "
                  f"({answer.usage.completion_tokens} tokens{', cached' if answer.usage.cached_calls else ''}), "
                  f"citation check {t.get('citation_check_s', 0):.2f} s"
                  f"{'; model: ' + escape(route) if route else ''}[/dim]")


MARK_STYLE = {"supported": ("green", "✓ SUPPORTED"), "exists": ("yellow", "? EXISTS"),
              "not_found": ("bold red", "✗ NOT FOUND"), "repealed": ("bold red", "↻ REPEALED"),
              "no_corpus": ("blue", "∅ NO CORPUS")}


def citation_line(c: Any, escape: Any = str) -> str:
    """One Rich line for a checked citation: its mark (✓ only for supported) and why."""
    from legalrag.citecheck.marks import mark_line

    name = escape(c.canonical or c.text)
    if c.mark in MARK_STYLE:
        style, label = MARK_STYLE[c.mark]
        target = f" -> {escape(c.document_id)}" if c.document_id else ""
        cur = getattr(c, "currency", None) or {}  # beside the support mark: "· amended 2023-12-29"
        since = f" · {escape(str(cur['label']))}" if cur.get("status") not in (None, "current", "unknown") else ""
        return f"[{style}]{label:<13}[/{style}] {name}{target}{since}: {escape(mark_line(c))}"
    if not c.resolved:  # checked for existence only (an older caller)
        why = f" ({escape(c.note)})" if c.note else ""
        return f"[bold red]UNRESOLVED[/bold red]    {name}{why}"
    return f"[yellow]EXISTS[/yellow]        {name} -> {escape(c.document_id or '')} (support not checked)"


def demo_answer(question: str, index: Any, hits: Sequence[Hit], console: Any, llm: LLM,
                max_tokens: int = 300, support: Any = None) -> Answer | None:
    """The demo's last step: answer from ``hits`` with ``llm`` (the CLI passes the cached embedded 1.5B) and
    print the citations checked by ``support`` (the root's support model). Without the model installed, say how to install it instead of failing the
    whole demo."""
    from legalrag.errors import MissingDependencyError, ModelError

    console.print(f"\n[bold]Answer[/bold] ({llm.model_id}, from the articles above):", highlight=False)
    try:
        answer = answer_question(question, index, llm, k=len(hits), max_tokens=max_tokens,
                                 search=lambda q, k: list(hits), support=support)
    except (MissingDependencyError, ModelError) as exc:
        console.print(f"[yellow]No answer: {exc}[/yellow]", highlight=False)
        return None
    print_answer(answer, console)
    return answer
