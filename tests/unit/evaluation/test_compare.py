"""`legalrag eval compare` and the plots: saved runs re-scored on the same gold, paired tests, PNG charts."""

import json

import pytest
from support.cli_runner import run_cli

from legalrag.errors import InputError
from legalrag.evaluation.compare import compare_runs, paired_randomization_test
from legalrag.evaluation.plots import plot_bars, plot_curves

PNG = b"\x89PNG\r\n\x1a\n"


def test_randomization_test_identical_and_clearly_different():
    assert paired_randomization_test([0.5, 1.0, 0.0], [0.5, 1.0, 0.0]) == 1.0
    p = paired_randomization_test([1.0] * 20, [0.0] * 20, trials=2000)
    assert 0 < p < 0.001  # only the all-unswapped and all-swapped sign patterns are as extreme
    noisy = paired_randomization_test([1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 1, 0], trials=2000)
    assert noisy > 0.5


def test_compare_runs_known_values_and_pytrec_eval():
    gold = {"q1": {"a"}, "q2": {"b", "c"}, "q3": {"d"}}
    runs = {"base": {"q1": ["a", "x"], "q2": ["x", "b", "c"]},  # q3 missing: an empty ranking
            "other": {"q1": ["x", "a"], "q2": ["c", "b"], "q3": ["d"]}}
    cmp = compare_runs(runs, gold, k=2, depth=3, trials=500)
    base, other = cmp.runs
    assert cmp.n_queries == 3 and base.missing_queries == 1 and other.missing_queries == 0
    assert base.means["recall@2"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert base.means["mrr@2"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert other.means["recall@2"] == pytest.approx(1.0) and other.means["hit@2"] == 1.0
    assert base.recall_curve == pytest.approx(((1 + 0 + 0) / 3, (1 + 0.5) / 3, (1 + 1) / 3))
    assert base.p_values == {} and set(other.p_values) == {"recall@2", "mrr@2", "ndcg@2", "hit@2"}
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {q: {d: 1 for d in g} for q, g in gold.items()}
    for r in cmp.runs:
        run = {q: {d: float(10 - i) for i, d in enumerate(ranked)} for q, ranked in runs[r.name].items()}
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"recall.2", "ndcg_cut.2"}).evaluate(run)
        # pytrec_eval leaves out queries without a ranking; ours count them as 0
        assert r.means["recall@2"] == pytest.approx(sum(v["recall_2"] for v in ev.values()) / 3)
        assert r.means["ndcg@2"] == pytest.approx(sum(v["ndcg_cut_2"] for v in ev.values()) / 3)


def test_plots_write_png_atomically(tmp_path):
    out = plot_curves({"a": [0.1, 0.4, 0.6], "b": [0.2, 0.3, 0.7]}, tmp_path / "c.png", title="t")
    assert out.read_bytes()[:8] == PNG
    out = plot_bars({"stage 1": {"P": 0.5, "R": 0.4}, "stage 2": {"P": 0.6, "R": 0.7}}, tmp_path / "b.png")
    assert out.read_bytes()[:8] == PNG
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.png", "c.png"]  # no temp file left
    with pytest.raises(InputError, match="ending in .png"):
        plot_bars({"x": {"P": 1.0}}, tmp_path / "b.jpg")


def test_mcq_plot_from_summarised_rows(tmp_path):
    from legalrag.agents.qa.mcq_eval import summarise_rows
    from legalrag.cli._qa_output import plot_mcq

    rows = [{"mode": m, "domain": d, "correct": c, "choice": "A", "seconds": 1.0, "llm_calls": 1, "citations": 0,
             "resolved": 0} for m, d, c in [("zero-shot", "labour", True), ("zero-shot", "family", False),
                                            ("simple", "labour", True), ("simple", "family", True)]]
    report = {"modes": summarise_rows(rows, ["zero-shot", "simple"]), "n_questions": 2, "model": "m"}
    assert plot_mcq(report, tmp_path / "mcq.png").read_bytes()[:8] == PNG


@pytest.fixture
def two_runs(tmp_path, test_data, monkeypatch, capsys):
    idx = tmp_path / "idx"
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", test_data / "lexical_statutes.jsonl",
                           "--out", idx, "--retriever", "bm25", "--retriever", "qld", "--lang", "zh", "--no-progress")
    assert code == 0, err
    q = tmp_path / "queries.jsonl"
    q.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [
        {"query_id": 1, "query": "出租人不维修租赁物", "gold_ids": [711]},
        {"query_id": 2, "query": "公司不签书面劳动合同要赔双倍工资吗", "gold_names": ["劳动合同法第八十二条"]},
        {"query_id": 3, "query": "撞了人要赔偿吗", "gold_ids": [10069]},
    ]), encoding="utf-8")
    saved = {}
    for r in ("bm25", "qld"):
        code, out, err = run_cli(monkeypatch, capsys, "eval", "retrieval", "--index", idx, "--queries", q,
                                 "--retriever", r, "--json", "--no-progress", "--out", tmp_path / r)
        assert code == 0, err
        saved[r] = json.loads(out)
    return idx, q, saved


