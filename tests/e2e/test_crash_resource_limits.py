"""Resource limits: a model call that hangs (a 127.0.0.1 server that never answers, or trickles bytes) times out
once, the QA run goes on and records it; a 10 MB question is refused at once; a 100k-hit request returns what
exists without blowing up."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from legalrag.agents.qa import run_qa
from legalrag.errors import EndpointError, InputError
from legalrag.llm.base import ChatRequest
from legalrag.llm.openai_compat import OpenAICompatLLM
from legalrag.search.local import LocalDocumentsSource


class SilentServer:
    """Accepts connections on 127.0.0.1 and then says nothing (``trickle``: sends headers, then a byte a while)."""

    def __init__(self, trickle: bool = False):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.trickle, self.stop, self.conns = trickle, threading.Event(), []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(conn)
            if self.trickle:
                threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn) -> None:
        try:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            while not self.stop.is_set():
                conn.sendall(b"1\r\n \r\n")
                time.sleep(0.2)
        except OSError:
            pass

    def close(self) -> None:
        self.stop.set()
        for c in self.conns:
            c.close()
        self.sock.close()


@pytest.fixture(params=[False, True], ids=["silent", "trickle"])
def hung(request):
    server = SilentServer(trickle=request.param)
    yield server
    server.close()


def test_a_hung_model_call_times_out_once(hung):
    llm = OpenAICompatLLM(hung.url, "m", timeout=1.0, max_retries=3, api_key_env=None)
    t0 = time.perf_counter()
    with pytest.raises(EndpointError, match="no complete answer within 1 s"):
        llm.chat(ChatRequest(messages=({"role": "user", "content": "hi"},), max_tokens=5))
    assert time.perf_counter() - t0 < 3.0  # not retried 4 times


def test_qa_run_continues_and_records_a_hung_model(hung, tmp_path):
    (tmp_path / "a.md").write_text("# 民法典\n\n诉讼时效期间为三年。\n", encoding="utf-8")
    llm = OpenAICompatLLM(hung.url, "m", timeout=0.5, api_key_env=None)
    t0 = time.perf_counter()
    result = run_qa("诉讼时效期间为几年？", llm, {"local": LocalDocumentsSource(tmp_path)})
    assert time.perf_counter() - t0 < 15.0  # two 0.5 s timeouts and the Chinese tokenizer's first load
    assert result.evidence  # the question itself was still searched
    errors = [(s.agent, s.error) for s in result.steps if s.error]
    assert [a for a, _ in errors] == ["query", "summary"] and all("no complete answer" in e for _, e in errors)
    assert "模型调用失败" in result.answer and result.citations == ()


def test_ten_megabyte_question_is_refused_at_once(tmp_path):
    from legalrag.testing import ScriptedLLM

    (tmp_path / "a.md").write_text("# x\n\ny\n", encoding="utf-8")
    t0 = time.perf_counter()
    with pytest.raises(InputError, match="the limit is 20,000") as err:
        run_qa("问" * (10 * 2**20 // 3), ScriptedLLM(["{}"]), {"local": LocalDocumentsSource(tmp_path)})
    assert err.value.field == "question" and time.perf_counter() - t0 < 1.0


def test_hundred_thousand_hits_return_what_exists(tmp_path):
    from legalrag.retrieval.dense import DenseRetriever
    from legalrag.retrieval.index import build_index
    from legalrag.search.local import StatuteIndexSource
    from legalrag.testing import FakeEncoder
    from legalrag.types import Document

    docs = [Document(id=f"d{i}", text=f"关于{i % 50}号事项的规定 clause {i}") for i in range(3000)]
    source = StatuteIndexSource(build_index(tmp_path / "idx", docs, ["bm25", "qld"], lang="zh"))
    assert len(source.search("关于7号事项", k=100_000)) == 3000
    dense = DenseRetriever.build(docs, FakeEncoder())
    hits = dense.retrieve("关于7号事项", k=100_000)
    assert len(hits) == 3000 and len({h.id for h in hits}) == 3000
