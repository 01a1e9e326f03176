"""Which query for turn N: every processor with every retriever on the 100 invented turns, and the fused
processor's weights chosen by cross-validation over dialogues.

    python bench/consultation/bench_consultation_query.py --index indexes/stard-ft --retriever bm25 \
        --retriever dense-stard-e5 --retriever hybrid --baseline last+hybrid \
        --out runs/consultation/query --json bench/results/consultation-query.json

For each retriever (an index component by name) every text a processor searches (each question, each answer,
all questions joined, the labelled dialogue) is searched once at depth 100 and the lists are kept in
``OUT/lists-<retriever>.json`` (a rerun reads them). ``last``, ``all_questions`` and ``full_context`` are then
scored from those lists; ``fused`` runs the shipped :class:`legalrag.answer.processors.ContextFusion` over
them with its defaults, and ``fused-cv`` with the weights chosen on the other folds (5 folds of whole dialogues,
the grid below, Recall@10 then nDCG@10), so no turn is scored with weights chosen on it.

``--pool DIR --pool-model M`` adds ``pool-M`` and ``pool-hybrid-M``: a dense retriever over a candidate pool only
(the vectors of ``DIR/pool_M.json``'s documents and texts, e.g. untrained USE or e5-small), fused with BM25 by
reciprocal rank. Pool figures are not full-corpus figures: the pool holds the gold and BM25's top hits, so a
dense ranking over it meets far fewer distractors than over the 55k articles.

``--cost RETRIEVER`` times a live consultation per processor (each dialogue asked turn by turn, the fused
processor's cache kept within a dialogue), in seconds per turn on this machine.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from pathlib import Path

GRID = {"question_decay": (0.0, 0.1, 0.2, 0.35, 0.5), "answer_weight": (0.0, 0.25, 0.5, 0.75, 1.0),
        "law_prior": (0.0, 1.0, 2.0, 4.0, 8.0, 16.0)}
RULES = ("last", "all_questions", "full_context")
FOLDS = 5
DEPTH = 100


def texts_of(turns) -> list[str]:
    from legalrag.answer.processors import all_questions, full_context

    out = {}
    for t in turns:
        for h in t.turns:
            out[" ".join(h.content.split())] = 1
        out[all_questions(t.turns)] = 1
        out[full_context(t.turns)] = 1
    return [x for x in out if x]


def search_lists(idx, name: str, texts: list[str], path: Path) -> dict[str, list[tuple[str, float]]]:
    """text -> [(doc id, score)] at DEPTH, read from ``path`` when it holds every text."""
    from legalrag.wiring import Root

    cached = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    todo = [x for x in texts if x not in cached]
    if todo:
        pipe = Root().build_pipeline(idx, retriever=name)
        t0 = time.perf_counter()
        for x, hits in zip(todo, pipe.search_batch(todo, k=DEPTH, progress=True)):
            cached[x] = [(h.id, float(h.score)) for h in hits]
        print(f"# {name}: {len(todo)} texts searched in {time.perf_counter() - t0:.1f} s", flush=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(cached, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)
    return cached


def pool_lists(pool_dir: Path, model: str, bm25: dict, texts: list[str]) -> tuple[dict, dict]:
    """pool-dense and pool-hybrid (RRF of full-corpus BM25 and pool dense) lists from saved pool vectors."""
    import numpy as np

    meta = json.loads((pool_dir / f"pool_{model}.json").read_text(encoding="utf-8"))
    docs = np.load(pool_dir / f"pool_{model}_docs.npy")
    queries = {}
    for x, v in zip(meta["texts"], np.load(pool_dir / f"pool_{model}_queries.npy")):
        queries[x] = queries[" ".join(x.split())] = v
    ids = meta["pool"]
    dense, hybrid = {}, {}
    for x in texts:
        if x not in queries:
            continue
        scores = docs @ queries[x]
        top = np.argsort(-scores)[:DEPTH]
        dense[x] = [(ids[i], float(scores[i])) for i in top]
        fused: dict[str, float] = {}
        for run in (dense[x], bm25[x]):
            for rank, (d, _) in enumerate(run, 1):
                fused[d] = fused.get(d, 0.0) + 1.0 / (60 + rank)
        hybrid[x] = sorted(fused.items(), key=lambda kv: -kv[1])[:DEPTH]
    return dense, hybrid


def make_pool(idx, turns, texts: list[str], bm25: dict, pool_dir: Path, model: str, depth: int = 10) -> None:
    """Encode the pool (gold + BM25's top ``depth`` for the last question, all questions and the dialogue of
    every turn) and every text with encoder ``model``; skipped when the files exist."""
    import numpy as np

    from legalrag.answer.processors import all_questions, full_context
    from legalrag.retrieval.dense import passage_text
    from legalrag.wiring import make_encoder

    if (pool_dir / f"pool_{model}_docs.npy").is_file():
        return
    pool = {g for t in turns for g in t.gold_ids}
    for t in turns:
        for q in (" ".join(t.question.split()), all_questions(t.turns), full_context(t.turns)):
            pool |= {d for d, _ in bm25[q][:depth]}
    ids = sorted(pool, key=lambda d: (len(d), d))
    enc = make_encoder(model, threads=1)
    docs = enc.encode_documents([passage_text(idx.get(d)) for d in ids])
    queries = enc.encode_queries(texts)
    pool_dir.mkdir(parents=True, exist_ok=True)
    np.save(pool_dir / f"pool_{model}_docs.npy", docs)
    np.save(pool_dir / f"pool_{model}_queries.npy", queries)
    (pool_dir / f"pool_{model}.json").write_text(json.dumps({"pool": ids, "texts": texts}, ensure_ascii=False),
                                                 encoding="utf-8")


class Lookup:
    """``search(text, k)`` over saved lists, as Hits of the index's documents (the fused processor's input)."""

    def __init__(self, idx, lists):
        self.idx, self.lists, self._hits = idx, lists, {}

    def __call__(self, text: str, k: int):
        from legalrag.types import Hit

        if text not in self._hits:
            self._hits[text] = [Hit(self.idx.get(d), s, r) for r, (d, s) in enumerate(self.lists[text], 1)]
        return self._hits[text][:k]


def metrics_of(ranked: list[str], gold) -> dict[str, float]:
    from legalrag.evaluation.metrics import mrr_at_k, ndcg_at_k, recall_at_k

    return {"recall@10": recall_at_k(ranked, gold, 10), "mrr@10": mrr_at_k(ranked, gold, 10),
            "ndcg@10": ndcg_at_k(ranked, gold, 10)}


def summarise(turns, per_turn: dict[str, dict[str, float]]) -> dict:
    keys = ("recall@10", "mrr@10", "ndcg@10")
    out = {k: statistics.fmean(per_turn[t.id][k] for t in turns) for k in keys}
    out["by_turn"] = {n: {k: statistics.fmean(per_turn[t.id][k] for t in turns if t.turn == n) for k in keys}
                      for n in sorted({t.turn for t in turns})}
    return out


def fused_rankings(turns, search, params: dict) -> dict[str, list[str]]:
    from legalrag.answer.processors import ContextFusion

    proc = ContextFusion(**params)
    return {t.id: [h.id for h in proc.retrieve(search, t.turns, 10)] for t in turns}


def cross_validate(turns, search) -> tuple[dict[str, dict[str, float]], list[dict], dict]:
    """Per-turn metrics with weights chosen on the other folds; the weights of each fold; the weights chosen on
    all turns (the candidate defaults)."""
    combos = [dict(zip(GRID, v)) for v in itertools.product(*GRID.values())]
    per_combo = []
    for c in combos:
        ranked = fused_rankings(turns, search, c)
        per_combo.append({t.id: metrics_of(ranked[t.id], set(t.gold_ids)) for t in turns})
    dialogues = sorted({t.dialogue_id for t in turns})
    fold_of = {d: i % FOLDS for i, d in enumerate(dialogues)}

    def best(ids: set[str]) -> int:
        def key(i):
            m = per_combo[i]
            return (statistics.fmean(m[q]["recall@10"] for q in ids), statistics.fmean(m[q]["ndcg@10"] for q in ids))
        return max(range(len(combos)), key=key)

    held, chosen = {}, []
    for f in range(FOLDS):
        train = {t.id for t in turns if fold_of[t.dialogue_id] != f}
        i = best(train)
        chosen.append({"fold": f, **combos[i]})
        for t in turns:
            if fold_of[t.dialogue_id] == f:
                held[t.id] = per_combo[i][t.id]
    return held, chosen, combos[best({t.id for t in turns})]


def paired_p(a: dict, b: dict, turns, metric: str) -> float:
    from legalrag.evaluation.compare import paired_randomization_test

    return paired_randomization_test([a[t.id][metric] for t in turns], [b[t.id][metric] for t in turns])


def cost(idx, turns, name: str) -> dict[str, float]:
    """Seconds per turn of query making + search, per processor, asked turn by turn as in a live chat."""
    from legalrag.answer.processors import make_processor, retrieve_turn
    from legalrag.wiring import Root

    pipe = Root().build_pipeline(idx, retriever=name)
    pipe.search("热身", k=10)  # load the component before timing
    out = {}
    by_dialogue: dict[str, list] = {}
    for t in turns:
        by_dialogue.setdefault(t.dialogue_id, []).append(t)
    for pname in (*RULES, "fused"):
        t0 = time.perf_counter()
        for rows in by_dialogue.values():
            proc = make_processor(pname)  # a fresh fused cache per consultation
            for t in sorted(rows, key=lambda r: r.turn):
                retrieve_turn(proc, lambda q, n: pipe.search(q, k=n), t.turns, 10)
        out[pname] = (time.perf_counter() - t0) / len(turns)
        print(f"# cost {pname}+{name}: {out[pname]:.3f} s per turn", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument("--data", default="bench/data/consultations")
    ap.add_argument("--retriever", action="append", default=[])
    ap.add_argument("--pool", type=Path, default=None, help="Folder with pool_MODEL.json and pool_MODEL_{docs,queries}.npy.")
    ap.add_argument("--pool-model", default="use", help="MODEL of the pool files (e.g. use, e5).")
    ap.add_argument("--cv", action="append", default=None,
                    help="Cross-validate the fused weights for these retrievers only (default: every one).")
    ap.add_argument("--baseline", default="last+hybrid", help="PROCESSOR+RETRIEVER the paired tests compare with.")
    ap.add_argument("--cost", action="append", default=[], help="Time a live consultation with this retriever.")
    ap.add_argument("--out", type=Path, default=Path("runs/consultation/query"))
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()

    from legalrag.answer.processors import all_questions, full_context
    from legalrag.evaluation.lexrag.data import load_consultations
    from legalrag.evaluation.lexrag.gold import resolve_gold
    from legalrag.wiring import Root

    idx = Root().index(a.index, snapshot=True)
    turns, report = resolve_gold(load_consultations(a.data), idx.documents)
    turns = [t for t in turns if t.gold_ids]
    texts = texts_of(turns)
    lists = {r: search_lists(idx, r, texts, a.out / f"lists-{r}.json") for r in a.retriever}
    if a.pool is not None:
        make_pool(idx, turns, texts, lists["bm25"], a.pool, a.pool_model)
        dense, hybrid = pool_lists(a.pool, a.pool_model, lists["bm25"], texts)
        lists[f"pool-{a.pool_model}"], lists[f"pool-hybrid-{a.pool_model}"] = dense, hybrid
    rule_text = {"last": lambda t: " ".join(t.question.split()), "all_questions": lambda t: all_questions(t.turns),
                 "full_context": lambda t: full_context(t.turns)}
    results, per_turn, chosen = {}, {}, {}
    for r, lst in lists.items():
        gold = {t.id: set(t.gold_ids) for t in turns}
        for p in RULES:
            per_turn[f"{p}+{r}"] = {t.id: metrics_of([d for d, _ in lst[rule_text[p](t)]], gold[t.id]) for t in turns}
        search = Lookup(idx, lst)
        ranked = fused_rankings(turns, search, {})
        per_turn[f"fused+{r}"] = {t.id: metrics_of(ranked[t.id], gold[t.id]) for t in turns}
        if a.cv is None or r in a.cv:
            held, folds, overall = cross_validate(turns, search)
            per_turn[f"fused-cv+{r}"] = held
            chosen[r] = {"folds": folds, "all_turns": overall}
            print(f"# {r}: weights per fold {folds}; on all turns {overall}", flush=True)
    base = per_turn.get(a.baseline)
    for name, pt in per_turn.items():
        results[name] = summarise(turns, pt)
        if base is not None and name != a.baseline:
            results[name]["p_vs_baseline"] = {m: paired_p(pt, base, turns, m) for m in ("recall@10", "mrr@10", "ndcg@10")}
    costs = {r: cost(idx, turns, r) for r in a.cost}
    print(f"\n{len(turns)} turns; paired randomization tests (10,000 sign flips) against {a.baseline}\n")
    print("| processor+retriever | R@10 | MRR@10 | nDCG@10 | p R@10 / MRR / nDCG | R@10 turn 1..5 |")
    print("|---|---|---|---|---|---|")
    for name, m in results.items():
        p = m.get("p_vs_baseline")
        ps = " / ".join(f"{p[k]:.3f}" for k in ("recall@10", "mrr@10", "ndcg@10")) if p else "-"
        turns_r = " / ".join(f"{v['recall@10']:.3f}" for v in m["by_turn"].values())
        print(f"| {name} | {m['recall@10']:.3f} | {m['mrr@10']:.3f} | {m['ndcg@10']:.3f} | {ps} | {turns_r} |")
    if a.json is not None:
        payload = {"name": f"Consultation: the query for turn N ({a.index}, {'/'.join(lists)})",
                   "machine_note": "shared with other jobs", "index": a.index,
                   "turns": len(turns), "grid": GRID, "folds": FOLDS, "baseline": a.baseline, "results": results,
                   "weights": chosen, "cost_seconds_per_turn": costs, "gold": report.to_dict()}
        from legalrag.evaluation.record import write_result

        write_result(a.json, **payload)


if __name__ == "__main__":
    main()
