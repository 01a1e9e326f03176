"""API keys never appear in error messages, QA results, traces, logs or the LLM call cache, even when a server
echoes the request's headers back in its error body (real 127.0.0.1 servers speaking each wire format)."""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from legalrag.agents.qa import run_qa
from legalrag.agents.qa.pipeline import save_trace
from legalrag.errors import EndpointError
from legalrag.llm.base import ChatRequest
from legalrag.llm.cache import CachedLLM
from legalrag.llm.openai_compat import OpenAICompatLLM
from legalrag.search.courtlistener import CourtListenerSearch
from legalrag.search.web import SerperSearch, TavilySearch
from legalrag.testing import ScriptedLLM

SECRET = "sk-live-7f3a9c2e41b8d6a0"


class EchoServer:
    """Answers every request with ``status`` and a body that repeats the request's headers, as some proxies and
    misconfigured gateways do; ``ok_body`` is sent with status 200 instead."""

    def __init__(self, status: int = 401, ok_body: bytes | None = None):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                if outer.ok_body is not None:
                    body, code = outer.ok_body, 200
                else:
                    # credentials first, so the few hundred characters an error message keeps include them
                    items = sorted(self.headers.items(), key=lambda kv: kv[0].lower() not in
                                   ("authorization", "x-api-key"))
                    echoed = "; ".join(f"{k}: {v}" for k, v in items)
                    body = json.dumps({"error": f"bad credentials {echoed}"}).encode()
                    code = outer.status
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _reply

            def log_message(self, *args):
                pass

        self.status, self.ok_body = status, ok_body
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()  # shutdown() leaves the socket listening until it is collected


@pytest.fixture
def echo(request):
    server = EchoServer(getattr(request, "param", 401))
    yield server
    server.close()


@pytest.mark.parametrize("echo", [401, 500], indirect=True)
def test_search_clients_never_put_the_key_in_errors(echo):
    clients = [SerperSearch(SECRET, base_url=echo.url), TavilySearch(SECRET, base_url=echo.url),
               CourtListenerSearch(token=SECRET, base_url=echo.url)]
    for client in clients:
        with pytest.raises(EndpointError) as err:
            client.search("limitation period")
        assert SECRET not in str(err.value) and SECRET not in repr(client)


@pytest.mark.parametrize("echo", [401, 400, 503], indirect=True)
def test_llm_endpoint_errors_never_show_the_key(echo, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    llm = OpenAICompatLLM(echo.url + "/v1", "m", max_retries=1, backoff=0.01)
    with pytest.raises(EndpointError) as err:
        llm.chat(ChatRequest(messages=({"role": "user", "content": "hi"},), max_tokens=5))
    assert "bad credentials" in str(err.value) or "failed after" in str(err.value)
    assert SECRET not in str(err.value) and SECRET not in repr(llm)


@pytest.mark.parametrize("echo", [500], indirect=True)
def test_qa_result_trace_logs_and_cache_hold_no_key(echo, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("SERPER_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    plan = '{"intents": [{"query": "limitation period contract", "source": "web", "priority": 1}]}'
    result = run_qa("How long is the limitation period for contract claims?", ScriptedLLM([plan]),
                             {"web": SerperSearch(SECRET, base_url=echo.url)})
    assert any(s.error and "Serper" in s.error for s in result.steps)  # the failure is recorded...
    save_trace(tmp_path / "trace.jsonl", result)
    texts = {"result": json.dumps(result.to_dict(), ensure_ascii=False),
             "trace": (tmp_path / "trace.jsonl").read_text(encoding="utf-8"),
             "logs": "\n".join(r.getMessage() for r in caplog.records)}
    # ...and a real endpoint call through the call cache, answered normally
    ok = EchoServer(ok_body=json.dumps({"choices": [{"message": {"content": "six years"}, "finish_reason": "stop"}],
                                        "usage": {"prompt_tokens": 3, "completion_tokens": 2}}).encode())
    try:
        cached = CachedLLM(OpenAICompatLLM(ok.url + "/v1", "m"), tmp_path / "calls.sqlite")
        assert cached.chat(ChatRequest(messages=({"role": "user", "content": "q"},), max_tokens=5)).text == "six years"
        cached.close()
    finally:
        ok.close()
    cache_bytes = b"".join(p.read_bytes() for p in tmp_path.glob("calls.sqlite*"))
    for where, text in texts.items():
        assert SECRET not in text, where
    assert SECRET.encode() not in cache_bytes
