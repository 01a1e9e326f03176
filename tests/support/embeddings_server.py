"""A local HTTP server speaking the OpenAI ``/v1/embeddings`` wire format, for tests (127.0.0.1 only).

Vectors are a deterministic bag of character hashes, so similar texts get similar vectors. ``fail_first``
makes the first N requests answer 503 (to test retries); ``status`` forces an error status on every request;
``normalise=False`` answers raw counts, vectors that are not unit length.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np


def char_vector(text: str, dim: int, normalise: bool = True) -> list[float]:
    """Character-hash counts, L2-normalised unless ``normalise`` is False (raw counts: longer texts get longer
    vectors, as some embedding endpoints return)."""
    v = np.zeros(dim)
    for ch in text:
        v[int(hashlib.md5(ch.encode()).hexdigest(), 16) % dim] += 1.0
    return (v / (np.linalg.norm(v) or 1.0)).tolist() if normalise else v.tolist()


class EmbeddingsServer:
    def __init__(self, dim: int = 16, fail_first: int = 0, status: int | None = None, api_key: str | None = None,
                 normalise: bool = True):
        self.dim, self.fail_first, self.status, self.api_key = dim, fail_first, status, api_key
        self.normalise = normalise
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # keep test output quiet
                pass

            def _send(self, code: int, obj: dict) -> None:
                body = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "body": body,
                                       "auth": self.headers.get("Authorization")})
                if self.path != "/v1/embeddings":
                    return self._send(404, {"error": {"message": "not found"}})
                if outer.api_key and self.headers.get("Authorization") != f"Bearer {outer.api_key}":
                    return self._send(401, {"error": {"message": "Incorrect API key provided"}})
                if outer.status:
                    return self._send(outer.status, {"error": {"message": "forced error"}})
                if outer.fail_first > 0:
                    outer.fail_first -= 1
                    return self._send(503, {"error": {"message": "overloaded"}})
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [{"object": "embedding", "index": i, "embedding": char_vector(t, outer.dim, outer.normalise)}
                        for i, t in enumerate(inputs)]
                data.reverse()  # the spec orders by "index", not by position; clients must sort
                self._send(200, {"object": "list", "data": data, "model": body["model"],
                                 "usage": {"prompt_tokens": 1, "total_tokens": 1}})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "EmbeddingsServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
