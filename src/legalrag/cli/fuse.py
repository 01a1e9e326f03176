"""`legalrag eval fuse`: reciprocal-rank fusion of saved runs (e.g. BM25 and a fine-tuned encoder's dev run
written by `legalrag train encoder`), saved as a run that `eval compare` tests like any other."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from legalrag.cli.apps import eval_app
from legalrag.cli.common import JsonOption, print_json


@eval_app.command("fuse")
def eval_fuse(
    runs: List[Path] = typer.Argument(..., help="Run directories (`eval retrieval --run-out`) or TREC run files."),
    out: Path = typer.Option(..., "--out", help="Run directory to write (run.trec and a manifest)."),
    rrf_k: int = typer.Option(60, "--rrf-k", min=0, help="RRF constant: score = sum w / (k + rank)."),
    weights: Optional[str] = typer.Option(None, "--weights", help="Comma-separated weights, one per run, in order."),
    depth: int = typer.Option(100, "--depth", min=1, help="Fused documents kept per query."),
    as_json: JsonOption = False,
) -> None:
    """Fuse saved runs with reciprocal-rank fusion into a new run directory."""
    from legalrag.errors import InputError
    from legalrag.evaluation.runs import fuse_runs, load_run, save_run

    loaded: dict[str, dict[str, list[str]]] = {}
    for path in runs:
        name, ranked = load_run(path)
        while name in loaded:
            name += "'"
        loaded[name] = ranked
    w = None
    if weights:
        try:
            w = [float(x) for x in weights.split(",")]
        except ValueError as exc:
            raise InputError(f"--weights must be numbers separated by commas, got {weights!r}") from exc
    fused = fuse_runs(loaded, k=rrf_k, weights=w, depth=depth)
    params = {"fused": [str(p) for p in runs], "names": list(loaded), "rrf_k": rrf_k, "weights": w, "depth": depth}
    save_run(out, fused, {}, params, tag="rrf")
    summary = {"out": str(out), "runs": list(loaded), "n_queries": len(fused), "rrf_k": rrf_k, "weights": w}
    if as_json:
        print_json(summary)
        return
    typer.echo(f"fused {len(loaded)} runs ({', '.join(loaded)}) over {len(fused)} queries into {out}")
