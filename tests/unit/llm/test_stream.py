"""Token streaming: the SSE reader, the embedded model's stream, `legalrag llm serve` with stream=true read by
the OpenAI-compatible client, and a scripted 127.0.0.1 server speaking the streamed wire format."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from support.http_app import serve_app

from legalrag.errors import EndpointError, ModelError
from legalrag.llm.base import ChatRequest
from legalrag.llm.openai_compat import OpenAICompatLLM
from legalrag.llm.stream import ChatStream, parse_sse_line, stream_chat

MSG = ({"role": "user", "content": "用一句话说明什么是违约金。"},)


def chunk(text=None, finish=None, usage=None):
    event = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": {} if text is None else {"content": text}, "finish_reason": finish}]}
    if usage:
        event["usage"] = usage
    return "data: " + json.dumps(event, ensure_ascii=False)


def test_sse_reader_pieces_usage_and_errors():
    lines = [": keep-alive", "", chunk("违约"), chunk("金"), chunk(finish="stop"),
             chunk(usage={"prompt_tokens": 7, "completion_tokens": 2}), "data: [DONE]"]
    s = ChatStream(iter(lines), "m")
    with pytest.raises(RuntimeError, match="read the stream"):
        _ = s.result
    assert list(s) == ["违约", "金"]
    r = s.result
    assert (r.text, r.prompt_tokens, r.completion_tokens, r.finish_reason) == ("违约金", 7, 2, "stop")
    assert parse_sse_line("data: [DONE]", "m") is None and parse_sse_line("event: ping", "m") is None
    with pytest.raises(ModelError, match="not JSON"):
        parse_sse_line("data: {oops", "m")
    with pytest.raises(EndpointError, match="failed while streaming: overloaded"):
        list(ChatStream(iter([chunk("a"), 'data: {"error": {"message": "overloaded"}}']), "m", EndpointError))


@pytest.mark.llm
def test_embedded_stream_matches_chat(small_llm):
    req = ChatRequest(messages=MSG, max_tokens=24, temperature=0.0, seed=1)
    whole = small_llm.chat(req)
    s = small_llm.stream(req)
    pieces = list(s)
    assert len(pieces) > 1 and "".join(pieces) == whole.text
    assert s.result.text == whole.text and s.result.completion_tokens == whole.completion_tokens
    assert s.result.prompt_tokens == whole.prompt_tokens
    # the model is free again once the stream is done
    assert small_llm.chat(ChatRequest(messages=MSG, max_tokens=2)).text


@pytest.mark.llm
def test_cached_stream_stores_then_replays(small_llm, tmp_path):
    from legalrag.llm.cache import CachedLLM

    cached = CachedLLM(small_llm, path=tmp_path / "calls.sqlite")
    req = ChatRequest(messages=MSG, max_tokens=12, temperature=0.0, seed=2)
    first = cached.stream(req)
    pieces = list(first)
    assert len(pieces) > 1 and cached.stats()["misses"] == 1
    again = cached.stream(req)
    assert list(again) == ["".join(pieces)] and again.result.cached and cached.stats()["hits"] == 1
    assert cached.chat(req).text == first.result.text  # the streamed call is the cached chat answer


@pytest.mark.llm
def test_serve_streams_and_client_reads_it(small_llm):
    from legalrag.llm.serve import create_llm_app

    req = ChatRequest(messages=MSG, max_tokens=16, temperature=0.0, seed=1)
    with serve_app(create_llm_app(small_llm, model_name="qwen-small")) as url:
        client = OpenAICompatLLM(url, "qwen-small", api_key_env=None, max_retries=0)
        seen = []
        result = stream_chat(client, req, seen.append)
        assert len(seen) > 1 and "".join(seen) == result.text == small_llm.chat(req).text
        assert result.completion_tokens > 0 and result.prompt_tokens > 0
        # logprobs are not streamed: stream_chat falls back to one call, the server refuses the combination
        lp = ChatRequest(messages=MSG, max_tokens=1, logprobs=True, top_logprobs=3)
        got = []
        assert stream_chat(client, lp, got.append).first_token_top and len(got) == 1
        bad = httpx.post(url + "/v1/chat/completions", json={"messages": list(MSG), "stream": True, "logprobs": True})
        assert bad.status_code == 400 and "stream=false" in bad.json()["error"]["message"]


def scripted_sse(status, lines):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
            self.send_response(status)
            self.send_header("Content-Type", "text/event-stream" if status == 200 else "application/json")
            self.end_headers()
            for line in lines:
                self.wfile.write((line + "\n\n").encode())
                self.wfile.flush()

        def log_message(self, *args):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{srv.server_address[1]}/v1", srv


def test_client_stream_wire_format_and_failures():
    url, srv = scripted_sse(200, [chunk("依据"), chunk("第五百八十五条"), chunk(finish="stop"), "data: [DONE]"])
    try:
        s = OpenAICompatLLM(url, "m", api_key_env=None).stream(ChatRequest(messages=MSG))
        assert list(s) == ["依据", "第五百八十五条"] and s.result.finish_reason == "stop"
    finally:
        srv.shutdown()
        srv.server_close()
    url, srv = scripted_sse(200, [chunk("半"), 'data: {"error": {"message": "slot crashed"}}'])
    try:
        with pytest.raises(EndpointError, match="slot crashed"):
            list(OpenAICompatLLM(url, "m", api_key_env=None).stream(ChatRequest(messages=MSG)))
    finally:
        srv.shutdown()
        srv.server_close()
    url, srv = scripted_sse(503, ['{"error": {"message": "busy"}}'])
    try:
        with pytest.raises(EndpointError, match=r"rejected the streamed request \(503\): busy"):
            list(OpenAICompatLLM(url, "m", api_key_env=None).stream(ChatRequest(messages=MSG)))
    finally:
        srv.shutdown()
        srv.server_close()
