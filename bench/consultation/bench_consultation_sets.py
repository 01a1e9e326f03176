"""Every conversation processor on every consultation set, and the choice of chat's default on development parts.

    python bench/consultation/bench_consultation_sets.py --retriever hybrid \
        --published runs/consultation/lexrag-published/turn_5.json --out runs/consultation/sets \
        --json bench/results/consultation-sets-hybrid.json

Index: the national-law index the package ships (the default of `chat`, `serve` and `/consult`; built once from
the shipped corpus and vectors). Retriever: one of its components (`bm25`, `hybrid`: chat's default).

Sets (Recall@10 and MRR@10 per turn, all turns, turn 5):

- ``published``: LexRAG's published five-turn consultations (``data/generated_samples/turn_5.json`` of
  github.com/CSHaitao/LexRAG, the first ``--published-limit`` dialogues; not in this repository). Turn 5 is scored
  on its gold; turns 1-4 (their gold is in LexRAG's ``turn_1-4.json``) are scored, when only ``turn_5.json`` is
  at hand, on the articles their reference answer names (LexRAG's reference answers name their gold article: on
  the first 24 dialogues' turn 1 this agrees with turn_1.json in 23 and leaves the other out). Never tuned on.
- ``stard``: ``bench/data/consultations/stard-dialogues`` (our wording of STARD questions): ``dev`` / ``test``.
- ``shifts``: ``bench/data/consultations/topic-shifts`` (written here: later turns bring a new party, a new claim
  or a procedural step): ``dev`` / ``test``.

Processors: ``last``, ``all_questions``, ``full_context``, ``fused``, ``carry``, ``auto`` (carry when the
follow-up is elliptical, fused otherwise) and ``auto`` with other thresholds of its rule (``auto-s0``: an
ellipsis cue needed; ``auto-s10``; ``auto-noun``: no legal noun of its own is enough). ``rewrite`` needs an LLM
call per turn and is not run here. Chat's default is chosen on the development parts only (``stard`` dev and
``shifts`` dev pooled: Recall@10 over turns 2-5, then turn 5), and reported on every held-out part.
Every text any processor searches is searched once at depth 100 and kept in ``OUT/lists-<retriever>.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEPTH = 100
SETS = {"stard": ROOT / "bench/data/consultations/stard-dialogues",
        "shifts": ROOT / "bench/data/consultations/topic-shifts"}


def load_part(path: Path, docs) -> list:
    from legalrag.evaluation.lexrag.data import load_consultations
    from legalrag.evaluation.lexrag.gold import resolve_gold

    rows, _ = resolve_gold(load_consultations(path), docs)
    return [t for t in rows if t.gold_ids]


def load_published(path: Path, docs, limit: int, cited) -> tuple[list, dict]:
    """Turn-5 rows of the first ``limit`` dialogues with their gold, and turns 1-4 rebuilt from their history
    (gold: LexRAG's ``turn_N.json`` beside ``path`` when there, else the articles the reference answer names)."""
    from dataclasses import replace

    from legalrag.evaluation.lexrag.data import ConsultTurn, load_consultations
    from legalrag.evaluation.lexrag.gold import resolve_gold

    rows = load_consultations(path, None, "turns")
    keep = list(dict.fromkeys(t.dialogue_id for t in rows))[:limit]
    rows = [t for t in rows if t.dialogue_id in set(keep)]
    fifth, report = resolve_gold(rows, docs)
    out, source = [t for t in fifth if t.gold_ids], {}
    for t in rows:
        for n in range(1, t.turn):
            earlier = path.parent / f"turn_{n}.json"
            history, question = t.history[:2 * (n - 1)], t.history[2 * (n - 1)].content
            answer = t.history[2 * (n - 1) + 1].content
            row = ConsultTurn(t.dialogue_id, n, tuple(history), question, reference=answer)
            if earlier.is_file():
                source[n] = str(earlier.name)
                given = {r.dialogue_id.removesuffix(f"_turn{n}"): r for r in load_consultations(earlier, None, "turns")}
                g = given.get(t.dialogue_id.removesuffix(f"_turn{t.turn}"))
                if g is None:
                    continue
                row = replace(row, articles=g.articles)
                (row,), _ = resolve_gold([row], docs)
            else:
                source[n] = "the articles the reference answer names"
                row = replace(row, gold_ids=tuple(dict.fromkeys(d.id for d in cited(answer))))
            if row.gold_ids:
                out.append(row)
    return sorted(out, key=lambda r: (r.dialogue_id, r.turn)), {
        "dialogues": len(keep), "turn 5 scored": sum(1 for t in fifth if t.gold_ids),
        "turn 5 left out": report.to_dict() if hasattr(report, "to_dict") else None,
        "gold of turns 1-4": source.get(1, "none")}


def search_lists(index, retriever: str, texts: list[str], cache: Path) -> dict:
    from legalrag.wiring import Root

    lists = json.loads(cache.read_text()) if cache.is_file() else {}
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
            print(f"  {retriever}: {min(i + 64, len(todo))}/{len(todo)} texts ({time.perf_counter() - t0:.0f} s)",
                  file=sys.stderr, flush=True)
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(".tmp")
            tmp.write_text(json.dumps(lists, ensure_ascii=False))
            tmp.replace(cache)
    return lists


def processors(cited) -> dict:
    from legalrag.answer.processors import Auto, ContextFusion, all_questions, full_context, last_question

    return {
        "last": lambda: last_question,
        "all_questions": lambda: all_questions,
        "full_context": lambda: (lambda turns: full_context(turns, "zh")),
        "fused": lambda: ContextFusion(),
        "carry": lambda: __import__("legalrag.answer.carry", fromlist=["FollowUp"]).FollowUp(cited=cited),
        "auto": lambda: Auto(cited=cited),
        "auto-s0": lambda: Auto(short=0, cited=cited),
        "auto-s10": lambda: Auto(short=10, cited=cited),
        "auto-noun": lambda: Auto(short=10 ** 6, cited=cited),
    }


def texts_of(rows, procs) -> list[str]:
    out = []
    for t in rows:
        for make in procs.values():
            p = make()
            out += [q for q, _, _ in p.queries(t.turns)] if hasattr(p, "queries") else [p(t.turns)]
    return out


def scores(proc, rows, lookup) -> dict:
    from legalrag.evaluation.metrics import mrr_at_k, recall_at_k

    out = {}
    for t in rows:
        hits = proc.retrieve(lookup, t.turns, 10) if hasattr(proc, "retrieve") else lookup(proc(t.turns), 10)
        ranked = [h.id for h in hits]
        out[t.id] = {"recall@10": recall_at_k(ranked, set(t.gold_ids), 10), "mrr@10": mrr_at_k(ranked, set(t.gold_ids), 10)}
    return out


def summary(s, rows) -> dict:
    def mean(ids, m):
        return round(sum(s[i][m] for i in ids) / len(ids), 4) if ids else None

    out = {"turns": len(rows)}
    for m in ("recall@10", "mrr@10"):
        out[f"{m} all"] = mean([t.id for t in rows], m)
        out[f"{m} turns 2-5"] = mean([t.id for t in rows if t.turn > 1], m)
        for n in range(1, 6):
            out[f"{m} turn {n}"] = mean([t.id for t in rows if t.turn == n], m)
    out["turn 5 scored"] = sum(t.turn == 5 for t in rows)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--retriever", default="hybrid")
    ap.add_argument("--index", default=None, help="an index directory (default: the shipped national-law index)")
    ap.add_argument("--published", type=Path, help="LexRAG's turn_5.json (or the first dialogues of it)")
    ap.add_argument("--published-limit", type=int, default=40)
    ap.add_argument("--out", type=Path, required=True, help="cache of the searched lists")
    ap.add_argument("--json", help="write the figures here (bench/results format)")
    args = ap.parse_args()

    from legalrag.answer.carry import cited_documents
    from legalrag.answer.per_index import resolver_for
    from legalrag.evaluation.record import paired, write_result
    from legalrag.types import Hit
    from legalrag.wiring import Root

    t_start = time.perf_counter()
    index = Root().index(args.index, snapshot=True)
    docs = {d.id: d for d in index.documents}
    cited = cited_documents(resolver_for(index))
    parts: dict[str, list] = {}
    info: dict[str, object] = {}
    if args.published:
        parts["published"], info["published"] = load_published(args.published, index.documents,
                                                                args.published_limit, cited)
    for name, folder in SETS.items():
        for part in ("dev", "test"):
            if (folder / f"{part}.json").is_file():
                parts[f"{name}-{part}"] = load_part(folder / f"{part}.json", index.documents)
    procs = processors(cited)
    texts = []
    for rows in parts.values():
        texts += texts_of(rows, procs)
    lists = search_lists(index, args.retriever, texts, args.out / f"lists-{args.retriever}.json")
    memo: dict[str, list] = {}

    def lookup(text: str, n: int):
        if text not in memo:
            memo[text] = [Hit(docs[i], s, r, "list") for r, (i, s) in enumerate(lists[text], 1)]
        return memo[text][:n]

    per: dict[str, dict] = {p: {name: scores(make(), rows, lookup) for name, make in procs.items()}
                            for p, rows in parts.items()}
    metrics = {p: {name: summary(s, parts[p]) for name, s in per[p].items()} for p in parts}
    # chat's default: best on the development parts pooled (R@10 over turns 2-5, then turn 5)
    dev = [p for p in parts if p.endswith("-dev")]

    def dev_score(name):
        later = [(p, t.id) for p in dev for t in parts[p] if t.turn > 1]
        fifth = [(p, t.id) for p in dev for t in parts[p] if t.turn == 5]
        return (sum(per[p][name][i]["recall@10"] for p, i in later) / max(len(later), 1),
                sum(per[p][name][i]["recall@10"] for p, i in fifth) / max(len(fifth), 1))

    ranking = sorted(procs, key=lambda n: dev_score(n), reverse=True)
    chosen = ranking[0]
    tests = {}
    for p in parts:
        if p.endswith("-dev"):
            continue
        for name in procs:
            if name == chosen:
                continue
            for label, keep in (("turn 5", lambda t: t.turn == 5), ("all", lambda t: True)):
                ids = [t.id for t in parts[p] if keep(t)]
                if ids:
                    tests[f"{p}: {chosen} vs {name}, R@10 {label}"] = paired(
                        [per[p][chosen][i]["recall@10"] for i in ids], [per[p][name][i]["recall@10"] for i in ids])
    result = {
        "name": f"Consultation: every processor on every consultation set ({args.retriever}, shipped national-law index)",
        "machine_note": "2 cores shared with other jobs",
        "data": "published: LexRAG generated_samples turn_5.json, first "
                f"{args.published_limit} dialogues (not ours); stard: our wording of STARD questions; shifts: "
                "dialogues written here (our data)",
        "retriever": args.retriever,
        "sets": {p: len(r) for p, r in parts.items()},
        "published": info.get("published"),
        "chosen_on_dev": {"default": chosen, "rule": "highest Recall@10 over turns 2-5 on the dev parts pooled, then turn 5",
                          "dev_score": {n: [round(x, 4) for x in dev_score(n)] for n in ranking}},
        "paired_test_parts": tests,
        "seconds": round(time.perf_counter() - t_start, 1),
    }
    table = {p: {n: {k: v for k, v in m.items() if k in ("recall@10 turn 5", "recall@10 all", "recall@10 turns 2-5")}
                 for n, m in metrics[p].items()} for p in metrics}
    print(json.dumps({"turn 5 / all": table, "chosen": result["chosen_on_dev"]}, ensure_ascii=False, indent=1))
    if args.json:
        write_result(args.json, metrics, **result)


if __name__ == "__main__":
    main()
