import json

import pytest

from legalrag.errors import IndexError_, InputError
from legalrag.retrieval import index as index_mod
from legalrag.retrieval.index import (COMPONENT_KINDS, ComponentKind, ComponentSpec, add_components, build_index,
                                      open_index, register_component_kind)
from legalrag.types import Document

DOCS = [
    Document(id="1", text="用人单位应当与劳动者订立书面劳动合同。", title="中华人民共和国劳动合同法第十条",
             metadata={"law": "中华人民共和国劳动合同法", "article": "10", "article_label": "第十条"}),
    Document(id="2", text="出租人应当履行租赁物的维修义务。", title="中华人民共和国民法典第七百一十二条",
             metadata={"law": "中华人民共和国民法典", "article": "712", "article_label": "第七百一十二条"}),
    Document(id="3", text="借款人应当按照约定的期限返还借款。", title="中华人民共和国民法典第六百七十五条",
             metadata={"law": "中华人民共和国民法典", "article": "675", "article_label": "第六百七十五条"}),
]


def test_build_open_and_search(tmp_path):
    out = tmp_path / "idx"
    idx = build_index(out, DOCS, retrievers=["bm25", "qld"], lang="auto", params={"bm25": {"k1": 1.0}})
    m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert m["format"] == "legalrag-index" and m["version"] == index_mod.VERSION and m["lang"] == "zh"
    assert m["corpus"]["n_documents"] == 3 and len(m["corpus"]["sha256"]) == 64
    assert m["components"]["bm25"]["params"]["k1"] == 1.0
    assert m["components"]["bm25"]["params"]["tokenizer"]["lang"] == "zh"
    assert m["components"]["qld"]["params"]["mu"] == 200.0
    assert sorted(p.name for p in out.iterdir()) == ["bm25", "documents.jsonl", "manifest.json", "qld"]
    assert not list(out.rglob("*.pkl")) and not list(out.rglob("*.pickle"))

    again = open_index(out)
    assert again.names == ["bm25", "qld"] and again.default == "bm25"
    assert again.documents == DOCS
    assert again.get("2") == DOCS[1] and "3" in again and "9" not in again
    with pytest.raises(KeyError):
        again.get("9")
    for name in ("bm25", "qld"):
        hits = again.retriever(name).retrieve("房东不履行维修义务", k=2)
        assert hits[0].id == "2" and hits[0].retriever == name
    assert again.retriever() is again.retriever("bm25")  # loaded once
    assert again.retriever("qld", mu=10.0).mu == 10.0
    with pytest.raises(InputError, match="no component 'dense'"):
        again.retriever("dense")
    assert idx.corpus_sha256 == again.corpus_sha256


def test_same_documents_give_the_same_corpus_hash(tmp_path):
    a = build_index(tmp_path / "a", DOCS, retrievers=["bm25"], lang="zh")
    b = build_index(tmp_path / "b", DOCS, retrievers=["qld"], lang="zh")
    c = build_index(tmp_path / "c", DOCS[:2], retrievers=["bm25"], lang="zh")
    assert a.corpus_sha256 == b.corpus_sha256 != c.corpus_sha256


def test_failed_build_leaves_no_half_written_index(tmp_path):
    out = tmp_path / "idx"
    build_index(out, DOCS, retrievers=["bm25"], lang="zh")
    before = (out / "manifest.json").read_text(encoding="utf-8")
    dup = DOCS + [Document(id="1", text="重复", source="x.jsonl:4")]
    with pytest.raises(InputError, match="appears twice"):
        build_index(out, dup, retrievers=["bm25"], lang="zh")
    with pytest.raises(InputError, match="unknown index component 'nope'"):
        build_index(out, DOCS, retrievers=["bm25", "nope"], lang="zh")
    with pytest.raises(InputError, match="bad parameters"):
        build_index(out, DOCS, retrievers=["bm25"], lang="zh", params={"bm25": {"k9": 1}})
    assert (out / "manifest.json").read_text(encoding="utf-8") == before  # the old index is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]  # no temp dirs left behind
    with pytest.raises(InputError, match="no documents"):
        build_index(tmp_path / "empty", [], retrievers=["bm25"])
    assert not (tmp_path / "empty").exists()


