"""DenseRetriever on faiss: build/save/load, incremental add and delete, filters, index types, hybrid
components in an index directory, and the bad-input paths (other encoder, dimension mismatch, empty corpus,
an endpoint that dies mid-build)."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from support.embeddings_server import EmbeddingsServer
from legalrag.errors import EndpointError, InputError
from legalrag.retrieval.dense import DenseRetriever, component_name, passage_text
from legalrag.wiring import Root, make_encoder
from legalrag.retrieval.encoders_openai import OpenAIEmbeddings
from legalrag.retrieval.index import ComponentSpec
from legalrag.types import Document

ARTICLES = [
    ("劳动合同法第十条", "建立劳动关系，应当订立书面劳动合同。", "劳动合同法"),
    ("民法典第一千零七十九条", "夫妻一方要求离婚的，可以由有关组织进行调解或者直接向人民法院提起离婚诉讼。", "民法典"),
    ("刑法第二百六十四条", "盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金。", "刑法"),
    ("道路交通安全法第七十六条", "机动车发生交通事故造成人身伤亡、财产损失的，由保险公司予以赔偿。", "道路交通安全法"),
    ("民法典第一千零八十四条", "离婚后，不满两周岁的子女，以由母亲直接抚养为原则。", "民法典"),
]
DOCS = [Document(id=str(i), text=t, title=n, metadata={"law": law}) for i, (n, t, law) in enumerate(ARTICLES)]


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home"))


@pytest.fixture
def server():
    with EmbeddingsServer(dim=32) as srv:
        yield srv


def local_encoder(srv, **kw):
    return OpenAIEmbeddings("char-hash", base_url=srv.url, dimension=32, **kw)


def test_passage_text_cuts_title_and_text():
    assert passage_text(DOCS[0], 8) == "劳动合同法第十条"[:8]
    assert passage_text(DOCS[0], 0).startswith("劳动合同法第十条\n建立")


def test_use_retrieves_the_divorce_articles_and_round_trips(tmp_path):
    enc = make_encoder("use-multilingual")
    r = DenseRetriever.build(DOCS, enc)
    hits = r.retrieve("我想和丈夫离婚，孩子归谁抚养？", k=2)
    assert {h.id for h in hits} <= {"1", "4"} and hits[0].rank == 1 and hits[0].retriever == "dense:use-multilingual"
    assert hits[0].score >= hits[1].score
    r.save(tmp_path / "d")
    r2 = DenseRetriever.load(tmp_path / "d", DOCS, make_encoder("use-multilingual"))
    again = r2.retrieve("我想和丈夫离婚，孩子归谁抚养？", k=2)
    assert [(h.id, round(h.score, 5)) for h in again] == [(h.id, round(h.score, 5)) for h in hits]


@pytest.mark.parametrize("index_type", ["flat", "hnsw"])
def test_incremental_add_delete_and_filters(server, tmp_path, index_type):
    r = DenseRetriever.build(DOCS[:3], local_encoder(server), index_type=index_type)
    assert len(r) == 3
    assert r.add(DOCS[3:]) == 2 and len(r) == 5
    q = "离婚后子女抚养"
    top = r.retrieve(q, k=5)
    assert len(top) == 5 and top[0].id == "4"
    assert r.delete(["4", "nope"]) == 1
    assert "4" not in [h.id for h in r.retrieve(q, k=5)]
    only_criminal = r.retrieve(q, k=5, filter=lambda d: d.metadata["law"] == "刑法")
    assert [h.id for h in only_criminal] == ["2"]
    assert r.retrieve(q, k=5, filter=lambda d: False) == []
    changed = Document(id="2", text="离婚后子女抚养的规定。", title="刑法第二百六十四条", metadata={"law": "刑法"})
    r.add([changed])  # same id: replaced, not duplicated
    assert len(r) == 4 and r.retrieve(q, k=1)[0].id == "2"
    r.save(tmp_path / "x")
    back = DenseRetriever.load(tmp_path / "x", DOCS[:2] + [changed] + DOCS[3:], local_encoder(server))
    assert len(back) == 4 and [h.id for h in back.retrieve(q, k=4)] == [h.id for h in r.retrieve(q, k=4)]


def test_ivf_index_type(server):
    docs = [Document(id=str(i), text=f"第{i}条 文本{'甲乙丙丁'[i % 4]}" * 3) for i in range(60)]
    r = DenseRetriever.build(docs, local_encoder(server), index_type="ivf", ivf_nlist=4)
    top = r.retrieve("文本甲", k=5)
    assert len(top) == 5
    assert r.delete([top[0].id]) == 1 and top[0].id not in [h.id for h in r.retrieve("文本甲", k=5)]
    r.add([Document(id="new", text="文本甲文本甲")])
    assert len(r) == 60 and r.retrieve("文本甲文本甲", k=1)[0].id == "new"
    with pytest.raises(InputError, match="needs at least 64 documents"):
        DenseRetriever.build(docs, local_encoder(server), index_type="ivf", ivf_nlist=64)
    with pytest.raises(InputError, match="unknown dense index type"):
        DenseRetriever.build(docs, local_encoder(server), index_type="pq")


def test_other_encoder_or_dimension_is_refused(server, tmp_path):
    DenseRetriever.build(DOCS, local_encoder(server)).save(tmp_path / "d")
    with pytest.raises(InputError, match="built with encoder 'openai:char-hash', not 'use-multilingual'"):
        DenseRetriever.load(tmp_path / "d", DOCS, make_encoder("use-multilingual"))
    with EmbeddingsServer(dim=8) as other:
        wrong_dim = OpenAIEmbeddings("char-hash", base_url=other.url, dimension=8)
        with pytest.raises(InputError, match="holds 32-d vectors but encoder 'openai:char-hash' gives 8-d"):
            DenseRetriever.load(tmp_path / "d", DOCS, wrong_dim)
    r = DenseRetriever.load(tmp_path / "d", DOCS, local_encoder(server))
    with pytest.raises(InputError, match="do not match the dense index"):
        r.search_vectors(np.ones((1, 8), dtype=np.float32))


def test_empty_corpus(server):
    with pytest.raises(InputError, match="no documents"):
        DenseRetriever.build([], local_encoder(server))


def test_hybrid_index_directory_and_failed_rebuild_leaves_old_index(server, tmp_path, monkeypatch):
    monkeypatch.setenv("LEGALRAG_EMBEDDINGS_BASE_URL", server.url)
    spec = "openai:char-hash"
    name = component_name(make_encoder(spec, cache=False))
    assert name == "dense-openai-char-hash"
    out = tmp_path / "idx"
    idx = Root().build_index(out, DOCS, ["bm25", ComponentSpec("dense", {"encoder": spec}, name=name), "hybrid"], lang="zh")
    assert idx.names == ["bm25", name, "hybrid"]
    assert sorted(p.name for p in (out / name).iterdir()) == ["ids.npy", "index.faiss", "meta.json", "rows.npy"]
    assert idx.component_params("hybrid")["members"] == ["bm25", name]
    hits = Root().index(out).retriever("hybrid").retrieve("离婚 子女 抚养", k=3)
    assert hits[0].id in {"1", "4"} and hits[0].retriever == "hybrid"
    assert set(next(h for h in hits if h.id == "4").sources) == {"bm25", "dense:openai:char-hash"}
    before = sorted(p.name for p in out.iterdir())
    # the endpoint goes away: the rebuild fails with a clear error and the old index is untouched
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    monkeypatch.setenv("LEGALRAG_EMBEDDINGS_BASE_URL", dead)
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "fresh-cache"))
    with pytest.raises(EndpointError, match="cannot connect"):
        Root().build_index(out, DOCS, [ComponentSpec("dense", {"encoder": spec}, name=name)], lang="zh")
    assert sorted(p.name for p in out.iterdir()) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".idx")]
    monkeypatch.setenv("LEGALRAG_EMBEDDINGS_BASE_URL", server.url)
    assert [h.id for h in Root().index(out).retriever("hybrid").retrieve("离婚 子女 抚养", k=3)] == [h.id for h in hits]


def test_rebuilding_after_a_corpus_change_encodes_only_the_changed_article(server, tmp_path, monkeypatch):
    monkeypatch.setenv("LEGALRAG_EMBEDDINGS_BASE_URL", server.url)
    spec = ComponentSpec("dense", {"encoder": "openai:char-hash"}, name=component_name("openai:char-hash"))
    Root().build_index(tmp_path / "idx", DOCS, [spec], lang="zh")
    first = [t for r in server.requests for t in r["body"]["input"]]
    assert len(first) >= len(DOCS)
    changed = DOCS[:2] + [Document(id="2", text="盗窃数额巨大的，处十年以上有期徒刑。", title="刑法第二百六十四条",
                                   metadata={"law": "刑法"})] + DOCS[3:]
    server.requests.clear()
    idx = Root().build_index(tmp_path / "idx", changed, [spec], lang="zh")
    encoded = [t for r in server.requests for t in r["body"]["input"] if t != "dimension probe"]
    assert encoded == [passage_text(changed[2])]
    assert idx.retriever(spec.dirname).retrieve("盗窃数额巨大", k=1)[0].id == "2"
