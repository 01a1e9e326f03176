"""The one start, stop and status of `legalrag serve --background` and `legalrag llm start`
(``legalrag.warm.daemon``), with real background processes: a small HTTP server started, found, stopped
(SIGTERM, and SIGKILL after the grace for one that ignores it), a process that exits while starting reported
with its log, and both commands' pid files where they always were."""

from __future__ import annotations

import http.client
import os
import sys
import time
from pathlib import Path

import pytest
from support.http_app import free_port

from legalrag.warm.daemon import LLM_SERVER, SERVE, Daemon, StartError, start, status, stop

SERVER = """
import http.server, signal, sys
if sys.argv[2] == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a):
        pass
print("listening", flush=True)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def _probe(url: str) -> dict:
    host, port = url.rsplit("//", 1)[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=0.5)
    try:
        conn.request("GET", "/")
        return {"up": conn.getresponse().status == 200}
    except OSError:
        return {"up": False}
    finally:
        conn.close()


TOY = Daemon("toy", "the toy server", _probe)


def _alive(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_start_waits_until_it_answers_and_stop_ends_it(tmp_path: Path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    info = start(TOY, url, tmp_path, [sys.executable, "-c", SERVER, str(port), "plain"], timeout=30)
    try:
        assert info["up"] and not info["already_running"] and info["seconds"] >= 0
        pid = info["pid"]
        assert pid and _alive(pid) and (tmp_path / "toy.json").is_file()
        assert "listening" in (tmp_path / "toy.log").read_text()
        again = start(TOY, url, tmp_path, [sys.executable, "-c", "raise SystemExit(3)"], timeout=5)
        assert again["already_running"] and again["pid"] == pid  # not replaced, not started twice
        assert status(TOY, url, tmp_path)["pid"] == pid
    finally:
        out = stop(TOY, url, tmp_path)
    assert out["stopped"] and out["pid"] == pid and not out["still_up"]
    assert not _alive(pid) and not (tmp_path / "toy.json").exists()
    now = status(TOY, url, tmp_path)
    assert not now["up"] and now["pid"] is None
    assert stop(TOY, url, tmp_path)["stopped"] is False  # nothing left to stop


def test_a_server_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    pid = start(TOY, url, tmp_path, [sys.executable, "-c", SERVER, str(port), "stubborn"], timeout=30)["pid"]
    t0 = time.monotonic()
    out = stop(TOY, url, tmp_path, grace=1.0)
    assert out["stopped"] and not _alive(pid) and time.monotonic() - t0 >= 1.0


def test_a_process_that_exits_while_starting_is_an_error_with_its_log(tmp_path: Path):
    url = f"http://127.0.0.1:{free_port()}"
    cmd = [sys.executable, "-c", "import sys; print('no such index: /nowhere'); sys.exit(2)"]
    with pytest.raises(StartError, match=r"the toy server exited with code 2 while starting(.|\n)*no such index"):
        start(TOY, url, tmp_path, cmd, timeout=30)
    assert status(TOY, url, tmp_path)["pid"] is None


def test_serve_and_the_model_server_keep_their_files_and_say_what_answers(tmp_path: Path):
    url = f"http://127.0.0.1:{free_port()}"
    assert SERVE.files(tmp_path) == (tmp_path / "serve.json", tmp_path / "serve.log")
    assert LLM_SERVER.files(tmp_path) == (tmp_path / "llm-server.json", tmp_path / "llm-server.log")
    assert status(SERVE, url, tmp_path) == {"url": url, "up": False, "pid": None, "started": None,
                                            "log": str(tmp_path / "serve.log")}
    assert status(LLM_SERVER, url + "/v1", tmp_path)["model"] is None
