"""Retrieval that follows a consultation: every conversation processor on the STARD-grounded consultations.

    python bench/consultation/bench_consultation_follow.py --index indexes/stard-ft --retriever bm25 \
        --data bench/data/consultations/stard-dialogues --out runs/consultation/follow \
        --json bench/results/consultation-follow-bm25.json

The consultations (``tools/make_consultations.py``; their wording is ours, built from STARD training questions)
come in a development part (``dev.json``) and a test part (``test.json``), split before anything was tuned.
Every text any processor searches is searched once per retriever at depth 100 and kept in
``OUT/lists-<retriever>.json`` (a rerun reads it). Processors:

- ``last``, ``all_questions``: one query string each;
- ``fused``: today's default (the shipped :class:`legalrag.answer.processors.ContextFusion` weights);
- ``fused-dev``: ``fused`` with its weights chosen on the development part (the grid of
  ``bench_consultation_query.py``);
- ``carry``: :class:`legalrag.answer.carry.FollowUp` with its shipped defaults, and ``carry-dev`` with the weights a
  coordinate search chose on the development part (Recall@10 at turns 2-5, then MRR@10);
- ``carry-nocite``: ``carry`` without the articles the earlier answers cite (what retrieval alone carries).

On the test part: Recall@10 and MRR@10 per turn, each processor against ``fused`` by a paired randomization
test over the turns of each position, and the dev-test gap. ``--cost`` times a live consultation (the searches
run, nothing precomputed) per processor, including a 30-turn consultation made of six dialogues in a row.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KS = (10,)
DEPTH = 100
FUSED_GRID = {"question_decay": (0.0, 0.2, 0.5), "answer_weight": (0.0, 0.25, 1.0), "law_prior": (0.0, 2.0, 4.0, 8.0)}
CARRY_GRID = {"context_weight": (0.0, 0.25, 0.5, 1.0), "law_prior": (0.0, 1.0, 2.0, 4.0),
              "carry_same": (0.0, 0.5, 1.0, 2.0), "carry_new": (0.0, 0.1, 0.25, 0.5),
              "history_new": (0.0, 0.25, 0.5, 1.0), "law_prior_new": (0.0, 0.5, 1.0, 2.0),
              "short_question": (0, 4, 6, 8), "carry_top": (1, 3, 5),
              "question_decay": (0.1, 0.2, 0.35), "answer_weight": (0.0, 0.25, 0.5),
              "moved_share": (0.0, 0.1, 0.2, 0.3)}


def load(path: Path, docs) -> list:
    from legalrag.evaluation.lexrag.data import load_consultations
    from legalrag.evaluation.lexrag.gold import resolve_gold

    rows, report = resolve_gold(load_consultations(path), docs)
    if report.scored < len(rows):
        print(f"{path.name}: {len(rows) - report.scored} turns without resolved gold", file=sys.stderr)
    return [t for t in rows if t.gold_ids]


def search_lists(index, retriever: str, texts: list[str], cache: Path) -> dict[str, list[tuple[str, float]]]:
    from legalrag.wiring import Root

    lists: dict[str, list[tuple[str, float]]] = json.loads(cache.read_text()) if cache.is_file() else {}
    todo = [t for t in dict.fromkeys(texts) if t not in lists]
    if todo:
        pipe = Root().build_pipeline(index, retriever=retriever)
        t0 = time.perf_counter()
        for i in range(0, len(todo), 64):
            batch = todo[i:i + 64]
            results = pipe.search_batch(batch, k=DEPTH) if hasattr(pipe, "search_batch") else [
                pipe.search(t, k=DEPTH) for t in batch]
            for t, hits in zip(batch, results):
                lists[t] = [(h.id, float(h.score)) for h in hits]
            print(f"  {retriever}: {min(i + 64, len(todo))}/{len(todo)} texts searched "
                  f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(".tmp")
            tmp.write_text(json.dumps(lists, ensure_ascii=False))
            tmp.replace(cache)
    return lists


def make_lookup(lists, docs):
    from legalrag.types import Hit

    memo: dict[str, list] = {}

    def lookup(text: str, n: int):
        if text not in memo:
            memo[text] = [Hit(docs[i], s, r, "list") for r, (i, s) in enumerate(lists[text], 1)]
        return memo[text][:n]

    return lookup


def rankings(processor, turns, lookup) -> dict[str, list[str]]:
    out = {}
    for t in turns:
        if hasattr(processor, "retrieve"):
            hits = processor.retrieve(lookup, t.turns, 10)
        else:
            hits = lookup(processor(t.turns), 10)
        out[t.id] = [h.id for h in hits]
    return out


def per_turn(ranked, turns) -> dict[str, dict[str, float]]:
    from legalrag.evaluation.metrics import mrr_at_k, recall_at_k

    return {t.id: {"recall@10": recall_at_k(ranked[t.id], set(t.gold_ids), 10),
                   "mrr@10": mrr_at_k(ranked[t.id], set(t.gold_ids), 10)} for t in turns}


def summary(scores, turns) -> dict:
    out = {}
    for metric in ("recall@10", "mrr@10"):
        out[metric] = round(sum(scores[t.id][metric] for t in turns) / len(turns), 4)
        for n in range(1, 6):
            ids = [t.id for t in turns if t.turn == n]
            out[f"{metric} turn {n}"] = round(sum(scores[i][metric] for i in ids) / max(len(ids), 1), 4)
    later = [t for t in turns if t.turn > 1]
    out["recall@10 turns 2-5"] = round(sum(scores[t.id]["recall@10"] for t in later) / max(len(later), 1), 4)
    return out


def objective(scores, turns) -> tuple[float, float]:
    later = [t for t in turns if t.turn > 1]
    return (sum(scores[t.id]["recall@10"] for t in later) / len(later),
            sum(scores[t.id]["mrr@10"] for t in later) / len(later))


def tune(make, grid, start, turns, lookup, passes: int = 1) -> tuple[dict, tuple[float, float], int]:
    """Coordinate search: each parameter in turn over its grid values, the others held; ``passes`` rounds."""
    best = dict(start)
    best_score = objective(per_turn(rankings(make(best), turns, lookup), turns), turns)
    tried = 1
    for _ in range(passes):
        changed = False
        for name, values in grid.items():
            for v in values:
                if v == best[name]:
                    continue
                cand = {**best, name: v}
                score = objective(per_turn(rankings(make(cand), turns, lookup), turns), turns)
                tried += 1
                if score > best_score:
                    best, best_score, changed = cand, score, True
                    print(f"  carry {best} -> {score[0]:.4f} / {score[1]:.4f}", file=sys.stderr, flush=True)
        if not changed:
            break
    return best, best_score, tried


def grid_search(make, grid, turns, lookup) -> tuple[dict, tuple[float, float], int]:
    best, best_score, tried = None, (-1.0, -1.0), 0
    for values in itertools.product(*grid.values()):
        params = dict(zip(grid, values))
        score = objective(per_turn(rankings(make(params), turns, lookup), turns), turns)
        tried += 1
        if score > best_score:
            best, best_score = params, score
    return best, best_score, tried


def paired(a_scores, b_scores, turns, metric) -> dict:
    from legalrag.evaluation.compare import paired_randomization_test

    out = {}
    for label, ids in [("all", [t.id for t in turns])] + [
            (f"turn {n}", [t.id for t in turns if t.turn == n]) for n in range(1, 6)]:
        a = [a_scores[i][metric] for i in ids]
        b = [b_scores[i][metric] for i in ids]
        out[label] = {"diff": round(sum(b) / len(b) - sum(a) / len(a), 4),
                      "p": round(paired_randomization_test(a, b), 4)}
    return out


def live_cost(index, retriever, processors, dialogues, resolver) -> dict:
    """Seconds per turn of each processor in a live consultation (searches run), five-turn dialogues and one
    30-turn consultation (six dialogues in a row): mean, and the mean of turns 26-30 for the long one."""
    from legalrag.evaluation.lexrag.data import ConsultTurn  # noqa: F401 (shape of the rows)
    from legalrag.types import Turn
    from legalrag.wiring import Root

    pipe = Root().build_pipeline(index, retriever=retriever)

    def search(q, n):
        return pipe.search(q, k=n)

    out = {}
    for name, make in processors.items():
        times = []
        for d in dialogues[:3]:
            proc = make()
            history: list[Turn] = []
            for t in d:
                turns = history + [Turn("user", t.question)]
                t0 = time.perf_counter()
                if hasattr(proc, "retrieve"):
                    proc.retrieve(search, turns, 10)
                else:
                    search(proc(turns), 10)
                times.append(time.perf_counter() - t0)
                history = turns + [Turn("assistant", t.reference)]
        proc = make()
        history, long_times = [], []
        for d in dialogues[6:12]:
            for t in d:
                turns = history + [Turn("user", t.question)]
                t0 = time.perf_counter()
                if hasattr(proc, "retrieve"):
                    proc.retrieve(search, turns, 10)
                else:
                    search(proc(turns), 10)
                long_times.append(time.perf_counter() - t0)
                history = turns + [Turn("assistant", t.reference)]
        out[name] = {"seconds_per_turn": round(sum(times) / len(times), 4),
                     "thirty_turns_seconds_per_turn": round(sum(long_times) / len(long_times), 4),
                     "thirty_turns_last5_seconds_per_turn": round(sum(long_times[-5:]) / 5, 4),
                     "turns_timed": len(times) + len(long_times)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True)
    ap.add_argument("--retriever", default="bm25")
    ap.add_argument("--data", default=str(ROOT / "bench/data/consultations/stard-dialogues"))
    ap.add_argument("--out", required=True, help="cache of the searched lists")
    ap.add_argument("--json", help="write the figures here (bench/results format)")
    ap.add_argument("--cost", action="store_true", help="also time live consultations")
    ap.add_argument("--name", default=None)
    ap.add_argument("--chosen-from", help="take fused-dev / carry-dev's weights from another result of this script "
                    "(chosen on the development part with another retriever) instead of tuning here")
    ap.add_argument("--parts", default="dev,test", help="which parts to score: dev,test or test")
    args = ap.parse_args()

    from legalrag.answer.carry import FollowUp, cited_documents
    from legalrag.answer.per_index import resolver_for
    from legalrag.answer.processors import ContextFusion, all_questions, last_question
    from legalrag.wiring import Root

    t_start = time.perf_counter()
    index = Root().index(args.index, snapshot=True)
    docs = {d.id: d for d in index.documents}
    data = Path(args.data)
    parts_wanted = [p.strip() for p in args.parts.split(",") if p.strip()]
    test = load(data / "test.json", index.documents)
    dev = load(data / "dev.json", index.documents) if "dev" in parts_wanted else []
    resolver = resolver_for(index)
    cited = cited_documents(resolver)

    def carry(params=None, cite=True):
        return FollowUp(cited=cited if cite else None, **(params or {}))

    probe = FollowUp(context_weight=0.5, question_decay=0.2, answer_weight=0.25)
    texts = []
    for t in test + dev:  # the test part's texts first: with little time, its figures come first
        texts += [last_question(t.turns), all_questions(t.turns)]
        texts += [q for q, _, _ in ContextFusion(question_decay=0.5, answer_weight=1.0).queries(t.turns)]
        texts += [q for q, _, _ in probe.queries(t.turns)]
    lists = search_lists(index, args.retriever, texts, Path(args.out) / f"lists-{args.retriever}.json")
    lookup = make_lookup(lists, docs)

    if args.chosen_from:
        chosen = json.loads(Path(args.chosen_from).read_text(encoding="utf-8"))["chosen_on_dev"]
        fused_best, carry_best = chosen["fused-dev"], chosen["carry-dev"]
        fused_tried = carry_tried = f"chosen on dev with {args.chosen_from}"
    else:
        fused_best, fused_score, fused_tried = grid_search(lambda p: ContextFusion(**p), FUSED_GRID, dev, lookup)
        print(f"fused-dev: {fused_best} -> dev R@10 turns 2-5 {fused_score[0]:.4f} ({fused_tried} settings)",
              file=sys.stderr)
        defaults = FollowUp().params()
        start = {k: defaults[k] for k in CARRY_GRID}
        carry_best, carry_score, carry_tried = tune(lambda p: carry(p), CARRY_GRID, start, dev, lookup)
        print(f"carry-dev: {carry_best} -> dev R@10 turns 2-5 {carry_score[0]:.4f} ({carry_tried} settings)",
              file=sys.stderr)

    processors = {
        "last": lambda: last_question,
        "all_questions": lambda: all_questions,
        "fused": lambda: ContextFusion(),
        "fused-dev": lambda: ContextFusion(**fused_best),
        "carry": lambda: carry(),
        "carry-nocite": lambda: carry(cite=False),
        "carry-dev": lambda: carry(carry_best),
    }
    parts = {}
    scores = {}
    for part, turns in (("dev", dev), ("test", test)):
        if not turns:
            continue
        scores[part] = {name: per_turn(rankings(make(), turns, lookup), turns) for name, make in processors.items()}
        parts[part] = {name: summary(s, turns) for name, s in scores[part].items()}
    tests = {name: {m: paired(scores["test"]["fused"], scores["test"][name], test, m)
                    for m in ("recall@10", "mrr@10")} for name in processors if name != "fused"}
    gap = {name: round(parts["dev"][name]["recall@10 turn 5"] - parts["test"][name]["recall@10 turn 5"], 4)
           for name in processors} if "dev" in parts else None
    result = {
        "name": args.name or f"Consultation: retrieval that follows the dialogue ({args.retriever})",
        "machine_note": "shared with other jobs",
        "data": f"{data.relative_to(ROOT) if data.is_absolute() and ROOT in data.parents else data} (our wording, "
                f"built by tools/make_consultations.py from STARD training questions): dev {len(dev)} turns scored"
                f"{'' if dev else ' (not scored here)'}, test {len(test)} turns",
        "retriever": args.retriever,
        "chosen_on_dev": {"fused-dev": fused_best, "carry-dev": carry_best,
                          "settings_tried": {"fused-dev": fused_tried, "carry-dev": carry_tried}},
        "metrics": {"test": parts["test"], **({"dev": parts["dev"]} if "dev" in parts else {})},
        "paired_vs_fused_test": tests,
        "dev_minus_test_recall@10_turn5": gap,
    }
    if args.cost:
        from legalrag.evaluation.lexrag.data import load_consultations

        rows = load_consultations(data / "test.json")
        by_d: dict[str, list] = {}
        for t in sorted(rows, key=lambda t: (t.dialogue_id, t.turn)):
            by_d.setdefault(t.dialogue_id, []).append(t)
        result["cost"] = live_cost(index, args.retriever, {
            "last": lambda: last_question, "fused": lambda: ContextFusion(),
            "carry-dev": lambda: carry(carry_best)}, list(by_d.values()), resolver)
    result["seconds"] = round(time.perf_counter() - t_start, 1)
    print(json.dumps(result, ensure_ascii=False, indent=1))
    if args.json:
        from legalrag.evaluation.record import write_result

        write_result(args.json, **result)


if __name__ == "__main__":
    main()
