"""The streamed index build (retrieval/build.py) gives exactly what the in-memory build gives."""

import mmap

import numpy as np
import pytest

from legalrag.errors import InputError
from legalrag.retrieval.bm25 import METHODS, BM25Retriever
from legalrag.retrieval.build import SPILL_DIR, BuildContext, SpilledPostings, write_documents
from legalrag.retrieval.index import build_index, open_index
from legalrag.retrieval.lexical import TokenizedCorpus
from legalrag.retrieval.qld import QLDRetriever
from legalrag.retrieval.tokenize import tokenizer_for
from legalrag.types import Document

EN = [
    Document(id="a1", text="The tenant shall pay the rent on time.", title="Lease Act s 1",
             metadata={"law": "Lease Act"}),
    Document(id="a2", text="", title=""),  # empty text and title: no tokens at all
    Document(id="a3", text="The landlord shall repair the premises; the tenant shall notify the landlord.",
             title="Lease Act s 2", metadata={"law": "Lease Act"}),
    Document(id="a4", text="A borrower shall repay the loan with interest.", title="Loans Act s 1"),
    Document(id="a5", text="the of and", title=""),  # stop words only
    Document(id="a6", text="Interest on a loan accrues daily; late rent accrues interest too.", title="Loans Act s 2"),
    Document(id="a7", text="zebra crossings: pedestrians first", title="Roads Act s 9"),  # terms only in this chunk
    Document(id="a8", text="", title="Roads Act s 10"),  # empty text, a title
    Document(id="a9", text="Rent rent rent: repeated terms count.", title=""),
    Document(id="a10", text="The tenant and the borrower both owe money.", title="Misc s 1"),
]

ZH = [
    Document(id="z1", text="用人单位应当与劳动者订立书面劳动合同。", title="劳动合同法第十条", metadata={"law": "劳动合同法"}),
    Document(id="z2", text="", title=""),
    Document(id="z3", text="出租人应当履行租赁物的维修义务。", title="民法典第七百一十二条", metadata={"law": "民法典"}),
    Document(id="z4", text="借款人应当按照约定的期限返还借款。", title="民法典第六百七十五条", metadata={"law": "民法典"}),
    Document(id="z5", text="斑马线上行人优先通行。", title="道路交通安全法第四十七条"),
]

QUERIES_EN = ["tenant rent", "loan interest", "zebra", "landlord repair premises", "nothing matches this", "rent"]
QUERIES_ZH = ["房东不履行维修义务", "借款期限", "斑马线 行人", "劳动合同"]


def _buffer(array):
    while isinstance(array, np.ndarray) and array.base is not None:
        array = array.base
    return array


def _in_memory(docs, lang, method, title_mode):
    tok = tokenizer_for(lang, stopwords=True, jieba_mode="search")
    tokens = TokenizedCorpus.build(docs, tok, title_mode)
    return (BM25Retriever.from_documents(docs, tok, method=method, title_mode=title_mode, tokens=tokens),
            QLDRetriever.from_documents(docs, tok, title_mode=title_mode, tokens=tokens))


def _assert_same_files(a, b, names):
    for name in names:
        x, y = np.load(a / name), np.load(b / name)
        assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), name


