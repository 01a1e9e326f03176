"""Conversational retrieval: every processor x retriever over every turn, scored overall and per turn.

A processor turns the dialogue up to a turn into a query (``legalrag.answer.processors``); each query is run once
per processor and then searched by every retriever, so an LLM rewrite costs one call per turn whatever the
number of retrievers. Metrics are those of ``evaluation.metrics`` (Recall / nDCG / MRR / Precision at the
cut-offs), macro-averaged over turns with resolved gold, overall and per turn position. Each
processor x retriever pair is saved as a run directory (``evaluation.runs.save_run``) beside one
``queries.jsonl`` of gold, so ``legalrag eval compare RUN_A RUN_B --queries OUT/queries.jsonl`` tests them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from legalrag.evaluation.lexrag.data import ConsultTurn
from legalrag.errors import InputError
from legalrag.types import Hit

KS = (1, 3, 5, 10)
TABLE_METRICS = ("recall", "ndcg", "mrr", "precision")


@dataclass
class PairResult:
    """One processor x retriever: mean metrics overall and per turn position, per-turn metrics, hits."""

    processor: str
    retriever: str
    metrics: dict[str, float]
    by_turn: dict[int, dict[str, float]]
    per_query: dict[str, dict[str, float]]
    hits: dict[str, list[Hit]]
    retrieval_seconds: float  # mean per turn

    @property
    def name(self) -> str:
        return f"{self.processor}+{self.retriever}"


@dataclass
class ConversationEvaluation:
    turns: list[ConsultTurn]
    queries: dict[str, dict[str, str]]  # processor -> turn id -> query text
    processor_seconds: dict[str, float]  # processor -> mean seconds per turn
    processor_errors: dict[str, list[str]]  # processor -> notes (e.g. rewrites that fell back)
    pairs: list[PairResult] = field(default_factory=list)

    def table(self, ks: Sequence[int] = KS, metrics: Sequence[str] = TABLE_METRICS) -> list[dict[str, Any]]:
        rows = []
        for p in self.pairs:
            rows.append({"processor": p.processor, "retriever": p.retriever, "turns": p.metrics.get("n_queries", 0),
                         **{f"{m}@{k}": p.metrics[f"{m}@{k}"] for m in metrics for k in ks}})
        return rows

    def turn_table(self, metric: str = "recall@10") -> list[dict[str, Any]]:
        rows = []
        for p in self.pairs:
            rows.append({"processor": p.processor, "retriever": p.retriever,
                         **{f"turn {n}": p.by_turn[n].get(metric, 0.0) for n in sorted(p.by_turn)}})
        return rows


def gold_repeat(turns: Sequence[ConsultTurn]) -> dict[str, Any]:
    """How often a later turn's gold repeats an article of an earlier turn of its dialogue (resolved ids where the
    gold resolved, else the names as written): the share over all later turns and per turn position. A high rate
    means the dialogue stays on its articles (easy to carry); real consultations move to new points."""
    by_dialogue: dict[str, list[ConsultTurn]] = {}
    for t in turns:
        by_dialogue.setdefault(t.dialogue_id, []).append(t)
    hits: dict[int, list[bool]] = {}
    for rows in by_dialogue.values():
        seen: set[str] = set()
        for t in sorted(rows, key=lambda r: r.turn):
            gold = set(t.gold_ids or t.articles)
            if t.turn > 1:
                hits.setdefault(t.turn, []).append(bool(gold & seen))
            seen |= gold
    later = [x for v in hits.values() for x in v]
    return {"rate": sum(later) / len(later) if later else 0.0, "later_turns": len(later),
            "by_turn": {n: sum(v) / len(v) for n, v in sorted(hits.items())}}


def make_queries(turns: Sequence[ConsultTurn], processor: Callable, progress: bool = False,
                 desc: str = "") -> tuple[dict[str, str], float, list[str]]:
    """(turn id -> query, mean seconds per turn, notes of fallbacks)."""
    it: Any = turns
    if progress:
        from tqdm import tqdm

        it = tqdm(turns, desc=f"queries ({desc})", unit="turn")
    out, notes = {}, []
    t0 = time.perf_counter()
    for t in it:
        out[t.id] = processor(t.turns)
        error = getattr(processor, "last_error", None)
        if error:
            notes.append(f"{t.id}: {error}")
    return out, (time.perf_counter() - t0) / max(len(turns), 1), notes


def _run_searches(searcher: Any, texts: Sequence[str], depth: int) -> list[list[Hit]]:
    from legalrag.retrieval.base import retrieve_many

    batch = getattr(searcher, "search_batch", None)
    return batch(list(texts), k=depth) if batch is not None else retrieve_many(searcher, list(texts), k=depth)


def score_pair(turns: Sequence[ConsultTurn], queries: Mapping[str, str], searcher: Any, ks: Sequence[int],
               processor: str, retriever: str, fusion: Any = None) -> PairResult:
    """Score one processor x retriever. ``fusion``: a processor that retrieves by itself (``fused``); every text
    it searches is run once, in one batch, and its lists are fused per turn."""
    from legalrag.evaluation.metrics import evaluate_rankings, per_query_metrics

    depth = max(ks)
    t0 = time.perf_counter()
    if fusion is not None and hasattr(fusion, "retrieve"):
        texts = list(dict.fromkeys(q for t in turns for q, _, _ in fusion.queries(t.turns)))
        lists = dict(zip(texts, _run_searches(searcher, texts, fusion.depth)))

        def lookup(text: str, n: int) -> list[Hit]:
            return lists[text][:n]

        results = [fusion.retrieve(lookup, t.turns, depth) for t in turns]
    else:
        results = _run_searches(searcher, [queries[t.id] for t in turns], depth)
    seconds = (time.perf_counter() - t0) / max(len(turns), 1)
    hits = {t.id: list(h) for t, h in zip(turns, results)}
    ranked = {q: [h.id for h in hs] for q, hs in hits.items()}
    gold = {t.id: set(t.gold_ids) for t in turns}
    overall = evaluate_rankings(ranked, gold, ks=ks)
    by_turn = {}
    for n in sorted({t.turn for t in turns}):
        ids = {t.id for t in turns if t.turn == n}
        by_turn[n] = evaluate_rankings({q: r for q, r in ranked.items() if q in ids},
                                       {q: g for q, g in gold.items() if q in ids}, ks=ks)
    per_query = {t.id: per_query_metrics(ranked[t.id], gold[t.id], ks) for t in turns if gold[t.id]}
    return PairResult(processor, retriever, overall, by_turn, per_query, hits, seconds)


def evaluate_conversation(turns: Sequence[ConsultTurn], processors: Mapping[str, Callable],
                          searchers: Mapping[str, Any], ks: Sequence[int] = KS,
                          progress: bool = False) -> ConversationEvaluation:
    """Run every processor over every turn, then every retriever over each processor's queries."""
    if not turns:
        raise InputError("no turns to evaluate")
    if not processors or not searchers:
        raise InputError("give at least one processor and one retriever")
    if not any(t.gold_ids for t in turns):
        raise InputError(f"nothing scorable: none of the {len(turns)} turns has a resolved gold article "
                         "(resolve the gold against the index first: consultation.gold.resolve_gold)")
    ks = tuple(sorted(set(ks)))
    result = ConversationEvaluation(list(turns), {}, {}, {})
    for pname, processor in processors.items():
        queries, seconds, notes = make_queries(turns, processor, progress, pname)
        result.queries[pname], result.processor_seconds[pname], result.processor_errors[pname] = queries, seconds, notes
        for rname, searcher in searchers.items():
            result.pairs.append(score_pair(turns, queries, searcher, ks, pname, rname, processor))
    return result


