"""The Milvus backend against the real engine (embedded Milvus Lite through pymilvus, the client a Milvus
server is used with): the same dense results as the FAISS backend on a tiny corpus, filters pushed into the
engine, BM25 full text, hybrid fusion, an add/change/delete round trip, atomic rebuilds behind an alias, and
the refusals (another encoder or dimension, an older schema, an unreachable engine)."""

from __future__ import annotations


import pytest

pytest.importorskip("pymilvus", reason="pip install 'legalrag[scale]'")
pytest.importorskip("milvus_lite", reason="pip install 'legalrag[scale]'")

from legalrag.errors import IndexError_, InputError  # noqa: E402
from legalrag.retrieval import milvus  # noqa: E402
from legalrag.retrieval.index import ComponentSpec, build_index  # noqa: E402
from legalrag.retrieval.pipeline import build_pipeline, law_filter  # noqa: E402
from legalrag.testing import FakeEncoder  # noqa: E402
from legalrag.types import Document  # noqa: E402
from legalrag.wiring import register_backends  # noqa: E402

ARTICLES = [
    ("劳动合同法", "10", "建立劳动关系，应当订立书面劳动合同。"),
    ("劳动合同法", "82", "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。"),
    ("民法典", "1079", "夫妻一方要求离婚的，可以由有关组织进行调解或者直接向人民法院提起离婚诉讼。"),
    ("民法典", "1084", "离婚后，不满两周岁的子女，以由母亲直接抚养为原则。"),
    ("民法典", "712", "出租人应当履行租赁物的维修义务，但是当事人另有约定的除外。"),
    ("刑法", "264", "盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃、携带凶器盗窃、扒窃的，处三年以下有期徒刑。"),
    ("刑法", "263", "以暴力、胁迫或者其他方法抢劫公私财物的，处三年以上十年以下有期徒刑，并处罚金。"),
    ("道路交通安全法", "76", "机动车发生交通事故造成人身伤亡、财产损失的，由保险公司在机动车第三者责任强制保险责任限额范围内予以赔偿。"),
]
DOCS = [Document(id=f"{law}-{art}", text=text, title=f"{law}第{art}条", metadata={"law": law, "article": art})
        for law, art, text in ARTICLES]
QUERIES = ["没有签劳动合同，公司要付双倍工资吗", "离婚后孩子归谁抚养", "房东不修房子怎么办", "偷东西数额较大判几年",
           "车祸后保险公司赔偿", "抢劫罪"]


def fake_factory(spec, **_):
    return FakeEncoder(dimension=64, model_id=f"fake-{spec}")


@pytest.fixture(scope="module")
def indexes(tmp_path_factory):
    """One FAISS index and one Milvus index over the same documents, with the same (fake) encoder."""
    register_backends()
    root = tmp_path_factory.mktemp("milvus")
    faiss_idx = build_index(root / "faiss", DOCS, ["bm25", ComponentSpec("dense", {"encoder": "hash"}), "hybrid"],
                            lang="zh", make_encoder=fake_factory)
    milvus_idx = build_index(root / "milvus", DOCS,
                             [ComponentSpec("milvus", {"encoder": "hash"}, name="dense-fake"),
                              ComponentSpec("milvus-bm25", name="bm25"), "hybrid"],
                             lang="zh", make_encoder=fake_factory)
    yield faiss_idx, milvus_idx
    milvus.release(str(milvus_idx.path / milvus.EMBEDDED))


def _ranked(hits):
    """Scores in order, and the ids of each score group; tied documents may come in any order, and the group
    at the cut-off may hold different members of a larger tie."""
    scores = [round(h.score, 5) for h in hits]
    groups = [sorted(h.id for h in hits if round(h.score, 5) == s) for s in dict.fromkeys(scores)]
    return scores, groups[:-1], len(groups[-1]) if groups else 0