@pytest.mark.parametrize("docs,lang,queries", [(EN, "en", QUERIES_EN), (ZH, "zh", QUERIES_ZH)], ids=["en", "zh"])
@pytest.mark.parametrize("chunk_docs", [1, 3, 1000])
def test_streamed_build_equals_in_memory_build(tmp_path, docs, lang, queries, chunk_docs):
    mem_bm25, mem_qld = _in_memory(docs, lang, "lucene", "law")
    mem_bm25.save(tmp_path / "mem-bm25")
    mem_qld.save(tmp_path / "mem-qld")
    idx = build_index(tmp_path / "idx", iter(docs), ["bm25", "qld"], lang=lang, chunk_docs=chunk_docs)
    assert not (idx.path / SPILL_DIR).exists()
    _assert_same_files(tmp_path / "mem-bm25", idx.component_dir("bm25"),
                       ["data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy"])
    _assert_same_files(tmp_path / "mem-qld", idx.component_dir("qld"),
                       ["counts.data.npy", "counts.indices.npy", "counts.indptr.npy"])
    for mapped in (True, False):
        bm25, qld = idx.retriever("bm25", mmap=mapped), idx.retriever("qld", mmap=mapped)
        assert bm25.model.vocab_dict == mem_bm25.model.vocab_dict and qld.vocab == mem_qld.vocab
        for q in queries:
            assert np.array_equal(bm25.scores(q), mem_bm25.scores(q)), q
            assert np.array_equal(qld.log_likelihood(q), mem_qld.log_likelihood(q)), q
            for got, want in ((bm25.retrieve(q, k=20), mem_bm25.retrieve(q, k=20)),
                              (qld.retrieve(q, k=20), mem_qld.retrieve(q, k=20))):
                assert [(h.id, h.score, h.rank) for h in got] == [(h.id, h.score, h.rank) for h in want], q
    assert idx.retriever("bm25").retrieve("zebra" if lang == "en" else "斑马线", k=3)[0].id in ("a7", "z5")
    # opened for search, the BM25 matrix, the QLD counts and the documents are mapped, not read
    qld = idx.retriever("qld")
    for array in (idx.retriever("bm25").model.scores["data"], qld.counts.data, qld._weights_t.indices):
        assert isinstance(_buffer(array), mmap.mmap)
    assert isinstance(idx.documents._buf, mmap.mmap)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("title_mode", ["none", "full"])
def test_every_bm25_method_and_title_mode_is_bit_identical(tmp_path, method, title_mode):
    mem_bm25, mem_qld = _in_memory(EN, "en", method, title_mode)
    mem_bm25.save(tmp_path / "mem")
    idx = build_index(tmp_path / "idx", EN, ["bm25", "qld"], lang="en", chunk_docs=3,
                      params={"bm25": {"method": method, "title_mode": title_mode}, "qld": {"title_mode": title_mode}})
    _assert_same_files(tmp_path / "mem", idx.component_dir("bm25"),
                       ["data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy"])
    for q in QUERIES_EN:
        assert np.array_equal(idx.retriever("qld").log_likelihood(q), mem_qld.log_likelihood(q))


def test_merge_in_small_blocks_gives_the_same_postings(tmp_path):
    """Merging a few postings at a time (terms spanning chunks, blocks of one term) changes nothing."""
    write_documents(tmp_path / "docs.jsonl", EN)
    tok = tokenizer_for("en", stopwords=True, jieba_mode="search")
    whole = SpilledPostings.build(tmp_path / "docs.jsonl", len(EN), tok, "law", tmp_path / "whole", chunk_docs=100)
    small = SpilledPostings.build(tmp_path / "docs.jsonl", len(EN), tok, "law", tmp_path / "small", chunk_docs=2,
                                  merge_postings=2)
    assert len(whole.chunks) == 1 and len(small.chunks) == 5
    a = [np.concatenate(x) for x in zip(*whole.blocks())]
    b_blocks = list(small.blocks())
    assert len(b_blocks) > 10
    b = [np.concatenate(x) for x in zip(*b_blocks)]
    for x, y in zip(a, b):
        assert np.array_equal(x, y)
    assert small.vocab == whole.vocab == TokenizedCorpus.build(EN, tok, "law").vocab
    assert np.array_equal(small.doc_len, whole.doc_len) and small.doc_len[1] == 0
    # the same spill written with 2-posting merge blocks gives the same BM25 files as the in-memory build
    ctx = BuildContext(tmp_path, tmp_path / "docs.jsonl", len(EN), "en", False, None, chunk_docs=3, merge_postings=2)
    from legalrag.retrieval import bm25

    (tmp_path / "bm25").mkdir()
    bm25.build_component(ctx, tmp_path / "bm25")
    mem_bm25, _ = _in_memory(EN, "en", "lucene", "law")
    mem_bm25.save(tmp_path / "mem")
    _assert_same_files(tmp_path / "mem", tmp_path / "bm25", ["data.csc.index.npy", "indices.csc.index.npy"])
    ctx.cleanup()
    assert not (tmp_path / SPILL_DIR).exists()


