"""`legalrag train encoder` from the command line: negatives mined from an index's BM25, bad input named."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("sentence_transformers")

from support.cli_runner import run_cli  # noqa: E402
from support.training_fixtures import tiny_corpus, tiny_encoder  # noqa: E402


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from legalrag.wiring import Root

    root = tmp_path_factory.mktemp("cli")
    docs, queries = tiny_corpus()
    Root().build_index(root / "index", docs, ("bm25",))
    lines = [json.dumps({"query_id": q.id, "query": q.text, "gold_ids": list(q.gold_ids)}) for q in queries]
    (root / "train.jsonl").write_text("\n".join(lines) + "\n")
    bad = lines[:2] + [json.dumps({"query_id": "x", "query": "syn1 law", "gold_ids": ["no-such-article"]})]
    (root / "bad.jsonl").write_text("\n".join(bad) + "\n")
    return root, tiny_encoder(root / "start")


def test_train_encoder_mines_from_the_index_and_writes_a_model(setup, monkeypatch, capsys):
    root, start = setup
    out = root / "model"
    code, stdout, stderr = run_cli(monkeypatch, capsys, "train", "encoder", "--index", root / "index", "--queries",
                                   root / "train.jsonl", "--out", out, "--start", start, "-o", "epochs=1",
                                   "-o", "batch_size=8", "-o", "lr=3e-3", "-o", "freeze_embeddings=false", "--no-progress",
                                   "--json")
    assert code == 0, stderr
    record = json.loads(stdout)
    assert record["negatives"]["sources"] == ["bm25"] and record["epochs"][0]["negatives_per_query"] > 0
    # the -o keys reached EncoderSettings: the record keeps what was given
    assert (record["settings"]["epochs"], record["settings"]["batch_size"], record["settings"]["lr"]) == (1, 8, 3e-3)
    assert record["settings"]["freeze_embeddings"] is False
    assert (out / "training_record.json").exists()
    code, stdout, _ = run_cli(monkeypatch, capsys, "models", "list", root, "--json")
    assert code == 0 and any(r["spec"] == str(out) and r["kind"] == "encoder" for r in json.loads(stdout))


def test_a_gold_id_outside_the_corpus_is_named_with_its_line(setup, monkeypatch, capsys):
    root, start = setup
    code, _, stderr = run_cli(monkeypatch, capsys, "train", "encoder", "--index", root / "index", "--queries",
                              root / "bad.jsonl", "--out", root / "never", "--start", start)
    assert code != 0 and "bad.jsonl:3" in stderr and "no-such-article" in stderr
    assert not (root / "never").exists()


def test_split_writes_the_dev_set_training_holds_out(setup, monkeypatch, capsys):
    from legalrag.evaluation.datasets import load_queries
    from legalrag.training.data import split_by_id

    root, _ = setup
    code, _, stderr = run_cli(monkeypatch, capsys, "train", "split", "--index", root / "index", "--queries",
                              root / "train.jsonl", "--out", root / "split", "-o", "dev_share=0.25")
    assert code == 0, stderr
    dev = [q.id for q in load_queries(root / "split" / "dev.jsonl")]
    _, expected = split_by_id(load_queries(root / "train.jsonl"), 0.25, 13)
    assert dev == [q.id for q in expected] and dev
    code, _, _ = run_cli(monkeypatch, capsys, "train", "split", "--index", root / "index", "--queries",
                         root / "train.jsonl", "--out", root / "first", "-o", "train_first=10")
    assert code == 0 and len(load_queries(root / "first" / "train.jsonl")) == 10


def test_the_shipped_encoders_recipes_train_with_their_cards_settings(setup, monkeypatch, capsys):
    from dataclasses import asdict

    from legalrag.training.recipes import JUDGE_E5, STARD_E5

    root, start = setup
    out = root / "stard-e5"
    code, stdout, stderr = run_cli(monkeypatch, capsys, "train", "stard-e5", "--index", root / "index", "--queries",
                                   root / "train.jsonl", "--out", out, "--start", start, "--no-progress", "--json")
    assert code == 0, stderr
    record = json.loads(stdout)
    assert record["settings"] == asdict(STARD_E5.settings) and record["negatives"]["sources"] == ["bm25"]
    assert record["settings"]["epochs"] == 3 and record["settings"]["lr"] == 5e-5 and not record["settings"]["remine"]
    assert "legalrag train pack-encoder" in stderr and (out / "training_record.json").exists()
    assert JUDGE_E5.settings.remine and JUDGE_E5.mine == ("bm25", "dense-e5-small")
    # judge-e5 mines from the untrained e5-small's dense component too: an index without it is refused up front
    code, _, stderr = run_cli(monkeypatch, capsys, "train", "judge-e5", "--index", root / "index", "--queries",
                              root / "train.jsonl", "--out", root / "judge-e5", "--start", start, "--no-progress")
    assert code != 0 and "dense-e5-small" in stderr and not (root / "judge-e5").exists()
