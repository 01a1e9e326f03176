"""``legalrag serve --background`` / ``--stop`` / ``--status``: the warm server as a background process.

``start`` launches the given ``legalrag serve`` command detached (its pid and log in the home folder), waits
until ``/health`` answers, and returns; a server of another build already at the address is reported as
stale with the fix (it is not replaced silently: it may be someone else's). ``stop`` ends the one started
here (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any, Callable

from legalrag.errors import LegalRagError
from legalrag.io import log_tail, start_detached
from legalrag.warm.client import probe

START_TIMEOUT = 600.0  # a large index and the model load in minutes on a busy 2-core machine


class StartError(LegalRagError):
    """The background server did not come up (its log's tail is in the message)."""


def files(home: Path) -> tuple[Path, Path]:
    home.mkdir(parents=True, exist_ok=True)
    return home / "serve.json", home / "serve.log"


def _state(home: Path) -> dict[str, Any]:
    path, _ = files(home)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def status(url: str, home: Path) -> dict[str, Any]:
    """The server at ``url`` (build, model, indexes) and the pid of the one started here, if it still runs."""
    from legalrag.warm.build import build_id

    server = probe(url)
    pid = _state(home).get("pid")
    out: dict[str, Any] = {"url": url, "up": server is not None, "pid": pid if _alive(pid) else None,
                           "log": str(files(home)[1])}
    if server is not None:
        out.update(version=server.version, build=server.build, stale=server.build != build_id(), llm=server.llm,
                   index=server.index, indexes=list(server.indexes), server_pid=server.pid)
    return out


def start(url: str, home: Path, cmd: list[str], *, timeout: float = START_TIMEOUT,
          on_wait: Callable[[float], None] | None = None) -> dict[str, Any]:
    """Run ``cmd`` (a ``legalrag serve`` command line) in the background unless a server answers at ``url``;
    wait until it does. Raises :class:`StartError` with the log's tail when it exits or does not answer in
    ``timeout`` seconds."""
    up = status(url, home)
    if up["up"]:
        return {**up, "already_running": True}
    state_file, log = files(home)
    proc, seconds = start_detached(cmd, state_file, log, url, lambda: probe(url) is not None, timeout=timeout,
                                   on_wait=on_wait)
    if seconds is not None:
        return {**status(url, home), "already_running": False, "seconds": seconds}
    if proc.poll() is not None:
        raise StartError(f"the server exited with code {proc.returncode} while starting; its log ({log}) ends "
                         f"with:\n{tail(log)}")
    stop(url, home)
    raise StartError(f"the server did not answer within {timeout:g} s of starting; its log ({log}) ends with:\n"
                     f"{tail(log)}")


def stop(url: str, home: Path, timeout: float = 15.0) -> dict[str, Any]:
    """Stop the server started here (SIGTERM to its process group, then SIGKILL after ``timeout`` seconds)."""
    state_file, _ = files(home)
    pid = _state(home).get("pid")
    stopped = False
    if _alive(pid):
        try:
            os.killpg(pid, signal.SIGTERM)
        except OSError:
            os.kill(pid, signal.SIGTERM)
        t0 = time.monotonic()
        while _alive(pid) and time.monotonic() - t0 < timeout:
            _reap(pid)
            time.sleep(0.2)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
            _reap(pid)
        stopped = True
    state_file.unlink(missing_ok=True)
    return {"url": url, "stopped": stopped, "pid": pid, "still_up": probe(url) is not None}


def _reap(pid: int) -> None:
    """Collect a child that exited (when this process started it), so it does not linger as a zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


tail = log_tail
