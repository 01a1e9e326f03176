"""`legalrag demo`: search the default index (China's national law, shipped with legalrag) and show the articles
it cites; with --answer, answer with the embedded model and check the citations."""

from __future__ import annotations

from typing import Optional

import typer

from legalrag.cli.apps import app
from legalrag.cli.common import root


@app.command("demo")
def demo(
    ctx: typer.Context,
    question: Optional[str] = typer.Argument(None, help="A layperson's legal question (Chinese)."),
    k: int = typer.Option(5, "--k", min=1, help="Number of articles to show."),
    answer: bool = typer.Option(False, "--answer/--no-answer",
                                help="Also answer with the embedded 1.5B and check its citations (make demo does)."),
) -> None:
    """Show the top articles of the default index (national law, built once on first use) for a question."""
    from rich.console import Console

    from legalrag.demo import SAMPLE_QUESTION, demo_hits, describe_index
    from legalrag.citecheck import citation_label

    q = question or SAMPLE_QUESTION
    index = root(ctx).index(progress=True)
    hits = demo_hits(q, k=k, index=index)
    console = Console()
    console.print(f"[bold]Question:[/bold] {q}")
    console.print(describe_index(index), highlight=False)
    if not hits:
        console.print("No article shares a word with the question; try rephrasing it.")
        return
    for h in hits:
        console.print(f"\n[bold][{h.rank}] {citation_label(h.document)}[/bold]  ({index.default} {h.score:.3f})",
                      highlight=False)
        console.print(h.document.text.strip(), highlight=False, markup=False)
    console.print("\n[bold]Cited articles:[/bold] " + "; ".join(citation_label(h.document) for h in hits),
                  highlight=False)
    if answer:  # the LLM layer's step (legalrag.answer.question): generate from these hits, check every citation
        from legalrag.cli._answer_output import demo_answer

        demo_answer(q, index, hits, console, root(ctx).make_llm("qwen2.5-coder-1.5b"),
                    support=root(ctx).make_support_scorer())
