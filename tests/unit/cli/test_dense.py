"""The CLI end to end with dense and hybrid components: index build --retriever hybrid --encoder ...,
search/eval retrieval --retriever dense|hybrid --rerank learned|none, train ranker; and its bad-input paths."""

from __future__ import annotations

import json
import socket

import pytest

from support.embeddings_server import EmbeddingsServer
from support.cli_runner import run_cli

QUERIES = [
    ("1", "公司不和我签劳动合同怎么办", [13506, 13578]),
    ("2", "我想辞职需要提前多久通知单位", [13533]),
    ("3", "房东不修房子怎么办", [711]),
    ("4", "借钱不还可以起诉吗", [674]),
    ("5", "高利贷利息合法吗", [679]),
    ("6", "被车撞了谁来赔偿", [10069]),
    ("7", "商家欺诈怎么赔偿", [12671]),
    ("8", "我要离婚去哪里起诉", [1078]),
    ("9", "父母去世遗产怎么分", [1126]),
    ("10", "偷东西会判几年", [55304]),
]




@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home"))
    with EmbeddingsServer(dim=32) as srv:
        monkeypatch.setenv("LEGALRAG_EMBEDDINGS_BASE_URL", srv.url)
        qfile = tmp_path / "queries.jsonl"
        qfile.write_text("".join(json.dumps({"query_id": q, "query": t, "gold_ids": g}, ensure_ascii=False) + "\n"
                                 for q, t, g in QUERIES), encoding="utf-8")
        yield tmp_path, qfile


def test_hybrid_index_search_eval_and_ranker(env, test_data, monkeypatch, capsys):
    tmp, qfile = env
    out = tmp / "idx"
    code, stdout, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", test_data / "lexical_statutes.jsonl",
                                "--out", out, "--retriever", "hybrid", "--encoder", "openai:char-hash",
                                "--encoder", "use-multilingual", "-o", "fusion=wsf", "--lang", "zh", "--no-progress")
    assert code == 0, err
    assert "bm25, dense-openai-char-hash, dense-use-multilingual, hybrid" in stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["components"]["dense-use-multilingual"]["params"]["model_id"] == "use-multilingual"
    assert manifest["components"]["hybrid"]["params"]["method"] == "wsf"

    code, stdout, err = run_cli(monkeypatch, capsys, "search", "--index", out, "--retriever", "hybrid", "--k", "3",
                                "--json", "房东不修房子怎么办")
    assert code == 0, err
    data = json.loads(stdout)
    assert data["retriever"] == "hybrid" and data["hits"][0]["id"] == "711"

    code, stdout, err = run_cli(monkeypatch, capsys, "search", "--index", out, "--retriever", "dense-use-multilingual",
                                "--json", "--k", "2", "我要离婚")
    assert code == 0, err
    assert json.loads(stdout)["retriever"] == "dense:use-multilingual"

    metrics = {}
    for retriever in ("bm25", "dense-use-multilingual", "hybrid"):
        code, stdout, err = run_cli(monkeypatch, capsys, "eval", "retrieval", "--index", out, "--queries", qfile,
                                    "--retriever", retriever, "--json", "--no-progress")
        assert code == 0, err
        metrics[retriever] = json.loads(stdout)
        assert {"recall@10", "mrr@10", "ndcg@10", "hit@10", "n_queries"} <= set(metrics[retriever])
        assert metrics[retriever]["n_queries"] == 10
    assert metrics["hybrid"]["hit@10"] >= 0.8

    code, stdout, err = run_cli(monkeypatch, capsys, "train", "ranker", "--index", out, "--queries", qfile,
                                "-o", "depth=12", "-o", "rounds=10", "-o", "cv=2", "--json", "--no-progress")
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["candidates"] == "hybrid" and summary["cv"]["folds"] == 2 and "mrr@10" in summary["cv"]
    assert (out / "ranker" / "model.txt").exists()

    code, stdout, err = run_cli(monkeypatch, capsys, "eval", "retrieval", "--index", out, "--queries", qfile,
                                "--retriever", "hybrid", "--rerank", "learned", "--json", "--no-progress")
    assert code == 0, err
    assert json.loads(stdout)["n_queries"] == 10

    code, stdout, err = run_cli(monkeypatch, capsys, "search", "--index", out, "--retriever", "hybrid",
                                "--rerank", "none", "--json", "借钱不还")
    assert code == 0, err
    assert json.loads(stdout)["retriever"] == "hybrid"

    # the neighbour memory: cross-validated, saved beside the ranker, used by the same pipeline
    code, stdout, err = run_cli(monkeypatch, capsys, "train", "ranker", "--index", out, "--queries", qfile,
                                "-o", "depth=12", "-o", "rounds=10", "-o", "cv=2", "-o", "neighbours=3", "-o", "expand=5",
                                "--json", "--no-progress")
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["neighbours"] == 3 and summary["features"][-1] == "nb_top_sim" and "mrr@10" in summary["cv"]
    assert (out / "ranker" / "neighbours.npy").exists() and (out / "ranker" / "neighbours.jsonl").exists()
    code, stdout, err = run_cli(monkeypatch, capsys, "index", "info", "--index", out, "--json")
    assert code == 0, err
    assert json.loads(stdout)["ranker"]["neighbours"]["k"] == 3
    code, stdout, err = run_cli(monkeypatch, capsys, "index", "info", "--index", out)
    assert code == 0 and "memory of 10 questions, 3 voting" in " ".join(stdout.split()), err
    code, stdout, err = run_cli(monkeypatch, capsys, "eval", "retrieval", "--index", out, "--queries", qfile,
                                "--rerank", "learned", "--json", "--no-progress")
    assert code == 0, err
    assert json.loads(stdout)["n_queries"] == 10


