import math
import random

import pytest

from legalrag.evaluation.metrics import (evaluate_rankings, f1_at_k, hit_at_k, macro_f1, macro_prf, micro_prf,
                                         mrr_at_k, ndcg_at_k, per_query_metrics, precision_at_k, recall_at_k,
                                         set_prf)


def test_hand_computed_values():
    ranked = ["d3", "d1", "d7", "d2", "d9"]
    gold = {"d1", "d2", "d8"}
    assert recall_at_k(ranked, gold, 5) == pytest.approx(2 / 3)
    assert recall_at_k(ranked, gold, 1) == 0.0
    assert precision_at_k(ranked, gold, 5) == pytest.approx(2 / 5)
    assert precision_at_k(ranked, gold, 10) == pytest.approx(2 / 10)  # divides by K like trec_eval's P_10
    assert f1_at_k(ranked, gold, 5) == pytest.approx(2 * 0.4 * (2 / 3) / (0.4 + 2 / 3))
    assert mrr_at_k(ranked, gold, 5) == 0.5 and mrr_at_k(ranked, gold, 1) == 0.0
    assert hit_at_k(ranked, gold, 2) == 1.0 and hit_at_k(ranked, gold, 1) == 0.0
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(ranked, gold, 5) == pytest.approx(dcg / idcg)
    # IDCG over min(|gold|, K): with K=2 only two gold documents can be placed
    assert ndcg_at_k(ranked, gold, 2) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert ndcg_at_k(["d1", "d2", "d8"], gold, 10) == pytest.approx(1.0)
    assert recall_at_k(["d1", "d1", "d2"], gold, 2) == pytest.approx(2 / 3)  # a repeated id counts once


def test_macro_average_and_missing_queries():
    rankings = {"q1": ["a", "b"], "q2": ["x"]}
    gold = {"q1": {"a"}, "q2": {"y"}, "q3": {"z"}, "q4": set()}
    m = evaluate_rankings(rankings, gold, ks=(1, 10))
    assert m["n_queries"] == 3  # q4 has no gold ids and is left out; q3 has no ranking and scores 0
    assert m["recall@1"] == pytest.approx(1 / 3) and m["mrr@10"] == pytest.approx(1 / 3)
    assert m["precision@1"] == pytest.approx(1 / 3) and m["precision@10"] == pytest.approx(0.1 / 3)
    with pytest.raises(ValueError):
        evaluate_rankings(rankings, gold, metrics=("map",))
    with pytest.raises(ValueError):
        recall_at_k(["a"], {"a"}, 0)


def test_set_metrics():
    assert set_prf({"a", "b"}, {"b", "c", "d"}) == pytest.approx((0.5, 1 / 3, 0.4))
    assert set_prf([], []) == (1.0, 1.0, 1.0)
    assert set_prf([], ["a"]) == (0.0, 0.0, 0.0)
    assert set_prf(["a"], []) == (0.0, 0.0, 0.0)
    preds, golds = [{"a", "b"}, {"c"}, set()], [{"a"}, {"d"}, {"e"}]
    m = macro_prf(preds, golds)
    assert m["f1"] == pytest.approx((2 / 3 + 0 + 0) / 3) == macro_f1(preds, golds)
    assert m["precision"] == pytest.approx(0.5 / 3) and m["recall"] == pytest.approx(1 / 3)
    mi = micro_prf(preds, golds)
    assert mi["precision"] == pytest.approx(1 / 3) and mi["recall"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError):
        macro_f1([{"a"}], [])


def test_ranking_metrics_agree_with_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(60)]
    rankings, qrels, run = {}, {}, {}
    for q in range(40):
        qid = f"q{q}"
        gold = set(rng.sample(docs, rng.randint(1, 15)))
        ranked = rng.sample(docs, rng.randint(0, 30))
        rankings[qid], qrels[qid] = ranked, {d: 1 for d in gold}
        # strictly decreasing scores so trec_eval's tie-breaking cannot reorder the list
        run[qid] = {d: float(100 - r) for r, d in enumerate(ranked)}
    gold = {q: set(v) for q, v in qrels.items()}
    for k in (1, 5, 10, 20):
        ours = evaluate_rankings(rankings, gold, ks=(k,))
        truncated = {q: {d: s for d, s in r.items() if s > 100 - k} for q, r in run.items()}
        ev = pytrec_eval.RelevanceEvaluator(qrels, {f"recall_{k}", f"P_{k}", f"ndcg_cut_{k}", f"success_{k}"})
        res = ev.evaluate(run)
        rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(truncated)
        n = len(qrels)
        ref = {
            f"recall@{k}": sum(r.get(f"recall_{k}", 0) for r in res.values()) / n,
            f"precision@{k}": sum(r.get(f"P_{k}", 0) for r in res.values()) / n,
            f"ndcg@{k}": sum(r.get(f"ndcg_cut_{k}", 0) for r in res.values()) / n,
            f"hit@{k}": sum(r.get(f"success_{k}", 0) for r in res.values()) / n,
            f"mrr@{k}": sum(rr.get(q, {}).get("recip_rank", 0) for q in qrels) / n,
        }
        for key, value in ref.items():
            assert ours[key] == pytest.approx(value, abs=1e-6), key


def test_per_query_metrics_keys():
    m = per_query_metrics(["a"], {"a"}, ks=(1, 3))
    assert set(m) == {f"{x}@{k}" for k in (1, 3) for x in ("recall", "precision", "f1", "mrr", "ndcg", "hit")}
