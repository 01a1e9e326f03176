"""Run an ASGI app (our `create_app`s) with uvicorn on a free 127.0.0.1 port in a thread, for tests."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """Yields the base URL (``http://127.0.0.1:PORT``) once ``/health`` answers 200; stops the server after."""
    import httpx
    import uvicorn

    port = free_port()
    # log_config=None: uvicorn's own logging set-up (logging.config.dictConfig) closes every existing handler,
    # and a handler a library made during an earlier test (absl's, imported by rouge-score) holds the stream
    # pytest captured then: closing it breaks pytest's capture for the rest of the session.
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", log_config=None))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if httpx.get(url + "/health").status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.05)
    else:
        server.should_exit = True
        raise RuntimeError(f"the test server on port {port} did not come up")
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=10)
