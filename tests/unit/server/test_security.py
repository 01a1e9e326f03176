"""The HTTP app's guard: API keys, rate limits, body and content-type limits, CORS, security headers, the access
log, and the warning when serving beyond loopback without a key."""

from __future__ import annotations

import json
import logging

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from legalrag.errors import InputError  # noqa: E402
from legalrag.server import ServerSettings, create_app  # noqa: E402
from legalrag.server.security import RateLimiter, load_api_keys  # noqa: E402
from support.server_setup import sample_index  # noqa: E402

KEY = "k3y-for-tests-0123456789"
OTHER = "another-key-abcdefghijk"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return sample_index(tmp_path_factory.mktemp("sec") / "idx")


def search(client, key=None, header="authorization", **body):
    headers = {}
    if key is not None:
        headers[header] = f"Bearer {key}" if header == "authorization" else key
    return client.post("/search", json={"query": "工资", "k": 2, **body}, headers=headers)


def test_api_keys_are_required_on_api_routes_only(index, caplog):
    client = TestClient(create_app(index, settings=ServerSettings(api_keys=(KEY, OTHER))))
    caplog.set_level(logging.INFO, logger="legalrag.access")
    r = search(client)
    assert r.status_code == 401 and "no API key" in r.json()["error"]["message"]
    assert r.headers["www-authenticate"] == "Bearer"
    r = search(client, key="wrong-key-000000000000")
    assert r.status_code == 401 and "a wrong API key" in r.json()["error"]["message"]
    assert search(client, key=KEY).status_code == 200
    assert search(client, key=OTHER, header="x-api-key").status_code == 200
    assert client.get("/capabilities").status_code == 401
    for open_path in ("/", "/search.html", "/static/app.css", "/health", "/openapi.json", "/docs"):
        assert client.get(open_path).status_code == 200, open_path
    schema = client.get("/openapi.json").json()
    assert "bearer" in schema["components"]["securitySchemes"]
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "legalrag.access"]
    assert {"key-1", "key-2"} <= {line["who"] for line in lines}
    assert all(line.keys() == {"method", "path", "status", "ms", "who", "bytes"} for line in lines)
    assert KEY not in caplog.text and OTHER not in caplog.text and "wrong-key" not in caplog.text


def test_key_file(tmp_path):
    path = tmp_path / "keys.txt"
    path.write_text(f"# staff\n{KEY}\n\n{OTHER}  # second\n", encoding="utf-8")
    assert load_api_keys(path) == [KEY, OTHER]
    path.write_text("short\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"keys.txt:1.*at least 16 characters"):
        load_api_keys(path)
    with pytest.raises(InputError, match="not found"):
        load_api_keys(tmp_path / "missing.txt")


def test_rate_limit_is_per_key_with_retry_after(index):
    client = TestClient(create_app(index, settings=ServerSettings(api_keys=(KEY, OTHER), rate_limit=60, rate_burst=3)))
    assert [search(client, KEY).status_code for _ in range(3)] == [200, 200, 200]
    r = search(client, KEY)
    assert r.status_code == 429 and r.headers["retry-after"] == "1"
    assert "too many requests" in r.json()["error"]["message"]
    assert search(client, OTHER).status_code == 200  # the other key has its own bucket


def test_token_bucket_refills():
    now = [0.0]
    limiter = RateLimiter(per_minute=6, burst=2, clock=lambda: now[0])
    assert limiter.take("a") == 0 and limiter.take("a") == 0
    assert limiter.take("a") == pytest.approx(10.0)
    now[0] = 10.0
    assert limiter.take("a") == 0
    assert RateLimiter(per_minute=0).take("a") == 0  # 0: no limit


def test_body_size_content_type_and_headers(index):
    client = TestClient(create_app(index, settings=ServerSettings(max_body_bytes=2048)))
    r = client.post("/search", content=json.dumps({"query": "合同" * 2000}), headers={"content-type": "application/json"})
    assert r.status_code == 413 and "2048 bytes" in r.json()["error"]["message"]

    def chunks():  # no Content-Length: the limit is enforced while reading
        yield b'{"query": "'
        for _ in range(100):
            yield b"x" * 100
        yield b'"}'

    r = client.post("/search", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["message"]
    r = client.post("/search", content="query=x", headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 415 and "application/json" in r.json()["error"]["message"]
    assert client.post("/search", content=b'{"query": "x"}').status_code == 415  # no content type
    r = client.get("/")
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY"
    assert search(client).headers["cache-control"] == "no-store"


def _asgi_post(app, path: str, pieces: list[bytes], headers: list[tuple[bytes, bytes]] = (),
               received: list | None = None) -> tuple[int, dict]:
    """POST ``pieces`` to the ASGI app as one ``http.request`` message each (``more_body`` on all but the last),
    with no Content-Length unless ``headers`` give one, as a server hands a chunked upload to the app; returns
    (status, JSON body). ``received`` collects the messages the app read."""
    import asyncio

    messages = [{"type": "http.request", "body": p, "more_body": i < len(pieces) - 1} for i, p in enumerate(pieces)]
    sent: list[dict] = []
    received = [] if received is None else received

    async def receive() -> dict:
        received.append(messages[0] if messages else None)
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"content-type", b"application/json"), (b"host", b"testserver"), *headers],
             "client": ("127.0.0.1", 50000), "server": ("testserver", 80)}
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], json.loads(body or b"{}")


