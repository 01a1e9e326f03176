"""File-level entry point for the JuDGE evaluation (what ``legalrag eval judgment`` calls)."""

from __future__ import annotations

import os

from legalrag.errors import InputError
from legalrag.judgment.io import load_judgments
from legalrag.judgment.metrics import JudgmentReport, evaluate_judgments
from legalrag.judgment.textmetrics import TextScores


def evaluate_files(pred_path: str | os.PathLike, gold_path: str | os.PathLike, *, text_metrics: bool = True,
                   progress: bool = False, include_missing: bool = False) -> tuple[JudgmentReport, TextScores | None]:
    """Score a predictions file against a gold file; predicted ids missing from gold are ignored.

    By default only the gold cases that have a prediction are scored (a file of the evaluation split scores that
    split), and the report says how many gold cases had none; ``include_missing`` scores those as empty
    judgments (the benchmark's convention when a run should cover every case). A file that shares no id with
    the gold file is an error."""
    gold = load_judgments(gold_path, strict=True)
    pred = load_judgments(pred_path, strict=False)
    if not any(i in pred for i in gold):
        raise InputError(f"none of the {len(pred)} predicted ids is in the gold file ({len(gold)} cases); check that "
                         "both files use the same case ids", path=str(pred_path))
    report = evaluate_judgments(pred, gold, progress=progress, skip_missing=not include_missing)
    gold = {i: g for i, g in gold.items() if include_missing or i in pred}
    text = None
    if text_metrics:
        from legalrag.judgment.textmetrics import text_scores

        text = text_scores(pred, gold, progress=progress)
    return report, text
