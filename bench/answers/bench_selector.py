"""The decisive-article selector on the TEST part of the frozen STARD split: hit@1 / hit@3 of its order against the
default index's order (paired randomization tests), how well its probabilities are calibrated, what ``chosen``
holds, and its cost per question.

    python bench/answers/bench_selector.py quality --split bench/data/stard-split.json \
        --queries $LEGALRAG_DATA/stard/train.jsonl --out bench/results/selector-test.json
    python bench/answers/bench_selector.py cost --split bench/data/stard-split.json \
        --queries $LEGALRAG_DATA/stard/train.jsonl --limit 30 --cold --out bench/results/selector-cost.json
    python bench/answers/bench_selector.py cost --split bench/data/stard-split.json \
        --queries $LEGALRAG_DATA/stard/train.jsonl --limit 5 --cold --encode-articles \
        --out bench/results/selector-cost-encoded.json
    python bench/answers/bench_selector.py bad-input --out bench/results/selector-bad-input.json
    python bench/answers/bench_selector.py card     # the test and cost figures into the shipped model's card

``quality``: the top 30 of the default index (its default component, what ``ask`` retrieves) for each of the
131 test questions, reranked by the shipped selector (or ``--selector DIR``) with the shipped support pair
model (``wiring.make_support_scorer``), reading the articles' vectors from the index as ``load_selector(index=)``
does. The support scores are computed once into ``--cache`` (a rerun with the
same support model reuses them). ``cost``: the wall time of ``select`` (support scores included, the encoder on
``--threads`` threads) per question of 30 candidates, after one warm-up question; ``--cold``: with an encoder
without the vector cache, so every article is encoded on the spot (the worst case; without it, the articles
earlier questions retrieved are not encoded again, as in a running server).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from legalrag.answer.select import IndexedSupport, dense_component, load_selector
from legalrag.evaluation.record import paired, percentile, shown_path, write_result
from legalrag.retrieval.pipeline import build_pipeline
from legalrag.training.recipes.selector import (calibration_table, chosen_f1, hits_at, load_part, retrieval_order,
                                                retrieve, support_scores)
from legalrag.wiring import Root


DATA = ("STARD (LeCoQA split, MIT licence; Su et al. 2024): the 131 test questions of bench/data/stard-split.json, "
        "their gold articles in the shipped national-law corpus (the same ids); never trained or tuned on")


class _Memo:
    """The support model's scores of (question, article) pairs computed beforehand, by question text and id."""

    def __init__(self, support, table):
        self.support, self.table = support, table

    def scores(self, pairs):
        out = []
        for q, doc in pairs:
            s = self.table.get((q, doc.id))
            out.append(s if s is not None else self.support.scores([(q, doc)])[0])
        return out