def test_cli_compare_rescores_saved_runs_and_plots(two_runs, tmp_path, monkeypatch, capsys):
    idx, q, saved = two_runs
    plot = tmp_path / "curves.png"
    code, out, err = run_cli(monkeypatch, capsys, "eval", "compare", tmp_path / "bm25", tmp_path / "qld",
                             "--queries", q, "--index", idx, "--json", "--plot", plot, "-o", "trials=500")
    assert code == 0, err
    res = json.loads(out)
    assert [r["name"] for r in res["runs"]] == ["bm25", "qld"] and res["n_queries"] == 3
    for r in res["runs"]:
        for key in ("recall@10", "mrr@10", "ndcg@10", "hit@10"):
            assert r["means"][key] == pytest.approx(saved[r["name"]][key])
        assert len(r["recall_curve"]) == 100 and r["recall_curve"][9] == pytest.approx(r["means"]["recall@10"])
    assert res["runs"][0]["p_values"] == {} and 0 < res["runs"][1]["p_values"]["recall@10"] <= 1
    assert plot.read_bytes()[:8] == PNG
    code, out, err = run_cli(monkeypatch, capsys, "eval", "compare", tmp_path / "bm25", tmp_path / "qld",
                             "--queries", q, "--index", idx, "-o", "trials=200")
    assert code == 0, err
    assert "bm25" in out and "qld" in out and "paired randomization" in out


def test_cli_compare_bad_inputs(two_runs, tmp_path, monkeypatch, capsys):
    idx, q, _ = two_runs
    code, _, err = run_cli(monkeypatch, capsys, "eval", "compare", tmp_path / "nope", "--queries", q, "--index", idx)
    assert code == 1 and "nope" in err and "no such run" in err
    (tmp_path / "empty").mkdir()
    code, _, err = run_cli(monkeypatch, capsys, "eval", "compare", tmp_path / "empty", "--queries", q, "--index", idx)
    assert code == 1 and "run.trec missing" in err
    bad = tmp_path / "bad.trec"
    bad.write_text("1 Q0 711 1 2.0 bm25\n2 Q0 10069 x 1.0 bm25\n", encoding="utf-8")
    code, _, err = run_cli(monkeypatch, capsys, "eval", "compare", bad, "--queries", q, "--index", idx)
    assert code == 1 and "bad.trec:2" in err and "not an integer" in err
    code, _, err = run_cli(monkeypatch, capsys, "eval", "compare", tmp_path / "bm25", "--queries", q,
                           "--index", idx, "--plot", tmp_path / "c.svg")
    assert code == 1 and "c.svg" in err and "PNG" in err and not (tmp_path / "c.svg").exists()


def test_fuse_runs_is_reciprocal_rank_fusion_with_its_trail(tmp_path, monkeypatch, capsys):
    from legalrag.evaluation.runs import fuse_runs, load_run, write_trec_run
    from legalrag.types import Document, Hit

    a = {"q1": ["x", "y", "z"], "q2": ["p"]}
    b = {"q1": ["z", "x"]}  # q2 missing from b: fused from a alone
    fused = fuse_runs({"a": a, "b": b}, k=60)
    s = {h.id: h.score for h in fused["q1"]}
    assert s["x"] == pytest.approx(1 / 61 + 1 / 62) and s["z"] == pytest.approx(1 / 63 + 1 / 61)
    assert s["y"] == pytest.approx(1 / 62)
    assert [h.id for h in fused["q1"]] == ["x", "z", "y"] and fused["q1"][0].sources == {"a": 1, "b": 2}
    assert [h.id for h in fused["q2"]] == ["p"]
    weighted = fuse_runs({"a": a, "b": b}, k=0, weights=[1.0, 3.0])
    assert [h.id for h in weighted["q1"]][0] == "z"  # 1/3 + 3/1 beats 1/1 + 3/2
    with pytest.raises(InputError, match="one weight per run"):
        fuse_runs({"a": a, "b": b}, weights=[1.0])
    with pytest.raises(InputError, match="at least two runs"):
        fuse_runs({"a": a})

    def trec(name, ranked):
        write_trec_run(tmp_path / f"{name}.trec", {q: [Hit(Document(id=d, text=""), 1.0 / r, r)
                                                       for r, d in enumerate(ids, 1)] for q, ids in ranked.items()})
        return str(tmp_path / f"{name}.trec")

    code, out, _ = run_cli(monkeypatch, capsys, "eval", "fuse", trec("a", a), trec("b", b), "--out", tmp_path / "f",
                           "--json")
    assert code == 0 and json.loads(out)["runs"] == ["a", "b"]
    assert load_run(tmp_path / "f")[1] == {q: [h.id for h in hs] for q, hs in fused.items()}
    code, _, err = run_cli(monkeypatch, capsys, "eval", "fuse", trec("a", a), trec("b", b), "--out", tmp_path / "g",
                           "-o", "weights=1,x")
    assert code == 2 and "weights='1,x'" in err and "separated by commas" in err and not (tmp_path / "g").exists()
