"""A real HTTP server on 127.0.0.1 for the search, fetch and QA tests: serves fixed routes and records requests.

Routes map a path to (status, content type, body bytes[, delay seconds]). ``LOCAL/`` inside JSON bodies is replaced
by the server's own base URL, so search results can point at pages served by the same server.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

QA_DATA = Path(__file__).resolve().parents[1] / "data" / "qa"


class LocalServer:
    def __init__(self) -> None:
        self.routes: dict[str, tuple] = {}
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                parsed = urlparse(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                server.requests.append({"method": self.command, "path": parsed.path,
                                        "query": {k: v[0] for k, v in parse_qs(parsed.query).items()},
                                        "headers": {k.lower(): v for k, v in self.headers.items()},
                                        "json": json.loads(body) if body.startswith(b"{") else None})
                route = server.routes.get(parsed.path)
                if route is None:
                    status, ctype, payload, delay = 404, "text/html", b"<html><body><h1>404 Not Found</h1></body></html>", 0
                else:
                    status, ctype, payload, *rest = route
                    delay = rest[0] if rest else 0
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = _serve

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def add(self, path: str, body: bytes | str, ctype: str = "text/html; charset=utf-8", status: int = 200,
            delay: float = 0) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.routes[path] = (status, ctype, data, delay)

    def add_json(self, path: str, fixture: str | dict, status: int = 200) -> None:
        text = (QA_DATA / fixture).read_text(encoding="utf-8") if isinstance(fixture, str) else json.dumps(fixture)
        self.add(path, text.replace("LOCAL/", self.url + "/"), "application/json", status)

    def add_file(self, path: str, name: str, ctype: str, **kw) -> None:
        self.add(path, (QA_DATA / "pages" / name).read_bytes(), ctype, **kw)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
