"""What the LexRAG commands share (`eval conversation`, `eval consultation-*`): the help texts, reading
the turns with their gold resolved, and printing a table."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from legalrag.answer.processors import DEFAULT_PROCESSOR, PROCESSORS


_PROCESSOR_HELP = (f"How the dialogue becomes a search each turn, as `chat --processor` offers: {', '.join(PROCESSORS)} "
                   f"(default: chat's, {DEFAULT_PROCESSOR}). last: the last question; all_questions: every question; "
                   "full_context: the whole dialogue; fused: one search per turn, fused; carry: fused plus the "
                   "articles the consultation established, kept while the topic holds; auto: carry for a follow-up that names no "
                   "legal matter of its own, fused otherwise; rewrite: the LLM rewrites the "
                   "question (one model call per turn).")

_DATA_HELP = ("LexRAG data: dialogues (dataset.json) or per-turn items (turn_N.json), a JSON array or JSON Lines "
              "under any name, or a directory of turn_N.json files.")


def _load_turns(data: Path, index, turns: int, limit: Optional[int], fmt: str = "auto"):
    """The turns with gold resolved against ``index``; every excluded turn, unresolved name and text mismatch
    is printed by name, and a run with nothing to score is an error."""
    from legalrag.evaluation.lexrag.data import load_consultations
    from legalrag.evaluation.lexrag.gold import require_scorable, resolve_gold

    rows = load_consultations(data, turns or None, fmt)
    if limit:
        keep = list(dict.fromkeys(t.dialogue_id for t in rows))[:limit]
        rows = [t for t in rows if t.dialogue_id in set(keep)]
    rows, report = resolve_gold(rows, index.documents)
    for line in report.notices(limit=20):
        typer.echo(line, err=True)
    require_scorable(rows, report)
    return rows, report


def _table(title: str, rows: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    if not rows:
        return
    table = Table(title=title)
    for key in rows[0]:
        table.add_column(key, justify="left" if key in ("processor", "retriever", "setting") else "right")
    for row in rows:
        table.add_row(*[f"{v:.4f}" if isinstance(v, float) else "-" if v is None else str(v) for v in row.values()])
    Console(width=200).print(table)
