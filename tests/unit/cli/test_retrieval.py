import json

import pytest
from support.cli_runner import run_cli

CORPUS_NAME = "lexical_statutes.jsonl"




@pytest.fixture
def index_dir(tmp_path, test_data, monkeypatch, capsys):
    out = tmp_path / "idx"
    code, stdout, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", test_data / CORPUS_NAME,
                                "--out", out, "--retriever", "bm25", "--retriever", "qld", "--lang", "zh",
                                "--no-progress")
    assert code == 0, err
    assert "indexed 12 documents" in stdout
    return out


def test_search_json_and_table(index_dir, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "search", "--index", index_dir, "--k", "3", "--json",
                             "出租人不履行维修义务怎么办")
    assert code == 0, err
    data = json.loads(out)
    assert data["retriever"] == "bm25" and 1 <= len(data["hits"]) <= 3
    top = data["hits"][0]
    assert top["citation"] == "《中华人民共和国民法典》第七百一十二条" and top["rank"] == 1 and top["id"] == "711"
    code, out, err = run_cli(monkeypatch, capsys, "search", "--index", index_dir, "--retriever", "qld",
                             "--k", "2", "公司不和我签劳动合同")
    assert code == 0, err
    assert "劳动合同法" in out and "qld" in out


def test_index_info(index_dir, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "index", "info", "--index", index_dir, "--json")
    assert code == 0, err
    m = json.loads(out)
    assert m["corpus"]["n_documents"] == 12 and list(m["components"]) == ["bm25", "qld"]
    code, out, err = run_cli(monkeypatch, capsys, "index", "info", "--index", index_dir)
    assert code == 0 and "bm25 (default)" in out and "mu=200.0" in out


def test_search_filter_law(index_dir, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "search", "--index", index_dir, "--json", "--k", "5",
                             "--filter-law", "《中华人民共和国劳动合同法》", "借款要付利息吗，用人单位")
    assert code == 0, err
    hits = json.loads(out)["hits"]
    assert hits and all(h["metadata"]["law"] == "劳动合同法" for h in hits)
    code, out, err = run_cli(monkeypatch, capsys, "search", "--index", index_dir, "--filter-law", "劳动法",
                             "借钱")
    assert code == 1 and "no document in the index has law title '劳动法'" in err and "劳动合同法" in err


def test_eval_retrieval_json_table_and_run_out(index_dir, tmp_path, monkeypatch, capsys):
    q = tmp_path / "queries.jsonl"
    q.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [
        {"query_id": 1, "query": "出租人不维修租赁物", "gold_ids": [711]},
        {"query_id": 2, "query": "公司不签书面劳动合同要赔双倍工资吗", "gold_names": ["劳动合同法第八十二条"]},
        {"query_id": 3, "query": "撞了人要赔偿吗", "gold_ids": [10069]},
    ]) + "\n", encoding="utf-8")
    code, out, err = run_cli(monkeypatch, capsys, "eval", "retrieval", "--index", index_dir, "--queries", q,
                             "-o", "k=5", "--json", "--no-progress", "--out", tmp_path / "run")
    assert code == 0, err
    m = json.loads(out)
    assert {"recall@5", "precision@5", "mrr@5", "ndcg@5", "hit@5", "n_queries"} <= set(m)
    assert m["n_queries"] == 3 and 0 < m["recall@5"] <= 1 and m["hit@5"] >= m["mrr@5"]
    assert (tmp_path / "run" / "run.trec").exists() and (tmp_path / "run" / "manifest.json").exists()
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    assert saved["recall@5"] == m["recall@5"]
    code, out, err = run_cli(monkeypatch, capsys, "eval", "retrieval", "--index", index_dir, "--queries", q,
                             "--retriever", "qld", "--no-progress")
    assert code == 0, err
    assert "recall@10" in out and "qld" in out


def test_fields_mapping_like_judge(tmp_path, monkeypatch, capsys):
    corpus = tmp_path / "law.jsonl"
    corpus.write_text("".join(json.dumps({"text_id": str(i), "body": t, "title": f"刑法第{i}条"},
                                         ensure_ascii=False) + "\n" for i, t in
                              enumerate(["盗窃公私财物数额较大的", "故意伤害他人身体的"], 1)), encoding="utf-8")
    code, out, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", corpus, "--out", tmp_path / "i",
                             "-o", "fields=id=text_id,text=body,name=title", "--no-progress")
    assert code == 0, err
    code, out, err = run_cli(monkeypatch, capsys, "search", "--index", tmp_path / "i", "--json", "他偷了钱包盗窃")
    assert json.loads(out)["hits"][0]["id"] == "1"


