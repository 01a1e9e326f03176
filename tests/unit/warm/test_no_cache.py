"""`ask --no-cache` is answered by the warm server, past its call cache: a running `legalrag serve` (a real
uvicorn server on 127.0.0.1, its model behind the call cache as `serve` builds it) answers a repeated question
from its cache, and the same question with --no-cache from the model, storing nothing; this process loads no
model either way."""

from __future__ import annotations

import httpx
import pytest
from support.http_app import serve_app
from support.server_setup import StreamingLLM
from typer.testing import CliRunner

from legalrag.cli import app
from legalrag.llm.cache import CachedLLM
from legalrag.retrieval.index import build_index, open_index
from legalrag.server import ServerSettings, create_app
from legalrag.testing import ScriptedLLM
from legalrag.types import Document
from legalrag.warm.client import stream
from legalrag.wiring import Root

pytest.importorskip("fastapi")

DOCS = [Document("1", "夫妻一方要求离婚的，可以直接向人民法院提起离婚诉讼。实施家庭暴力的，调解无效，应当准予离婚。",
                 "中华人民共和国民法典第一千零七十九条",
                 metadata={"law": "中华人民共和国民法典", "article": "1079", "article_label": "第一千零七十九条"})]
QUESTION = "遭受家庭暴力，能离婚吗？"


@pytest.fixture
def warm(tmp_path, monkeypatch):
    build_index(tmp_path / "idx", DOCS, retrievers=["bm25"], lang="zh")
    model = StreamingLLM(pieces=20, delay=0.001)
    cached = CachedLLM(model, tmp_path / "calls.sqlite")
    with serve_app(create_app(open_index(tmp_path / "idx"), cached, ServerSettings(rate_limit=0))) as url:
        monkeypatch.setenv("LEGALRAG_SERVE_PORT", url.rsplit(":", 1)[1])
        yield url, tmp_path / "idx", model, cached
    cached.close()


def ask(*args: str) -> tuple[str, ScriptedLLM]:
    here = ScriptedLLM(["本进程的回答。"])
    res = CliRunner().invoke(app, ["ask", QUESTION, *args], obj=Root(llm=here))
    assert res.exit_code == 0, res.output + repr(res.exception)
    return res.output, here


def test_no_cache_is_answered_by_the_server_without_its_cache(warm):
    url, index, model, cached = warm
    out, here = ask("--index", str(index))
    assert f"answered by the legalrag server at {url}" in out and len(model.requests) == 1
    out, here = ask("--index", str(index))  # the same prompt again: from the server's cache
    assert f"answered by the legalrag server at {url}" in out and len(model.requests) == 1 and cached.hits == 1
    stored = cached.store.stats()["models"]  # entries and hits per model
    out, here = ask("--index", str(index), "--no-cache")
    assert f"answered by the legalrag server at {url}" in out and not here.requests  # the server, not this process
    assert len(model.requests) == 2 and cached.hits == 1 and cached.misses == 1  # the model answered; no lookup
    assert cached.store.stats()["models"] == stored  # nothing stored, nothing read


def test_the_ask_route_skips_the_cache_when_the_request_says_so(warm):
    url, _, model, cached = warm
    body = {"question": QUESTION}
    first = stream(url, "/ask/stream", body, lambda name, data: None)
    again = stream(url, "/ask/stream", body, lambda name, data: None)
    assert len(model.requests) == 1 and cached.hits == 1 and again["answer"] == first["answer"]
    fresh = stream(url, "/ask/stream", {**body, "cache": False}, lambda name, data: None)
    assert len(model.requests) == 2 and cached.hits == 1 and fresh["answer"]
    r = httpx.post(url + "/ask", json={**body, "cache": "sometimes"})  # a wrong type: a 422 naming the field
    assert r.status_code == 422 and r.json()["error"]["fields"][0]["field"] == "cache"
