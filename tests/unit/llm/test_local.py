"""Warm by default: `ask` uses a running local model server, loads the model in-process when none is up, and
neither hangs nor hides a server that fails before or during an answer."""

from __future__ import annotations

import socket
import threading

import pytest
from support.http_app import free_port, serve_app

from typer.testing import CliRunner

from legalrag.cli import app
from legalrag.errors import ModelError
from legalrag.llm.base import ChatRequest
from legalrag.llm.local import ServerFirstLLM, probe_model_server
from legalrag.llm.stream import stream_chat
from legalrag.testing import ScriptedLLM
from legalrag.wiring import local_server_client

REQ = ChatRequest(messages=({"role": "user", "content": "借钱不还可以起诉吗？"},), max_tokens=16)


def test_no_server_up_means_the_model_loads_in_this_process():
    local = ScriptedLLM(["可以起诉。"])
    llm = ServerFirstLLM(f"http://127.0.0.1:{free_port()}/v1", lambda: local, local_server_client)
    assert llm.route == "in-process"
    pieces: list[str] = []
    assert stream_chat(llm, REQ, pieces.append).text == "可以起诉。" and pieces == ["可以起诉。"]
    assert local.requests and llm.model_id == local.model_id


@pytest.mark.llm
def test_a_running_server_answers_and_the_local_model_is_never_loaded(small_llm):
    from legalrag.llm.serve import create_llm_app

    loaded: list[int] = []
    with serve_app(create_llm_app(small_llm)) as url:
        assert probe_model_server(url + "/v1") is not None
        llm = ServerFirstLLM(url + "/v1", lambda: loaded.append(1) or small_llm, local_server_client)
        assert llm.route == f"server {url}/v1"
        pieces: list[str] = []
        result = stream_chat(llm, REQ, pieces.append)
        assert result.text and "".join(pieces) == result.text and result.completion_tokens > 0
    assert not loaded  # the model stayed in the server


def test_a_server_that_is_not_legalrags_is_not_used():
    from fastapi import FastAPI

    other = FastAPI()

    @other.get("/health")
    def health() -> dict:
        return {"status": "ok"}

    @other.get("/v1/models")
    def models() -> dict:
        return {"object": "list", "data": [{"id": "gpt-x", "owned_by": "someone-else"}]}

    with serve_app(other) as url:
        assert probe_model_server(url + "/v1") is None
        assert ServerFirstLLM(url + "/v1", lambda: ScriptedLLM(["x"]), local_server_client).route == "in-process"


class _BadServer:
    """A loopback server speaking just enough HTTP to be probed as a legalrag model server, then failing the
    chat call: ``mode`` "drop" closes the connection before any byte, "garbage" sends one SSE piece and then
    a line that is not JSON."""

    def __init__(self, mode: str):
        self.mode = mode
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                head = conn.recv(65536).decode("latin-1")
                if head.startswith("GET /v1/models"):
                    body = b'{"object":"list","data":[{"id":"bad","owned_by":"legalrag"}]}'
                    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                                 + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
                elif self.mode == "garbage":
                    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
                                 b'data: {"choices":[{"index":0,"delta":{"content":"\xe5\x8f\xaf"}}]}\n\n'
                                 b"data: <html>proxy error</html>\n\n")

    def close(self) -> None:
        self.sock.close()


def test_a_server_that_fails_before_the_first_token_falls_back_to_this_process():
    server = _BadServer("drop")
    try:
        local = ScriptedLLM(["可以起诉。"])
        llm = ServerFirstLLM(server.url, lambda: local, local_server_client, read_timeout=5)
        assert llm.route.startswith("server")
        pieces: list[str] = []
        assert stream_chat(llm, REQ, pieces.append).text == "可以起诉。"
        assert llm.route == "in-process" and "failed" in llm.fallback_note and server.url in llm.fallback_note
    finally:
        server.close()


def test_a_server_that_sends_garbage_mid_answer_is_reported_not_hidden():
    server = _BadServer("garbage")
    try:
        llm = ServerFirstLLM(server.url, lambda: ScriptedLLM(["x"]), local_server_client, read_timeout=5)
        pieces: list[str] = []
        with pytest.raises(ModelError, match="stopped in the middle of the answer.*legalrag llm start"):
            stream_chat(llm, REQ, pieces.append)
        assert pieces == ["可"]  # what arrived before the failure was shown, and nothing was made up after it
    finally:
        server.close()


def test_llm_start_status_stop_manage_a_background_server(tmp_path):
    """The lifecycle with a real process: `legalrag llm start` refuses to wait forever on a server that cannot
    start (a model file that does not exist), and says why from its log."""
    from legalrag.warm.daemon import LLM_SERVER, StartError, status

    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    res = CliRunner().invoke(app, ["llm", "start", "--model", str(tmp_path / "missing.gguf"), "-o", "timeout=60"],
                             env={"LEGALRAG_HOME": str(tmp_path), "LEGALRAG_LLM_SERVER": f"127.0.0.1:{port}"})
    assert isinstance(res.exception, StartError) and "the model server exited with code" in str(res.exception)
    s = status(LLM_SERVER, url, tmp_path)
    assert not s["up"] and s["pid"] is None and s["log"].endswith("llm-server.log")