def test_the_body_limit_counts_every_message_of_a_chunked_upload(index):
    app = create_app(index, settings=ServerSettings(max_body_bytes=2048))
    small = [b'{"query": "', *([b"x" * 100] * 30), b'", "k": 2}']  # 3,000 bytes in pieces of 100
    status, body = _asgi_post(app, "/search", small)
    assert status == 413, (f"a 3,000-byte body sent as 32 messages of at most 100 bytes passed the 2,048-byte "
                           f"limit (status {status}): the limit must count the whole body, not each message")
    assert "2048 bytes" in body["error"]["message"]
    status, body = _asgi_post(app, "/search", [b'{"query": "', "工资".encode(), b'", "k": 2}'])
    assert status == 200 and body["hits"], "a small body sent in three messages is read whole"



def test_a_declared_length_over_the_limit_is_refused_before_the_body_is_read(index):
    app = create_app(index, settings=ServerSettings(max_body_bytes=2048))
    received: list = []
    status, body = _asgi_post(app, "/search", [b'{"query": "x"}'], [(b"content-length", b"4096")], received)
    assert status == 413 and "2048 bytes" in body["error"]["message"], \
        f"a declared Content-Length of 4,096 bytes passed the 2,048-byte limit (status {status})"
    assert received == [], "the body was read although its declared length is over the limit"


def test_cors_is_off_by_default(index):
    preflight = {"origin": "https://elsewhere.example", "access-control-request-method": "POST",
                 "access-control-request-headers": "content-type"}
    r = TestClient(create_app(index)).options("/search", headers=preflight)
    assert "access-control-allow-origin" not in r.headers
    r = TestClient(create_app(index)).post("/search", json={"query": "x"}, headers={"origin": "https://elsewhere.example"})
    assert "access-control-allow-origin" not in r.headers
    client = TestClient(create_app(index, settings=ServerSettings(cors_origins=("https://elsewhere.example",))))
    r = client.options("/search", headers=preflight)
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "https://elsewhere.example"


def test_serving_beyond_loopback_without_a_key_warns(tmp_path, monkeypatch, capsys):
    from support.cli_runner import run_cli

    from legalrag.cli.serve import is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    code, out, err = run_cli(monkeypatch, capsys, "serve", "--host", "0.0.0.0", "--index", tmp_path / "no-index",
                             "--no-llm")
    assert code != 0 and "without an API key" in err  # warned, then refused the missing index
    keys = tmp_path / "keys"
    keys.write_text(KEY + "\n", encoding="utf-8")
    code, out, err = run_cli(monkeypatch, capsys, "serve", "--host", "0.0.0.0", "--index", tmp_path / "no-index",
                             "--no-llm", "--api-key-file", keys)
    assert code != 0 and "without an API key" not in err and "no-index" in err + out
