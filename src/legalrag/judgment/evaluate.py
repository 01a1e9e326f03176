"""File-level entry point for the JuDGE evaluation (what ``legalrag eval judgment`` calls)."""

from __future__ import annotations

import os

from legalrag.judgment.io import load_judgments
from legalrag.judgment.metrics import JudgmentReport, evaluate
from legalrag.judgment.textmetrics import TextScores


def evaluate_files(pred_path: str | os.PathLike, gold_path: str | os.PathLike, *, text_metrics: bool = True,
                   progress: bool = False) -> tuple[JudgmentReport, TextScores | None]:
    """Score a predictions file against a gold file; predicted ids missing from gold are ignored."""
    gold = load_judgments(gold_path, strict=True)
    pred = load_judgments(pred_path, strict=False)
    report = evaluate(pred, gold, progress=progress)
    text = None
    if text_metrics:
        from legalrag.judgment.textmetrics import text_scores

        text = text_scores(pred, gold, progress=progress)
    return report, text