def test_open_rejects_missing_foreign_and_old_directories(tmp_path):
    with pytest.raises(IndexError_, match="no index at"):
        open_index(tmp_path / "missing")
    (tmp_path / "plain").mkdir()
    with pytest.raises(IndexError_, match="manifest.json is missing"):
        open_index(tmp_path / "plain")
    idx = build_index(tmp_path / "idx", DOCS, retrievers=["bm25"], lang="zh")
    mf = idx.path / "manifest.json"
    m = json.loads(mf.read_text(encoding="utf-8"))
    mf.write_text(json.dumps({**m, "format": "faiss-thing"}), encoding="utf-8")
    with pytest.raises(IndexError_, match="not a legalrag index manifest"):
        open_index(idx.path)
    mf.write_text(json.dumps({**m, "version": 0}), encoding="utf-8")
    with pytest.raises(IndexError_, match="older legalrag; rebuild"):
        open_index(idx.path)
    mf.write_text(json.dumps({**m, "version": 99}), encoding="utf-8")
    with pytest.raises(IndexError_, match="newer legalrag"):
        open_index(idx.path)
    mf.write_text("{not json", encoding="utf-8")
    with pytest.raises(IndexError_, match="not valid JSON"):
        open_index(idx.path)


def test_registry_hook_and_add_components(tmp_path, monkeypatch):
    """A new component kind plugs in through the registry; add_components extends an index atomically."""
    monkeypatch.setitem(COMPONENT_KINDS, "qld", COMPONENT_KINDS["qld"])
    from legalrag.retrieval import qld

    register_component_kind(ComponentKind("qld-alias", qld.build_component, qld.load_component))
    try:
        idx = build_index(tmp_path / "idx", DOCS, retrievers=["bm25"], lang="zh")
        idx2 = add_components(idx.path, [ComponentSpec("qld-alias", {"mu": 50.0}, name="qld-mu50")])
        assert idx2.names == ["bm25", "qld-mu50"]
        assert idx2.manifest["components"]["qld-mu50"]["kind"] == "qld-alias"
        assert idx2.retriever("qld-mu50").mu == 50.0
        assert idx2.retriever("bm25").retrieve("借款", k=1)[0].id == "3"
        with pytest.raises(InputError, match="given twice"):
            add_components(idx.path, [ComponentSpec("qld-alias", name="qld-mu50")])
        assert open_index(idx.path).names == ["bm25", "qld-mu50"]
    finally:
        COMPONENT_KINDS.pop("qld-alias", None)


def test_damaged_index_is_reported(tmp_path):
    idx = build_index(tmp_path / "idx", DOCS, retrievers=["bm25"], lang="zh")
    (idx.path / "documents.jsonl").write_text((idx.path / "documents.jsonl").read_text(encoding="utf-8")
                                              .splitlines()[0] + "\n", encoding="utf-8")
    with pytest.raises(IndexError_, match="has 1 documents, the manifest says 3"):
        open_index(idx.path).documents


def test_documents_load_lazily_and_behave_like_a_list(tmp_path):
    idx = build_index(tmp_path / "idx", DOCS, retrievers=["bm25"], lang="zh")
    docs = open_index(idx.path).documents
    assert len(docs) == 3 and docs._docs == [None, None, None]  # nothing parsed on open
    assert docs[1] == DOCS[1] and docs[-1] == DOCS[2] and docs[0:2] == DOCS[0:2]
    assert docs._docs[0] is not None and docs._docs[2] is not None
    assert list(docs) == DOCS and docs == DOCS and docs + [] == DOCS
    with pytest.raises(IndexError):
        docs[3]
    lines = (idx.path / "documents.jsonl").read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1][:20]
    (idx.path / "documents.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    damaged = open_index(idx.path).documents
    assert damaged[0] == DOCS[0]
    with pytest.raises(IndexError_, match=r"documents.jsonl:2: damaged index"):
        damaged[1]


def test_the_hybrid_fuses_with_the_rrf_constant_the_index_stored(tmp_path):
    """An index built with ``rrf_k=0`` must fuse with 0 when opened, not with the default 60: the fused scores
    are those of ``reciprocal_rank_fusion(..., k=0)`` over the members' own runs."""
    from legalrag.retrieval.fusion import reciprocal_rank_fusion

    build_index(tmp_path / "idx", DOCS, retrievers=["bm25", "qld", "hybrid"], lang="auto",
                params={"hybrid": {"members": ["bm25", "qld"], "rrf_k": 0}})
    idx = open_index(tmp_path / "idx")
    assert idx.component_params("hybrid")["rrf_k"] == 0
    hybrid = idx.retriever("hybrid")
    query = "出租人不履行维修义务，借款人不返还借款"
    runs = [idx.retriever(m).retrieve(query, k=100) for m in ("bm25", "qld")]
    stored = [(h.id, round(h.score, 9)) for h in reciprocal_rank_fusion(runs, k=0, names=["bm25", "qld"])]
    default = [(h.id, round(h.score, 9)) for h in reciprocal_rank_fusion(runs, k=60, names=["bm25", "qld"])]
    got = [(h.id, round(h.score, 9)) for h in hybrid.retrieve(query, k=3)]
    assert stored != default
    assert got == stored[:3], f"the hybrid fused with another RRF constant than the stored 0: {got} (k=60 gives {default[:3]})"