def quality(args) -> None:
    root = Root()
    idx = root.index(snapshot=True)
    pipeline = build_pipeline(idx)
    support = root.make_support_scorer(args.support, threads=args.threads)
    dense = dense_component(idx)
    if dense is not None and support.encoder is not None:  # as load_selector(index=...) scores
        support = IndexedSupport(support, dense)
    questions = load_part(args.split, args.part, args.queries)
    cands = retrieve(lambda q, k: list(pipeline.search(q, k=k)), questions, args.depth)
    sups = support_scores(support, cands, args.cache, log=print)
    table = {(c.question, h.id): float(s) for c, ss in zip(cands, sups) for h, s in zip(c.hits, ss)}
    selector = load_selector(args.selector, support=_Memo(support, table), encoder=support.encoder)
    ys, probs, sel_order = [], [], []
    for c in cands:
        sel = selector.select(c.question, c.hits, k=3)
        pos = {h.id: i for i, h in enumerate(c.hits)}
        p = np.zeros(len(c.hits))
        for d in sel.ranked:
            p[pos[d.hit.id]] = d.probability
        ys.append(c.labels)
        probs.append(p)
        sel_order.append(p)
    base = retrieval_order(ys)
    s1, s3 = hits_at(sel_order, ys, 1), hits_at(sel_order, ys, 3)
    b1, b3 = hits_at(base, ys, 1), hits_at(base, ys, 3)
    gold_sizes = [len(set(c.gold)) for c in cands]
    f1, empty = chosen_f1(probs, ys, gold_sizes, selector.threshold, 3)
    chosen_n = [sum(1 for v in sorted(p, reverse=True)[:3] if v >= selector.threshold) for p in probs]
    chosen_gold = [sum(1 for i in sorted(range(len(p)), key=lambda i: (-p[i], i))[:3]
                       if p[i] >= selector.threshold and y[i] > 0) for p, y in zip(probs, ys)]
    metrics = {
        "questions": len(cands), "candidates": args.depth,
        "gold_in_candidates": round(float(np.mean([y.sum() > 0 for y in ys])), 4),
        "selector_hit@1": round(float(np.mean(s1)), 4), "retrieval_hit@1": round(float(np.mean(b1)), 4),
        "selector_hit@3": round(float(np.mean(s3)), 4), "retrieval_hit@3": round(float(np.mean(b3)), 4),
        "target_hit@1": 0.55, "threshold": selector.threshold,
        "chosen_f1": round(f1, 4), "nothing_chosen": round(empty, 4),
        "chosen_per_question": round(float(np.mean(chosen_n)), 3),
        "chosen_precision": round(sum(chosen_gold) / max(sum(chosen_n), 1), 4),
        "first_chosen_is_gold": round(float(np.mean([1.0 if n and s else 0.0 for n, s in zip(chosen_n, s1)])), 4),
        "calibration": calibration_table(probs, ys),
    }
    tests = {"hit@1": paired(s1, b1), "hit@3": paired(s3, b3)}
    print({k: v for k, v in metrics.items() if k != "calibration"}, tests)
    write_result(args.out, metrics, name="decisive-article selector vs the default index's order, STARD test part "
                 "(131 questions), top 30 candidates", data=DATA, paired=tests,
                 note="paired: a = the selector's order, b = the default index's order (dense stard-e5); a question "
                      "whose gold is not among the 30 candidates counts as a miss for both",
                 selector=shown_path(selector.path), model=dict(selector.model.spec.get("figures", {})).get("model"),
                 source="docs/lab/selector.md#test-figures",
                 page={"section": "answers", "rows": [{
                     "configuration": "decisive-article selector (answer/select.py) over the default index's top 30",
                     "result": "test hit@1 {metrics[selector_hit@1]:.3f} against {metrics[retrieval_hit@1]:.3f} in "
                               "retrieval order (p = {paired[hit@1][p]}; target 0.55, missed); hit@3 "
                               "{metrics[selector_hit@3]:.3f} against {metrics[retrieval_hit@3]:.3f}",
                     "cost": "see selector-cost.json", "needs": "CPU", "anchor": "selector-test"}]})


