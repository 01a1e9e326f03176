"""legalrag.training: splitting, mining, and contrastive fine-tuning of a tiny random BERT on an inline corpus."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")

from legalrag.errors import InputError  # noqa: E402
from legalrag.training.data import dense_ranker, mine_negatives, similarity_guard, split_by_id  # noqa: E402
from legalrag.training.encoder import EncoderSettings, train_encoder  # noqa: E402
from legalrag.types import Query  # noqa: E402
from support.training_fixtures import tiny_corpus, tiny_encoder  # noqa: E402

SETTINGS = dict(epochs=3, batch_size=8, lr=3e-3, dev_share=0.25, freeze_embeddings=False, negatives=1,
                checkpoint_every=1000, select_by="mrr@10")


@pytest.fixture(scope="module")
def start(tmp_path_factory):
    return tiny_encoder(tmp_path_factory.mktemp("tiny") / "start")


@pytest.fixture(scope="module")
def trained(start, tmp_path_factory):
    docs, queries = tiny_corpus()
    out = tmp_path_factory.mktemp("run") / "model"
    record = train_encoder(start, out, queries, docs, {}, EncoderSettings(**SETTINGS), progress=False)
    return out, record


def test_split_depends_on_ids_and_seed_only():
    qs = [Query(text=f"q{i}", id=f"id{i}", gold_ids=("a",)) for i in range(40)]
    train, dev = split_by_id(qs, 0.25, seed=1)
    train2, dev2 = split_by_id(list(reversed(qs)), 0.25, seed=1)
    assert {q.id for q in dev} == {q.id for q in dev2} and dev and len(train) + len(dev) == 40
    assert {q.id for q in split_by_id(qs, 0.25, seed=2)[1]} != {q.id for q in dev}


def test_too_few_training_queries_says_how_many_are_needed():
    qs = [Query(text=f"q{i}", id=f"id{i}", gold_ids=("a",)) for i in range(5)]
    with pytest.raises(InputError, match="at least 8 are needed"):
        split_by_id(qs, 0.2, seed=1)


def test_an_inner_split_with_the_outer_seed_is_refused_with_the_way_out():
    qs = [Query(text=f"q{i}", id=f"id{i}", gold_ids=("a",)) for i in range(200)]
    outer_train, _ = split_by_id(qs, 0.2, seed=13)
    with pytest.raises(InputError, match=r"train part of `legalrag train split -o seed=13`.*another -o seed"):
        split_by_id(outer_train, 0.1, seed=13)  # the band [0, 0.1) was all held out by the outer split
    inner_train, inner_dev = split_by_id(outer_train, 0.1, seed=7)
    assert inner_dev and len(inner_train) + len(inner_dev) == len(outer_train)


def test_mining_removes_gold_and_the_guard_drops_near_copies_of_the_gold():
    ids = ["gold", "copy", "near", "far"]
    docs = np.array([[1, 0], [1, 0.01], [0.8, 0.6], [0, 1]], dtype=np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    q = Query(text="x", id="q", gold_ids=("gold",))
    qv = {"q": np.array([1, 0], dtype=np.float32)}
    rank = dense_ranker(qv, ids, docs)
    plain = mine_negatives([q], {"dense": rank}, depth=4)
    assert plain.by_query["q"] == ["copy", "near", "far"]
    guarded = mine_negatives([q], {"dense": rank}, depth=4, guard=similarity_guard(qv, dict(zip(ids, docs)), 0.95))
    assert guarded.by_query["q"] == ["near", "far"] and guarded.guarded == 1


def test_training_lowers_the_loss_and_raises_dev_figures(trained):
    out, record = trained
    epochs = record["epochs"]
    assert [e["epoch"] for e in epochs] == [0, 1, 2, 3]
    first, last = epochs[1]["losses"], epochs[-1]["losses"]
    assert np.mean(last) < np.mean(first)
    before = epochs[0]["dev"]
    best = next(e for e in epochs if e["epoch"] == record["best_epoch"])["dev"]
    assert best["mrr@10"] > before["mrr@10"] + 0.1
    assert best["recall@10"] >= before["recall@10"]
    saved = json.loads((out / "training_record.json").read_text())
    assert saved["best_epoch"] == record["best_epoch"] and saved["data"]["n_dev"] == len(saved["data"]["dev_ids"])
    assert (out / "legalrag_model.json").exists() and not (out.parent / f".{out.name}.work").exists()


def test_every_epochs_dev_ranking_is_published_as_a_run_that_scores_like_the_record(trained):
    from legalrag.evaluation.metrics import mrr_at_k
    from legalrag.evaluation.runs import load_run

    out, record = trained
    _, queries = tiny_corpus()
    gold = {q.id: q.gold_ids for q in queries}
    for entry in record["epochs"]:
        name, run = load_run(out / "dev_runs" / f"epoch-{entry['epoch']}")
        assert sorted(run) == sorted(record["data"]["dev_ids"])
        mrr = float(np.mean([mrr_at_k(ids, gold[q], 10) for q, ids in run.items()]))
        assert mrr == pytest.approx(entry["dev"]["mrr@10"])

def test_trained_directory_is_an_encoder_with_its_roles(trained):
    from legalrag.wiring import make_encoder

    out, _ = trained
    enc = make_encoder(str(out), cache=False, progress=False)
    assert enc.query_prefix == "query: " and enc.passage_prefix == "passage: "
    v = enc.encode_queries(["syn3 the law"])
    assert v.shape == (1, 32) and abs(float(np.linalg.norm(v)) - 1) < 1e-4


def test_a_killed_run_resumes_from_its_checkpoint_and_ends_where_an_uninterrupted_one_does(start, trained, tmp_path):
    docs, queries = tiny_corpus()
    out = tmp_path / "model"
    partial = train_encoder(start, out, queries, docs, {}, EncoderSettings(**SETTINGS), progress=False,
                            stop_after_steps=4)
    assert partial["interrupted"] and not out.exists()
    record = train_encoder(start, out, queries, docs, {}, EncoderSettings(**SETTINGS), progress=False)
    assert record["resumed_from_step"] == 4
    for a, b in zip(record["epochs"][1:], trained[1]["epochs"][1:]):
        assert np.allclose(a["losses"], b["losses"], atol=1e-4)
        assert a["dev"] == pytest.approx(b["dev"], abs=1e-6)


def test_a_checkpoint_of_another_run_is_not_silently_mixed_in(start, tmp_path):
    docs, queries = tiny_corpus()
    out = tmp_path / "model"
    train_encoder(start, out, queries, docs, {}, EncoderSettings(**SETTINGS), progress=False, stop_after_steps=1)
    other = EncoderSettings(**{**SETTINGS, "lr": 1e-3})
    with pytest.raises(InputError, match="restart=true"):
        train_encoder(start, out, queries, docs, {}, other, progress=False)


def test_a_cross_encoder_is_refused_as_a_starting_encoder(tmp_path):
    from legalrag.training.encoder import load_encoder_model

    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertForSequenceClassification"]}))
    with pytest.raises(InputError, match="cross-encoder"):
        load_encoder_model(tmp_path, 32)


def test_guarded_mining_reuses_the_dev_evaluations_corpus_vectors(start):
    from legalrag.retrieval.bm25 import BM25Retriever
    from legalrag.training.data import training_text, retriever_ranker
    from legalrag.training.encoder import dev_metrics, guarded_mining, load_encoder_model

    docs, queries = tiny_corpus()
    s = EncoderSettings(**{**SETTINGS, "guard_ratio": 0.5})
    model = load_encoder_model(start, s.max_seq_length)
    texts = {d.id: training_text(d, s.max_chars) for d in docs}
    ids = list(texts)
    run, _ = dev_metrics(model, queries[:4], ids, [texts[d] for d in ids])
    rankers = {"bm25": retriever_ranker(BM25Retriever.from_documents(docs))}
    fresh = guarded_mining(model, queries, rankers, texts, s)
    reused = guarded_mining(model, queries, rankers, texts, s, corpus=(ids, run.matrix))
    assert reused.by_query == fresh.by_query and reused.guarded == fresh.guarded > 0


def test_without_dev_or_remining_the_corpus_is_not_encoded(start, tmp_path, monkeypatch):
    """--dev-share 0 and no --remine: only the guard's candidates are encoded, never the whole corpus, and the
    last epoch is the one published (judged later by an index of it)."""
    from legalrag.retrieval.bm25 import BM25Retriever
    from legalrag.training import encoder as enc
    from legalrag.training.data import retriever_ranker

    docs, queries = tiny_corpus()
    def no_corpus_encode(*a, **kw):
        raise AssertionError("the whole corpus was encoded")

    monkeypatch.setattr(enc, "dev_metrics", no_corpus_encode)
    s = EncoderSettings(**{**SETTINGS, "dev_share": 0.0, "epochs": 2, "guard_ratio": 0.5})
    rankers = {"bm25": retriever_ranker(BM25Retriever.from_documents(docs))}
    record = train_encoder(start, tmp_path / "m", queries, docs, rankers, s, progress=False)
    assert record["negatives"]["guarded"] > 0  # the guard ran, on its candidates' vectors
    assert record["best_epoch"] == 2 and record["against_start"] is None
    assert [h["dev"] for h in record["epochs"]] == [{}, {}, {}]
    assert not (tmp_path / "m" / "dev_runs").exists() and (tmp_path / "m" / "modules.json").exists()