def test_dense_search_equals_faiss_exact(indexes):
    faiss_idx, milvus_idx = indexes
    f, m = faiss_idx.retriever("dense"), milvus_idx.retriever("dense-fake")
    assert m.name == f.name == "dense:fake-hash" and len(m) == len(DOCS)
    for q in QUERIES:
        assert _ranked(m.retrieve(q, k=5)) == _ranked(f.retrieve(q, k=5))
    assert [_ranked(h) for h in m.retrieve_batch(QUERIES, k=3)] == [_ranked(h) for h in f.retrieve_batch(QUERIES, k=3)]
    assert m.retrieve(QUERIES[1], k=1)[0].document == milvus_idx.get(m.retrieve(QUERIES[1], k=1)[0].id)


def test_filters_are_pushed_into_the_engine_with_the_same_results(indexes):
    faiss_idx, milvus_idx = indexes
    f, m = faiss_idx.retriever("dense"), milvus_idx.retriever("dense-fake")
    by_law = law_filter(milvus_idx, ["民法典"])
    assert m.filters(by_law) == 'law in ["民法典"]'
    odd = lambda d: d.metadata["article"] in ("10", "264")  # noqa: E731 - keeps parts of laws
    assert m.filters(odd).startswith("id in")
    for flt in (by_law, odd, lambda d: False):
        for q in QUERIES:
            assert _ranked(m.retrieve(q, k=5, filter=flt)) == _ranked(f.retrieve(q, k=5, filter=flt))
    assert {h.document.metadata["law"] for h in m.retrieve("离婚", k=5, filter=by_law)} == {"民法典"}
    # one law whole and one article of another: pushed down by id, never widened to both laws
    mixed = lambda d: d.metadata["law"] == "民法典" or d.metadata["article"] == "264"  # noqa: E731
    assert m.filters(mixed).startswith("id in"), f"the filter became {m.filters(mixed)!r}"
    got = sorted(h.id for h in m.retrieve("抢劫罪", k=8, filter=mixed))
    assert got == ["刑法-264", "民法典-1079", "民法典-1084", "民法典-712"], \
        f"the filter keeping 民法典 and 刑法 art. 264 returned {got}: it was widened to whole laws"