def cost(args) -> None:
    root = Root()
    idx = root.index(snapshot=True)
    pipeline = build_pipeline(idx)
    if args.cold:  # no vector cache: every article and question is encoded on the spot
        from legalrag.citecheck.support import SupportModel, SupportScorer
        from legalrag.wiring import make_encoder

        support = SupportScorer(make_encoder("stard-e5", cache=False, threads=args.threads, progress=False),
                                SupportModel.load(args.support))
    else:
        support = root.make_support_scorer(args.support, threads=args.threads)
    # the articles' vectors from the index, unless --encode-articles (the path without the index: each encoded)
    selector = load_selector(args.selector, support=support, index=None if args.encode_articles else idx)
    questions = load_part(args.split, args.part, args.queries)[: args.limit + 1]
    runs = [(q.query, list(pipeline.search(q.query, k=args.depth))) for q in questions]
    selector.select(*runs[0])  # warm-up: tables, the encoder's session
    seconds = []
    for q, hits in runs[1:]:
        t = time.perf_counter()
        selector.select(q, hits)
        seconds.append(time.perf_counter() - t)
    metrics = {"questions": len(seconds), "candidates": args.depth, "threads": args.threads,
               "median_s": round(statistics.median(seconds), 4), "p90_s": round(percentile(seconds, 90), 4),
               "max_s": round(max(seconds), 4), "mean_s": round(statistics.mean(seconds), 4), "target_s": 1.0}
    print(metrics)
    how = ("the articles' vectors read from the index" if not args.encode_articles else
           "every article encoded by the support model's encoder") + \
        ("; no vector cache" if args.cold else "; the shared vector cache (texts seen before are not re-encoded)")
    write_result(args.out, metrics, name=f"decisive-article selector: seconds per question (30 candidates, support "
                 f"scores included; {how})", data=DATA.replace("131 test", f"first {len(seconds) + 1} test"),
                 machine_note=f"encoder on {args.threads} threads; one warm-up question not counted",
                 source="docs/lab/selector.md#cost", **({} if args.encode_articles else {"page": {
                     "section": "answers", "rows": [{
                         "configuration": "decisive-article selector: seconds per question, 30 candidates",
                         "result": "median {metrics[median_s]:.2f} s, p90 {metrics[p90_s]:.2f} s over "
                                   "{metrics[questions]} test questions (target at most 1 s)",
                         "cost": "the articles' vectors read from the index; the question encoded once",
                         "needs": "CPU", "anchor": "selector-cost"}]}}))


BAD_INPUT = {"empty": "", "English": "My landlord will not return my deposit. What can I do?",
             "mixed": "房东不退deposit怎么办", "10,000 characters": "房东不退押金" * 1667,
             "out of corpus": "How do I apply for a US work visa (H-1B)?"}


def bad_input(args) -> None:
    """The shipped selector on bad input, over the default index's top 30 (none for the empty question)."""
    root = Root()
    idx = root.index(snapshot=True)
    pipeline = build_pipeline(idx)
    selector = load_selector(args.selector, support=root.make_support_scorer(args.support, threads=args.threads),
                             index=idx)
    selector.warm_up()
    rows = {}
    for name, q in BAD_INPUT.items():
        hits = list(pipeline.search(q, k=args.depth)) if q.strip() else []
        sel = selector.select(q, hits)
        rows[name] = {"chars": len(q), "candidates": len(sel.ranked), "chosen": len(sel.chosen),
                      "best_probability": round(sel.ranked[0].probability, 4) if sel.ranked else None,
                      "seconds": round(sel.seconds, 3)}
        print(name, rows[name])
    one = selector.select("房东不退押金怎么办", list(pipeline.search("房东不退押金怎么办", k=1)))
    rows["one hit"] = {"candidates": len(one.ranked), "chosen": len(one.chosen), "seconds": round(one.seconds, 3)}
    print("one hit", rows["one hit"])
    write_result(args.out, rows, name="decisive-article selector on bad input (the shipped model, the default index's "
                 "top 30)", data="questions written for this check (bench/answers/bench_selector.py BAD_INPUT)",
                 source="docs/lab/selector.md#bad-input")