def test_bad_inputs_exit_non_zero_and_write_nothing(env, test_data, monkeypatch, capsys):
    tmp, qfile = env
    out = tmp / "idx"
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", test_data / "lexical_statutes.jsonl",
                           "--out", out, "--retriever", "dense", "--encoder", "bert-huge", "--no-progress")
    assert code == 1 and "unknown encoder 'bert-huge'" in err and not out.exists()
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", test_data / "lexical_statutes.jsonl",
                           "--out", out, "--retriever", "hybrid", "--encoder", "openai:char-hash", "-o", "fusion=borda",
                           "--lang", "zh", "--no-progress")
    assert code == 2 and "fusion='borda'" in err and "'rrf' or 'wsf'" in err and not out.exists()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        monkeypatch.setenv("LEGALRAG_EMBEDDINGS_BASE_URL", f"http://127.0.0.1:{s.getsockname()[1]}/v1")
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", test_data / "lexical_statutes.jsonl",
                           "--out", out, "--retriever", "dense", "--encoder", "openai:other", "--no-progress")
    assert code == 1 and "cannot connect" in err and not out.exists()
    assert not [p for p in tmp.iterdir() if p.name.startswith(".idx")]

    empty = tmp / "empty.jsonl"
    empty.write_text("")
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", empty, "--out", out,
                           "--retriever", "dense", "--encoder", "use-multilingual", "--no-progress")
    assert code == 1 and "no" in err and not out.exists()

    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", test_data / "lexical_statutes.jsonl",
                           "--out", out, "--retriever", "bm25", "--lang", "zh", "--no-progress")
    assert code == 0, err
    code, _, err = run_cli(monkeypatch, capsys, "search", "--index", out, "--retriever", "dense", "离婚")
    assert code == 1 and "no 'dense' retriever" in err
    code, _, err = run_cli(monkeypatch, capsys, "search", "--index", out, "--rerank", "learned", "离婚")
    assert code == 1 and "no trained ranker" in err