def test_engine_bm25_and_hybrid_fusion(indexes):
    faiss_idx, milvus_idx = indexes
    bm25 = milvus_idx.retriever("bm25")
    hits = bm25.retrieve("盗窃公私财物数额较大", k=3)
    assert hits[0].id == "刑法-264" and hits[0].retriever == "bm25"
    assert all(h.score > 0 for h in hits) and [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert bm25.retrieve("盗窃", k=3, filter=law_filter(milvus_idx, ["民法典"])) == []
    pipe = build_pipeline(milvus_idx, "hybrid")
    fused = pipe.search("离婚后子女抚养", k=3)
    assert fused[0].id == "民法典-1084" and set(fused[0].sources) == {"bm25", "dense:fake-hash"}
    local = build_pipeline(faiss_idx, "hybrid").search("离婚后子女抚养", k=3)
    assert fused[0].id == local[0].id


def test_update_and_delete_round_trip_is_idempotent(tmp_path):
    store = milvus.MilvusStore(str(tmp_path / "rt.db"), "laws")
    enc = FakeEncoder(dimension=64)
    try:
        milvus.build_collection(store, DOCS[:4], enc)
        r = milvus.MilvusRetriever(store, "dense", encoder=enc)
        assert len(r) == 4
        assert r.add(DOCS[4:]) == 4 and len(r) == 8
        assert r.add(DOCS[4:]) == 4 and len(r) == 8  # again: replaced, not duplicated
        changed = Document(id="刑法-264", text="离婚后子女抚养的规定。", title="刑法第264条",
                           metadata={"law": "刑法", "article": "264"})
        r.add([changed])
        top = r.retrieve("离婚后子女抚养的规定", k=1)[0]
        assert top.id == "刑法-264" and top.document.text == "离婚后子女抚养的规定。"  # rebuilt from the engine
        assert r.delete(["刑法-264", "no-such-id"]) == 1 and r.delete(["刑法-264"]) == 0
        assert "刑法-264" not in [h.id for h in r.retrieve("离婚后子女抚养的规定", k=8)]
        assert r.sync(DOCS) == {"added": 1, "changed": 0, "removed": 0, "unchanged": 7}
        assert r.sync(DOCS) == {"added": 0, "changed": 0, "removed": 0, "unchanged": 8}
        assert r.sync(DOCS[:5] + [changed] + DOCS[6:7]) == {"added": 0, "changed": 1, "removed": 1, "unchanged": 6}
        assert len(r) == 7 and r.retrieve("离婚后子女抚养的规定", k=1)[0].id == "刑法-264"
    finally:
        store.client.close()
        milvus.release(str(tmp_path / "rt.db"))


def test_a_failed_rebuild_leaves_the_previous_collection_serving(tmp_path):
    uri = str(tmp_path / "swap.db")
    store = milvus.MilvusStore(uri, "laws")
    enc = FakeEncoder(dimension=64)
    try:
        first = milvus.build_collection(store, DOCS, enc)
        assert store.current() == first
        bad = DOCS + [Document(id="x" * 2000, text="太长的编号", metadata={"law": "刑法"})]
        with pytest.raises(Exception):
            milvus.build_collection(store, bad, enc)
        assert store.current() == first and store.client.list_collections() == [first]
        r = milvus.MilvusRetriever(store, "dense", encoder=enc)
        assert len(r) == len(DOCS) and r.retrieve(DOCS[6].text, k=1)[0].id == "刑法-263"
        second = milvus.build_collection(store, DOCS[:3], enc)  # a complete rebuild swaps and drops the old one
        assert store.current() == second != first and store.client.list_collections() == [second]
        assert len(r) == 3
    finally:
        store.client.close()
        milvus.release(uri)


def test_another_encoder_dimension_or_schema_is_refused(indexes, tmp_path):
    _, milvus_idx = indexes
    with pytest.raises(InputError, match="fake-hash.*other|other.*fake-hash"):
        milvus_idx.retriever("dense-fake", encoder=FakeEncoder(dimension=64, model_id="other"))
    with pytest.raises(InputError, match="64-d.*32-d"):
        milvus_idx.retriever("dense-fake", encoder=FakeEncoder(dimension=32, model_id="fake-hash"))
    uri = str(tmp_path / "old.db")
    store = milvus.MilvusStore(uri, "old")
    try:
        name = store.create(model_id="fake-hash", dimension=64)
        store.client.alter_collection_properties(name, {milvus.PROP_SCHEMA: "0"})
        store.publish(name, 0)
        with pytest.raises(IndexError_, match="schema version '0'.*index build -o backend=milvus"):
            milvus.MilvusRetriever(store, "bm25")
    finally:
        store.client.close()
        milvus.release(uri)


def test_an_unreachable_engine_is_named_and_leaves_no_index(tmp_path):
    register_backends()
    out = tmp_path / "idx"
    with pytest.raises(IndexError_, match=r"cannot reach Milvus at http://127\.0\.0\.1:9"):
        build_index(out, DOCS, [ComponentSpec("milvus", {"uri": "http://127.0.0.1:9", "connect_timeout": 2})],
                    lang="zh", make_encoder=fake_factory)
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".idx")]
    with pytest.raises(IndexError_, match="has no collection 'nope'"):
        store = milvus.MilvusStore(str(tmp_path / "empty.db"), "nope")
        try:
            store.meta()
        finally:
            store.client.close()
            milvus.release(str(tmp_path / "empty.db"))