def save_conversation_runs(out_dir: str | Path, result: ConversationEvaluation, params: Mapping[str, Any],
                           gold_report: Mapping[str, Any] | None = None, index: Any = None) -> Path:
    """``OUT/queries.jsonl``, ``OUT/summary.json`` and one run directory per pair, ``OUT/<processor>+<retriever>``
    (each with run.trec, metrics.json with per-turn metrics, per_query.jsonl, queries.jsonl and a manifest)."""
    from legalrag.evaluation.runs import save_run
    from legalrag.io import write_json, write_jsonl

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "queries.jsonl", [{"query_id": t.id, "query": t.question, "gold_ids": list(t.gold_ids),
                                         "turn": t.turn} for t in result.turns if t.gold_ids])
    for p in result.pairs:
        metrics = {**p.metrics, "by_turn": {str(n): m for n, m in p.by_turn.items()},
                   "processor_seconds_per_turn": result.processor_seconds[p.processor],
                   "retrieval_seconds_per_turn": p.retrieval_seconds}
        run_dir = save_run(out / p.name, p.hits, metrics, {**params, "processor": p.processor, "retriever": p.retriever},
                           index=index, per_query=p.per_query, tag=p.name)
        write_jsonl(run_dir / "queries.jsonl", [{"query_id": q, "query": text}
                                                for q, text in result.queries[p.processor].items()])
    write_json(out / "summary.json", {
        "parameters": dict(params), "gold": dict(gold_report or {}), "table": result.table(),
        "recall@10_by_turn": result.turn_table(), "processor_seconds_per_turn": result.processor_seconds,
        "retrieval_seconds_per_turn": {p.name: p.retrieval_seconds for p in result.pairs},
        "processor_notes": result.processor_errors})
    return out


def plot_recall_by_turn(result: ConversationEvaluation, path: str | Path, metric: str = "recall@10") -> Path:
    """One line per processor x retriever: ``metric`` at turn 1..5."""
    from legalrag.evaluation.plots import plot_series

    series = {p.name: [p.by_turn[n].get(metric, 0.0) for n in sorted(p.by_turn)] for p in result.pairs}
    turns = sorted({n for p in result.pairs for n in p.by_turn})
    return plot_series(series, path, x=turns, xlabel="turn", ylabel=metric, title=f"{metric} per turn")
