"""Saving evaluation runs: ranked lists (TREC run format), metrics JSON and a manifest.

A run directory holds ``run.trec`` (``qid Q0 docid rank score tag``), ``metrics.json``, ``per_query.jsonl``
(metrics of each query) and ``manifest.json`` (package version, parameters, corpus hash, time). It is
written to a temp directory and renamed into place.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
from pathlib import Path
from typing import Any, Mapping, Sequence

from legalrag.errors import InputError
from legalrag.io import atomic_dir
from legalrag.types import Hit


def trec_run_lines(hits_by_query: Mapping[str, Sequence[Hit]], tag: str = "legalrag") -> list[str]:
    tag = tag.replace(" ", "_") or "legalrag"
    lines = []
    for qid, hits in hits_by_query.items():
        for h in hits:
            lines.append(f"{qid} Q0 {h.id} {h.rank} {h.score:.6f} {tag}")
    return lines


def write_trec_run(path: str | Path, hits_by_query: Mapping[str, Sequence[Hit]], tag: str = "legalrag") -> None:
    from legalrag.io import atomic_write_text

    bad = [str(q) for q in hits_by_query if not str(q) or any(c.isspace() for c in str(q))]
    if bad:
        raise InputError(f"query ids must be non-empty and without spaces for a TREC run file: {bad[:3]}")
    atomic_write_text(path, "".join(line + "\n" for line in trec_run_lines(hits_by_query, tag)))


def read_trec_run(path: str | Path) -> dict[str, list[str]]:
    """qid -> document ids ordered by rank."""
    rows: dict[str, list[tuple[int, str]]] = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise InputError("expected 6 columns: qid Q0 docid rank score tag", path=str(path), line=lineno)
            try:
                rank = int(parts[3])
            except ValueError:
                raise InputError(f"rank {parts[3]!r} is not an integer", path=str(path), line=lineno) from None
            rows.setdefault(parts[0], []).append((rank, parts[2]))
    return {q: [d for _, d in sorted(v)] for q, v in rows.items()}


def run_manifest(params: Mapping[str, Any], index: Any = None) -> dict[str, Any]:
    from legalrag import __version__

    m: dict[str, Any] = {
        "legalrag_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "parameters": dict(params),
    }
    if index is not None:
        m["index"] = {"path": str(index.path), "corpus": index.manifest.get("corpus"),
                      "components": index.manifest.get("components")}
    return m


def save_run(out_dir: str | Path, hits_by_query: Mapping[str, Sequence[Hit]], metrics: Mapping[str, Any],
             params: Mapping[str, Any], index: Any = None,
             per_query: Mapping[str, Mapping[str, float]] | None = None, tag: str = "legalrag") -> Path:
    out = Path(out_dir)
    with atomic_dir(out) as tmp:
        write_trec_run(tmp / "run.trec", hits_by_query, tag)
        (tmp / "metrics.json").write_text(json.dumps(dict(metrics), ensure_ascii=False, indent=2) + "\n",
                                          encoding="utf-8")
        if per_query is not None:
            (tmp / "per_query.jsonl").write_text(
                "".join(json.dumps({"query_id": q, **m}, ensure_ascii=False) + "\n" for q, m in per_query.items()),
                encoding="utf-8")
        (tmp / "manifest.json").write_text(json.dumps(run_manifest(params, index), ensure_ascii=False, indent=2)
                                           + "\n", encoding="utf-8")
    return out


class RetrievalEvaluation:
    """The outcome of :func:`evaluate_retrieval`: averaged metrics, per-query metrics and the hits."""

    def __init__(self, metrics: dict[str, float], per_query: dict[str, dict[str, float]],
                 hits: dict[str, list[Hit]]):
        self.metrics, self.per_query, self.hits = metrics, per_query, hits


def evaluate_retrieval(searcher: Any, queries: Sequence[Any], k: int = 10, filter: Any = None,
                       progress: bool = False, ks: Sequence[int] | None = None) -> RetrievalEvaluation:
    """Search every query (``legalrag.types.Query``) with a pipeline or retriever and score the rankings.

    ``ks`` are the cut-offs to report (default: just ``k``); retrieval depth is ``max(ks)``.
    """
    from legalrag.evaluation.metrics import evaluate_rankings, per_query_metrics
    from legalrag.retrieval.base import retrieve_many

    ks = tuple(sorted(set(ks or (k,))))
    depth = max(ks)
    texts = [q.text for q in queries]
    batch = getattr(searcher, "search_batch", None)
    if batch is not None:
        results = batch(texts, k=depth, filter=filter, progress=progress)
    else:
        results = retrieve_many(searcher, texts, k=depth, filter=filter, progress=progress)
    hits = {q.id: list(h) for q, h in zip(queries, results)}
    ranked = {qid: [h.id for h in hs] for qid, hs in hits.items()}
    gold = {q.id: set(q.gold_ids) for q in queries}
    metrics = evaluate_rankings(ranked, gold, ks=ks)
    per_query = {q.id: per_query_metrics(ranked[q.id], gold[q.id], ks) for q in queries}
    return RetrievalEvaluation(metrics, per_query, hits)


def load_run(path: str | Path) -> tuple[str, dict[str, list[str]]]:
    """(name, qid -> ranked ids) from a run directory (``run.trec`` inside; the name is the directory's) or a
    TREC run file (the name is the file's stem)."""
    p = Path(path)
    if p.is_dir():
        trec = p / "run.trec"
        if not trec.is_file():
            raise InputError("not a run directory (run.trec missing); write one with "
                             "`legalrag eval retrieval ... --out DIR`", path=str(p))
        return p.name, read_trec_run(trec)
    if not p.is_file():
        raise InputError("no such run directory or TREC run file", path=str(p))
    return p.stem, read_trec_run(p)


def fuse_runs(runs: Mapping[str, Mapping[str, Sequence[str]]], *, k: int = 60,
              weights: Sequence[float] | None = None, depth: int = 100) -> dict[str, list[Hit]]:
    """Reciprocal-rank fusion of saved runs (name -> qid -> ranked ids), query by query, the same fusion as an
    index's ``hybrid`` component; a query missing from a run is fused from the runs that have it. Each hit's
    ``sources`` names the rank every run gave it."""
    from legalrag.retrieval.fusion import reciprocal_rank_fusion
    from legalrag.types import Document

    if len(runs) < 2:
        raise InputError(f"fusion needs at least two runs, got {len(runs)}")
    names = list(runs)
    w = list(weights) if weights is not None else [1.0] * len(names)
    if len(w) != len(names):
        raise InputError(f"{len(w)} weights for {len(names)} runs; give one weight per run, in order")
    qids = sorted({q for ranked in runs.values() for q in ranked})
    out: dict[str, list[Hit]] = {}
    for q in qids:
        lists, used, uw = [], [], []
        for name, wi in zip(names, w):
            ids = runs[name].get(q)
            if ids:
                lists.append([Hit(document=Document(id=d, text=""), score=0.0, rank=r, retriever=name)
                              for r, d in enumerate(ids, 1)])
                used.append(name)
                uw.append(wi)
        out[q] = reciprocal_rank_fusion(lists, k=k, weights=uw, names=used, name="rrf", limit=depth)
    return out
