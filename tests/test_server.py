"""The HTTP service over a real BM25 index of the bundled statute sample; /ask uses the real embedded 0.5B."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from legalrag.server import Settings, create_app  # noqa: E402


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from legalrag.demo import demo_index

    return demo_index(tmp_path_factory.mktemp("srv") / "idx")


def test_search_returns_ranked_articles_with_citations(index):
    client = TestClient(create_app(index))
    r = client.post("/search", json={"query": "用人单位拖欠工资怎么办", "k": 5})
    assert r.status_code == 200
    hits = r.json()["hits"]
    assert [h["rank"] for h in hits] == [1, 2, 3, 4, 5]
    assert all(h["id"] in index for h in hits)
    assert any("劳动" in h["citation"] for h in hits)
    assert client.get("/health").json()["status"] == "ok"
    assert index.default in client.get("/index").json()["components"]


def test_law_filter_and_bad_requests(index):
    client = TestClient(create_app(index, settings=Settings(max_k=20)))
    law = index.documents[0].metadata["law"]
    r = client.post("/search", json={"query": "合同", "k": 5, "laws": [law]})
    assert r.status_code == 200 and all(h["citation"].startswith(law) or law in h["title"] for h in r.json()["hits"])
    r = client.post("/search", json={"query": "合同", "k": 500})
    assert r.status_code == 400 and "limit of 20" in r.json()["error"]["message"]
    assert client.post("/search", json={"query": ""}).status_code == 422
    assert client.post("/search", json={"query": "x", "bogus": 1}).status_code == 422
    r = client.post("/search", json={"query": "合同", "retriever": "dense"})
    assert r.status_code == 400 and "no 'dense' retriever" in r.json()["error"]["message"]


def test_citation_check_flags_unresolved(index):
    doc = next(d for d in index.documents if d.metadata.get("article"))
    text = f"依照《{doc.metadata['law']}》{doc.metadata['article_label']}、第九千九百九十九条之规定"
    r = TestClient(create_app(index)).post("/citations/check", json={"text": text})
    cits = r.json()["citations"]
    assert [c["resolved"] for c in cits] == [True, False]
    assert cits[0]["document_id"] == doc.id and r.json()["unresolved"] == 1


def test_ask_without_model_is_a_clear_503(index):
    r = TestClient(create_app(index)).post("/ask", json={"question": "试用期多长？"})
    assert r.status_code == 503 and "legalrag serve" in r.json()["error"]["message"]


def test_page_is_served(index):
    r = TestClient(create_app(index)).get("/")
    assert r.status_code == 200 and "/ask" in r.text


@pytest.mark.llm
def test_ask_answers_with_checked_citations(index, small_llm):
    r = TestClient(create_app(index, small_llm)).post(
        "/ask", json={"question": "劳动合同的试用期最长可以约定多久？", "k": 3, "max_tokens": 96})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["answer"].strip()
    assert len(body["retrieved"]) == 3
    for c in body["citations"]:  # every citation is reported with its check, resolved or not
        assert isinstance(c["resolved"], bool)
        if c["resolved"]:
            assert c["document_id"] in index
