"""OpenAICompatLLM against real local servers: `legalrag llm serve`'s app over the embedded 0.5B, and tiny
HTTP servers that answer 503 / 429 / malformed JSON in the wire format."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.http_app import free_port, serve_app

from legalrag.errors import EndpointError, InputError
from legalrag.llm.base import ChatRequest, PromptTooLongError
from legalrag.llm.openai_compat import OpenAICompatLLM, normalise_base_url
from legalrag.llm.structured import structured_call

MSG = ({"role": "user", "content": "Reply with the single word: hello"},)


@pytest.fixture(scope="module")
def served(small_llm):
    """The OpenAI-compatible app of `legalrag llm serve` over the real 0.5B, on a free port, in a thread."""
    from legalrag.llm.serve import create_llm_app

    with serve_app(create_llm_app(small_llm, model_name="qwen-small", api_key="k3y")) as url:
        yield url


@pytest.fixture
def client(served, monkeypatch):
    monkeypatch.setenv("LEGALRAG_TEST_KEY", "k3y")
    return OpenAICompatLLM(served, "qwen-small", api_key_env="LEGALRAG_TEST_KEY", max_retries=0)


@pytest.mark.llm
def test_chat_logprobs_and_models(client):
    assert client.models() == ["qwen-small"]
    r = client.chat(ChatRequest(messages=MSG, max_tokens=3, logprobs=True, top_logprobs=2))
    assert r.text and r.prompt_tokens > 5 and 0 < r.completion_tokens <= 3
    assert r.logprobs and 1 <= len(r.first_token_top()) <= 2


@pytest.mark.llm
def test_json_schema_over_http(client, small_llm):
    from pydantic import BaseModel

    class Colour(BaseModel):
        colour: str

    reply = structured_call(client, [{"role": "user", "content": "Name a colour, as JSON."}], Colour,
                            max_tokens=16)
    assert reply.attempts == 1 and reply.value.colour
    # the embedded model behind the server answers the same (temperature 0)
    direct = structured_call(small_llm, [{"role": "user", "content": "Name a colour, as JSON."}], Colour,
                             max_tokens=16)
    assert direct.value == reply.value


@pytest.mark.llm
def test_server_errors_are_clear(served, client, monkeypatch):
    with pytest.raises(PromptTooLongError):
        client.chat(ChatRequest(messages=({"role": "user", "content": "法" * 9000},), max_tokens=4))
    monkeypatch.setenv("LEGALRAG_TEST_KEY", "wrong")
    with pytest.raises(EndpointError, match="refused the credentials"):
        client.chat(ChatRequest(messages=MSG, max_tokens=2))
    monkeypatch.setenv("LEGALRAG_TEST_KEY", "k3y")
    with pytest.raises(EndpointError, match="is not served here"):
        OpenAICompatLLM(served, "gpt-9", api_key_env="LEGALRAG_TEST_KEY").chat(ChatRequest(messages=MSG, max_tokens=2))
    import httpx

    bad = httpx.post(served + "/v1/chat/completions", json={"messages": []}, headers={"Authorization": "Bearer k3y"})
    assert bad.status_code == 400 and "messages" in bad.json()["error"]["message"]


COMPLETION = {"id": "x", "object": "chat.completion", "model": "m",
              "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
              "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}


def scripted_server(responses):
    """A local HTTP server replying with (status, body, headers) in turn, or with ``responses(request_body)`` when
    it is a function (called on the server's request threads); returns (base_url, seen, close)."""
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            seen.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            if callable(responses):
                status, body, headers = responses(seen[-1])
            else:
                status, body, headers = responses.pop(0) if len(responses) > 1 else responses[0]
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()

    def close():
        srv.shutdown()
        srv.server_close()  # shutdown() alone leaves the socket listening until it is collected

    return f"http://127.0.0.1:{srv.server_address[1]}/v1", seen, close


def test_retries_429_and_5xx_then_succeeds():
    url, seen, close = scripted_server([(503, {"error": {"message": "busy"}}, {}),
                                        (429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}),
                                        (200, COMPLETION, {})])
    try:
        llm = OpenAICompatLLM(url, "m", api_key_env=None, max_retries=3, backoff=0.01)
        r = llm.chat(ChatRequest(messages=MSG, max_tokens=2, seed=7, stop=("x",)))
        assert r.text == "ok" and r.prompt_tokens == 3 and len(seen) == 3
        assert seen[0]["model"] == "m" and seen[0]["seed"] == 7 and seen[0]["stop"] == ["x"]
    finally:
        close()


def test_gives_up_after_max_retries():
    url, seen, close = scripted_server([(500, {"error": {"message": "boom"}}, {})])
    try:
        with pytest.raises(EndpointError, match="failed after 3 attempts; last: HTTP 500: boom"):
            OpenAICompatLLM(url, "m", api_key_env=None, max_retries=2, backoff=0.01).chat(
                ChatRequest(messages=MSG, max_tokens=2))
        assert len(seen) == 3
    finally:
        close()


def test_malformed_replies():
    url, _, close = scripted_server([(200, b"<html>not json</html>", {})])
    try:
        with pytest.raises(EndpointError, match="not JSON"):
            OpenAICompatLLM(url, "m", api_key_env=None).chat(ChatRequest(messages=MSG, max_tokens=2))
    finally:
        close()
    url, _, close = scripted_server([(200, {"unexpected": True}, {})])
    try:
        with pytest.raises(EndpointError, match="no choices"):
            OpenAICompatLLM(url, "m", api_key_env=None).chat(ChatRequest(messages=MSG, max_tokens=2))
    finally:
        close()


def test_connection_refused_and_bad_urls():
    with pytest.raises(EndpointError, match="cannot connect.*legalrag llm serve"):
        OpenAICompatLLM(f"http://127.0.0.1:{free_port()}", "m", max_retries=0).chat(
            ChatRequest(messages=MSG, max_tokens=2))
    assert normalise_base_url("http://h:1") == "http://h:1/v1"
    assert normalise_base_url("https://x.ai/compatible-mode/v1/") == "https://x.ai/compatible-mode/v1"
    with pytest.raises(InputError):
        normalise_base_url("localhost:8000")