@pytest.mark.parametrize("lines,needle", [
    (['{"id": 1, "name": "a", "content": "x"}', '{"id": 2, "name": "b", "content": '], "bad.jsonl:2: not valid JSON"),
    (['{"id": 1, "name": "a", "content": "x"}', '{"id": 2, "name": "b"}'], "bad.jsonl:2 (field 'content')"),
    (['{"id": 1, "name": "a", "content": "x"}', '{"id": 1, "name": "b", "content": "y"}'],
     "bad.jsonl:2 (field 'id'): id '1' appears twice"),
])
def test_bad_corpus_fails_cleanly(tmp_path, monkeypatch, capsys, lines, needle):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "idx"
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", bad, "--out", out, "--no-progress")
    assert code == 1 and needle in err
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["bad.jsonl"]  # nothing half-written


def test_bad_inputs_exit_non_zero(index_dir, tmp_path, monkeypatch, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", empty, "--out", tmp_path / "o")
    assert code == 1 and str(empty) in err and "no documents found" in err and not (tmp_path / "o").exists()
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", tmp_path / "nope.jsonl",
                           "--out", tmp_path / "o")
    assert code == 1 and "nope.jsonl: corpus not found" in err
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", index_dir / "documents.jsonl",
                           "--out", tmp_path / "o", "--lang", "fr")
    assert code == 2 and "--lang" in err and "'fr' is not one of 'zh', 'en', 'auto'" in err
    q = tmp_path / "q.jsonl"
    q.write_text('{"query_id": 1, "query": "x", "gold_ids": [123456789]}\n', encoding="utf-8")
    code, _, err = run_cli(monkeypatch, capsys, "eval", "retrieval", "--index", index_dir, "--queries", q)
    assert code == 1 and "q.jsonl:1 (field 'gold_ids'): gold id '123456789' is not in the corpus" in err
    code, _, err = run_cli(monkeypatch, capsys, "search", "--index", tmp_path, "x")
    assert code == 1 and "not a legalrag index" in err
    mf = index_dir / "manifest.json"
    mf.write_text(json.dumps({**json.loads(mf.read_text(encoding="utf-8")), "version": 0}), encoding="utf-8")
    code, _, err = run_cli(monkeypatch, capsys, "search", "--index", index_dir, "x")
    assert code == 1 and "version 0" in err and "rebuild" in err
    code, _, err = run_cli(monkeypatch, capsys, "search", "--index", tmp_path / "missing", "x")
    assert code == 1 and "no index at" in err


def test_folder_corpus_and_incremental_rebuild(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "lease.md").write_text("# 租房笔记\n\n## 押金\n\n房东应当在租期结束后退还押金。\n", encoding="utf-8")
    (folder / "work.txt").write_text("加班费应当按照工资的百分之一百五十支付。\n", encoding="utf-8")
    (folder / "old.txt").write_text("这个文件稍后会被删除。\n", encoding="utf-8")
    out = tmp_path / "idx"
    code, stdout, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", folder, "--out", out,
                                "--no-progress")
    assert code == 0, err
    assert "read 3 added and 0 changed files" in stdout
    code, stdout, err = run_cli(monkeypatch, capsys, "search", "--index", out, "--json", "房东不退押金")
    hits = json.loads(stdout)["hits"]
    assert hits[0]["metadata"]["path"] == "lease.md"
    (folder / "work.txt").write_text("加班费应当按照工资的百分之二百支付。\n", encoding="utf-8")
    (folder / "new.md").write_text("借款利息不得超过法定上限。\n", encoding="utf-8")
    (folder / "old.txt").unlink()
    code, stdout, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", folder, "--out", out,
                                "--no-progress")
    assert code == 0, err
    assert "read 1 added and 1 changed files, kept 1 unchanged, dropped 1 removed" in stdout
    from legalrag.retrieval.index import open_index

    idx = open_index(out)
    assert sorted({d.metadata["path"] for d in idx.documents}) == ["lease.md", "new.md", "work.txt"]
    assert any("百分之二百" in d.text for d in idx.documents)
    assert sorted(idx.manifest["corpus"]["files"]) == ["lease.md", "new.md", "work.txt"]