def card(args) -> None:
    """Copy the test and cost figures (``--test``, ``--cost``: this script's outputs) into the selector's card
    (``legalrag_model.json`` and ``README.md``, which its file hashes do not cover)."""
    import json

    from legalrag.answer.select import shipped_selector_dir
    from legalrag.training.pack import model_card_markdown

    d = Path(args.selector) if args.selector else shipped_selector_dir()
    data = json.loads((d / "legalrag_model.json").read_text(encoding="utf-8"))
    t = json.loads(Path(args.test).read_text(encoding="utf-8"))
    c = json.loads(Path(args.cost).read_text(encoding="utf-8"))["metrics"]
    m, p = t["metrics"], t["paired"]
    size = sum(f.stat().st_size for f in d.iterdir() if f.is_file())
    verdict = "met" if m["selector_hit@1"] >= m["target_hit@1"] else "missed"
    test = {
        "STARD test hit@1 (131 questions, top 30 of the default index)":
            f"{m['selector_hit@1']:.4f} (retrieval order {m['retrieval_hit@1']:.4f}, paired p = {p['hit@1']['p']}); "
            f"target {m['target_hit@1']} {verdict}",
        "STARD test hit@3": f"{m['selector_hit@3']:.4f} (retrieval order {m['retrieval_hit@3']:.4f}, paired p = "
                            f"{p['hit@3']['p']})",
        "STARD test: a gold article among the 30 candidates": f"{m['gold_in_candidates']:.4f}",
        f"STARD test, chosen (threshold {m['threshold']:.3f}, at most 3)":
            f"{m['chosen_per_question']} articles per question, precision {m['chosen_precision']}, nothing chosen in "
            f"{m['nothing_chosen']}",
        "seconds per question, 30 candidates, 2 cores":
            f"median {c['median_s']}, p90 {c['p90_s']}, max {c['max_s']} ({c['questions']} test questions; the "
            "articles' vectors read from the index, the question encoded)",
        "size": f"{size / 1e6:.2f} MB (model.txt, selector.json, the neighbour memory of 972 question vectors)",
    }
    data["figures"] = {**test, **{k: v for k, v in data.get("figures", {}).items() if k.startswith("dev ")}}
    data["figures_note"] = (
        "Measured on a 2-core x86-64 CPU (no GPU) shared with other jobs: python bench/answers/bench_selector.py "
        "quality --split bench/data/stard-split.json --queries $LEGALRAG_DATA/stard/train.jsonl --cache "
        "runs/selector/test-support.json --out bench/results/selector-test.json and the same script's cost --limit 30 "
        "--cold (bench/results/selector-cost.json). The dev figures are cross-fitted (5 folds by question) and "
        "optimistic: the model was chosen on them, and the support pair model's last stage was fitted on dev pairs. "
        "Lab record: docs/lab/selector.md.")
    (d / "legalrag_model.json").write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (d / "README.md").write_text(model_card_markdown(data), encoding="utf-8")
    print(f"updated {d / 'legalrag_model.json'} and README.md")



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("quality", "cost", "bad-input", "card"))
    ap.add_argument("--test", default="bench/results/selector-test.json", help="card: the quality output")
    ap.add_argument("--cost", default="bench/results/selector-cost.json", help="card: the cost output")
    ap.add_argument("--split", type=Path, default=None, help="bench/data/stard-split.json (with --queries) or a "
                    "folder with test.jsonl")
    ap.add_argument("--queries", type=Path, default=None, help="STARD's train.jsonl (with a split file of ids)")
    ap.add_argument("--part", default="test")
    ap.add_argument("--selector", default=None, help="a selector directory (default: the shipped one)")
    ap.add_argument("--support", default="full", help="the support model, as make_support_scorer takes it")
    ap.add_argument("--cold", action="store_true", help="cost: an encoder without the vector cache")
    ap.add_argument("--encode-articles", action="store_true", help="cost: encode the articles instead of reading "
                    "their vectors from the index")
    ap.add_argument("--depth", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--limit", type=int, default=30, help="cost: questions timed")
    ap.add_argument("--cache", default=None, help="quality: JSON file of the support scores")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    if args.what in ("quality", "cost") and args.split is None:
        ap.error(f"{args.what} needs --split (bench/data/stard-split.json with --queries)")
    if args.what != "card" and args.out is None:
        ap.error(f"{args.what} needs --out (a bench/results/selector-*.json file)")
    {"quality": quality, "cost": cost, "bad-input": bad_input, "card": card}[args.what](args)


if __name__ == "__main__":
    main()
