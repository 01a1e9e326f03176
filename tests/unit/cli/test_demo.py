import json
import sys

from legalrag.corpora.statutes import load_statutes
from legalrag.demo import SAMPLE_QUESTION, demo_hits, demo_index, sample_path


def test_sample_is_small_package_data_with_unique_ids():
    p = sample_path()
    assert p.exists() and p.stat().st_size < 1_000_000
    docs = load_statutes(p)  # raises on repeated ids or missing fields
    assert 300 <= len(docs) <= 500
    laws = {d.metadata["law"] for d in docs}
    assert {"劳动合同法", "消费者权益保护法", "中华人民共和国民法典", "道路交通安全法"} <= laws


def test_demo_retrieval_step_and_cache(tmp_path):
    idx = demo_index(tmp_path / "demo")
    hits = demo_hits(SAMPLE_QUESTION, k=5, index=idx)
    assert hits[0].document.title == "劳动合同法第八十二条"
    built = (idx.path / "manifest.json").stat().st_mtime_ns
    assert demo_index(tmp_path / "demo").path == idx.path
    assert (idx.path / "manifest.json").stat().st_mtime_ns == built  # reused, not rebuilt
    mf = idx.path / "manifest.json"
    m = json.loads(mf.read_text(encoding="utf-8"))
    m["corpus"]["source"] = "an older sample"
    mf.write_text(json.dumps(m), encoding="utf-8")
    again = demo_index(tmp_path / "demo")  # stale: rebuilt
    assert again.manifest["corpus"]["source"].startswith("legalrag/data/statutes_sample.jsonl sha256=")


def test_demo_command(tmp_path, monkeypatch, capsys, law_in_force):
    from legalrag.cli import main

    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path))
    monkeypatch.setattr(sys, "argv", ["legalrag", "demo", "--k", "3"])
    main()
    out = capsys.readouterr().out
    assert SAMPLE_QUESTION in out
    assert "Searched the national law in force on" in out and "as published up to 2025-04-19" in out
    assert "《劳动合同法》第八十二条" in out and "二倍的工资" in out
    assert "Cited articles:" in out
    monkeypatch.setattr(sys, "argv", ["legalrag", "demo", "喝了酒开车被抓了会怎么样", "--k", "5"])
    main()
    out = capsys.readouterr().out
    assert "《中华人民共和国刑法》第一百三十三条之一" in out


def test_sample_matches_the_stard_corpus_and_covers_training_queries(shared_data):
    sample = {d.id: d for d in load_statutes(sample_path())}
    corpus = {}
    with (shared_data / "stard" / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if str(r["id"]) in sample:
                corpus[str(r["id"])] = r
    assert set(corpus) == set(sample)
    assert all(corpus[i]["name"] == d.title and corpus[i]["content"].strip() == d.text for i, d in sample.items())
    train = [json.loads(x) for x in (shared_data / "stard" / "train.jsonl").open(encoding="utf-8")]
    covered = [q for q in train if {str(g) for g in q["gold_ids"]} <= set(sample)]
    assert len(covered) >= 120