def test_cli_builds_searches_and_evaluates_on_milvus(tmp_path, test_data, monkeypatch, capsys):
    import json

    from support.cli_runner import run_cli

    out = tmp_path / "idx"
    code, stdout, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", test_data / "lexical_statutes.jsonl",
                                "--out", out, "--retriever", "bm25", "-o", "backend=milvus", "--lang", "zh",
                                "--no-progress")
    assert code == 0, err
    assert "indexed 12 documents" in stdout and (out / milvus.EMBEDDED).is_dir()
    try:
        code, stdout, err = run_cli(monkeypatch, capsys, "index", "info", "--index", out, "--json")
        kinds = {n: c["kind"] for n, c in json.loads(stdout)["components"].items()}
        assert kinds == {"milvus": "milvus", "bm25": "milvus-bm25"}
        code, stdout, err = run_cli(monkeypatch, capsys, "search", "--index", out, "--retriever", "bm25", "--json",
                                    "--k", "3", "出租人不履行维修义务怎么办")
        assert code == 0, err
        top = json.loads(stdout)["hits"][0]
        assert top["id"] == "711" and top["citation"] == "《中华人民共和国民法典》第七百一十二条"
        code, stdout, err = run_cli(monkeypatch, capsys, "search", "--index", out, "--retriever", "bm25", "--json",
                                    "--filter-law", "劳动合同法", "借款要付利息吗，用人单位")
        hits = json.loads(stdout)["hits"]
        assert code == 0 and hits and all(h["metadata"]["law"] == "劳动合同法" for h in hits)
        q = tmp_path / "queries.jsonl"
        q.write_text(json.dumps({"query_id": 1, "query": "出租人不维修租赁物", "gold_ids": [711]}) + "\n",
                     encoding="utf-8")
        code, stdout, err = run_cli(monkeypatch, capsys, "eval", "retrieval", "--index", out, "--queries", q,
                                    "--retriever", "bm25", "-o", "k=5", "--json", "--no-progress")
        assert code == 0, err
        assert json.loads(stdout)["hit@5"] == 1.0
        code, stdout, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus",
                                    test_data / "lexical_statutes.jsonl", "--out", tmp_path / "q", "--retriever",
                                    "qld", "-o", "backend=milvus", "--no-progress")
        assert code == 1 and "qld has no Milvus equivalent" in err and not (tmp_path / "q").exists()
        code, stdout, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus",
                                    test_data / "lexical_statutes.jsonl", "--out", tmp_path / "q", "-o",
                                    "uri=http://127.0.0.1:19530", "--no-progress")
        assert code == 2 and "uri tune a Milvus index; add -o backend=milvus" in err and not (tmp_path / "q").exists()
    finally:
        milvus.release(str(out / milvus.EMBEDDED))

# The CLI with a real encoder (dense and hybrid, on Milvus Lite and on a Milvus server, against the local index)
# is tests/e2e/test_milvus_server.py::test_cli_with_a_real_encoder_on_the_server_and_lite_matches_the_local_index.