def test_streamed_build_reads_a_generator_once_and_refuses_bad_input(tmp_path):
    seen = []

    def gen():
        for d in EN:
            seen.append(d.id)
            yield d

    idx = build_index(tmp_path / "idx", gen(), ["bm25"], lang="en", chunk_docs=4)
    assert seen == [d.id for d in EN] and idx.manifest["corpus"]["n_documents"] == len(EN)
    assert list(open_index(tmp_path / "idx").documents) == EN
    with pytest.raises(InputError, match="no documents"):
        build_index(tmp_path / "empty", iter([]), ["bm25"], lang="en")
    with pytest.raises(InputError, match="no indexable words"):
        build_index(tmp_path / "stop", [EN[1], EN[4]], ["qld"], lang="en")
    with pytest.raises(InputError, match="chunk_docs"):
        build_index(tmp_path / "bad", EN, ["bm25"], lang="en", chunk_docs=0)
    assert not (tmp_path / "empty").exists() and not (tmp_path / "stop").exists()


def test_corpus_file_is_streamed_and_still_names_a_repeated_id(tmp_path):
    from legalrag.corpora.statutes import FieldMap
    from legalrag.retrieval.index import CorpusFile, read_corpus

    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "1", "text": "tenant rent"}\n{"id": "2", "text": "loan interest"}\n', encoding="utf-8")
    fields = FieldMap.parse("id=id,text=text")
    docs, info = read_corpus(corpus, fields)
    assert isinstance(docs, CorpusFile) and info == {}
    assert [d.id for d in docs] == ["1", "2"] == [d.id for d in docs]  # read afresh each time
    assert build_index(tmp_path / "idx", docs, ["bm25"], lang="en").manifest["corpus"]["n_documents"] == 2
    corpus.write_text(corpus.read_text(encoding="utf-8") + '{"id": "1", "text": "again"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"c\.jsonl:3 \(field 'id'\): id '1' appears twice"):
        build_index(tmp_path / "idx", read_corpus(corpus, fields)[0], ["bm25"], lang="en")
    assert open_index(tmp_path / "idx").manifest["corpus"]["n_documents"] == 2  # the old index is untouched


def test_index_build_command_takes_the_chunk_size(tmp_path):
    import json

    from typer.testing import CliRunner

    from legalrag.cli import app
    from legalrag.retrieval.build import DEFAULT_CHUNK_DOCS

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": d.id, "text": d.text, "name": d.title}) + "\n" for d in EN),
                      encoding="utf-8")
    outs = {}
    for chunk in ("2", str(DEFAULT_CHUNK_DOCS)):
        res = CliRunner().invoke(app, ["index", "build", "--corpus", str(corpus), "--out", str(tmp_path / chunk),
                                       "--lang", "en", "-o", "fields=id=id,text=text,name=name", "-o", f"chunk_docs={chunk}",
                                       "--no-progress"])
        assert res.exit_code == 0, res.output
        outs[chunk] = [(h.id, h.score) for q in QUERIES_EN for h in open_index(tmp_path / chunk).retriever("bm25").retrieve(q, k=5)]
    assert outs["2"] == outs[str(DEFAULT_CHUNK_DOCS)] and outs["2"]
    bad = CliRunner().invoke(app, ["index", "build", "--corpus", str(corpus), "--out", str(tmp_path / "x"),
                                   "-o", "chunk_docs=0"])
    assert bad.exit_code == 2 and "chunk_docs" in bad.output  # a usage error, nothing written
    assert not (tmp_path / "x").exists()