def test_a_streamed_build_from_a_generator_and_a_memmap_equals_the_encoded_one(tmp_path, monkeypatch):
    """Documents from a generator and precomputed vectors from a .npy memmap are consumed a batch at a time (3
    here): when each batch is sent, no more documents have been read than that batch needs. The collection
    searches like one built by encoding; a vector count that does not match drops the half-written collection."""
    import numpy as np

    from legalrag.retrieval.dense import passage_text

    uri = str(tmp_path / "stream.db")
    enc = FakeEncoder(dimension=64)
    path = tmp_path / "vectors.npy"
    mm = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(len(DOCS), 64))
    mm[:] = enc.encode_documents([passage_text(d, 512) for d in DOCS])
    mm.flush()
    del mm
    consumed, at_insert = [0], []

    def docs(n=len(DOCS)):
        for d in DOCS[:n]:
            consumed[0] += 1
            yield d

    encoded, streamed = milvus.MilvusStore(uri, "encoded"), milvus.MilvusStore(uri, "streamed")
    try:
        milvus.build_collection(encoded, DOCS, enc)
        send = streamed.client.insert
        monkeypatch.setattr(streamed.client, "insert", lambda name, rows: (at_insert.append(consumed[0]),
                                                                            send(name, rows))[1])
        first = milvus.build_collection(streamed, docs(), enc, vectors=np.load(path, mmap_mode="r"), batch_size=3)
        assert at_insert == [3, 6, 8]
        a = milvus.MilvusRetriever(encoded, "dense", encoder=enc)
        b = milvus.MilvusRetriever(streamed, "dense", encoder=enc)
        assert len(b) == len(DOCS)
        for q in QUERIES:
            assert _ranked(b.retrieve(q, k=5)) == _ranked(a.retrieve(q, k=5))
        with pytest.raises(InputError, match="8 vectors for 7 documents"):  # found after the last batch
            milvus.build_collection(streamed, docs(7), enc, vectors=np.load(path, mmap_mode="r"))
        with pytest.raises(InputError, match="8 precomputed vectors for 7 documents"):  # found before writing
            milvus.build_collection(streamed, DOCS[:7], enc, vectors=np.load(path, mmap_mode="r"))
        with pytest.raises(InputError, match="shape"):
            milvus.build_collection(streamed, DOCS, FakeEncoder(dimension=32), vectors=np.load(path))
        assert streamed.current() == first and len(b) == len(DOCS)
        assert sorted(streamed.client.list_collections()) == sorted([first, encoded.current()])
    finally:
        encoded.client.close()
        streamed.client.close()
        milvus.release(uri)


def test_index_and_search_parameters_are_recorded_and_used(indexes, tmp_path):
    faiss_idx, _ = indexes
    register_backends()
    spec = {"encoder": "hash", "engine_index": "IVF_FLAT", "index_params": {"nlist": 4},
            "search_params": {"nprobe": len(DOCS)}}  # at least one list per document: every list is searched
    idx = build_index(tmp_path / "ivf", DOCS, [ComponentSpec("milvus", spec, name="dense-fake")], lang="zh",
                      make_encoder=fake_factory)
    try:
        params = idx.component_params("dense-fake")
        assert params["engine_index"] == "IVF_FLAT" and params["index_params"] == {"nlist": 4}
        assert params["search_params"] == {"nprobe": len(DOCS)}
        r, f = idx.retriever("dense-fake"), faiss_idx.retriever("dense")
        assert r.search_params == {"nprobe": len(DOCS)}
        for q in QUERIES:
            assert _ranked(r.retrieve(q, k=5)) == _ranked(f.retrieve(q, k=5))
        # the parameters reach the engine: one list searched finds fewer documents (Milvus Lite clusters these
        # 8 documents into 8 lists whatever nlist says; a server uses nlist, see test_milvus_server.py)
        one = milvus.MilvusRetriever(r.store, "dense", encoder=r.encoder, search_params={"nprobe": 1})
        assert all(len(one.retrieve(q, k=5)) < 5 for q in QUERIES)
        with pytest.raises(InputError, match="search parameters must be numbers"):
            milvus.MilvusRetriever(r.store, "dense", encoder=r.encoder, search_params={"nprobe": "all"})
    finally:
        milvus.release(str(idx.path / milvus.EMBEDDED))
    assert milvus.index_params_for("HNSW", {"M": 16}) == {"M": 16, "efConstruction": 200}
    assert milvus.index_params_for("FLAT") == {}
    for bad, match in ((("IVF_FLAT", {"nlist": "many"}), "must be numbers"), (("FLAT", {"nlist": 4}), "no param"),
                       (("IVF_PQ", None), "unknown Milvus index type")):
        with pytest.raises(InputError, match=match):  # refused before anything is encoded or written
            build_index(tmp_path / "bad", DOCS, [ComponentSpec("milvus", {"encoder": "hash", "engine_index": bad[0],
                                                                          "index_params": bad[1]})],
                        lang="zh", make_encoder=fake_factory)
        assert not (tmp_path / "bad").exists()
