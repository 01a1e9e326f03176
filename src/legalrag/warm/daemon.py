"""Background servers: the one start, stop and status of ``legalrag serve --background`` and ``legalrag llm
start``.

A :class:`Daemon` names a kind of server: the stem of its pid file and log in the home folder
(``serve.json`` / ``serve.log``, ``llm-server.json`` / ``llm-server.log``), what messages call it, and how to
tell that one answers at a URL. ``start`` launches the command line it is given detached (its pid and log in
the home folder) unless a server already answers, and waits until one does (a process that exits or does not
answer within the timeout is an error with its log's tail); ``stop`` ends the one started here (SIGTERM to its
process group, then SIGKILL after a grace); ``status`` says whether one answers and the pid of the one started
here. A server already at the address is never replaced silently: it may be someone else's.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from legalrag.errors import LegalRagError
from legalrag.io import log_tail, start_detached

START_TIMEOUT = 600.0  # a large index and the model load in minutes on a busy 2-core machine
STOP_GRACE = 15.0  # seconds between SIGTERM and SIGKILL
KILL_WAIT = 5.0  # seconds for a killed process to be gone


class StartError(LegalRagError):
    """The background server did not come up (its log's tail is in the message)."""


@dataclass(frozen=True)
class Daemon:
    """A kind of background server: ``name`` is the stem of its pid file and log, ``label`` what messages call
    it, ``probe(url)`` what one of its kind answering at ``url`` says of itself (``{"up": bool, ...}``: its
    model, its build...)."""

    name: str
    label: str
    probe: Callable[[str], dict[str, Any]]

    def answers(self, url: str) -> bool:
        return bool(self.probe(url).get("up"))

    def files(self, home: Path) -> tuple[Path, Path]:
        """The pid file (JSON: pid, url, started, cmd) and the log, in ``home`` (created when missing)."""
        home.mkdir(parents=True, exist_ok=True)
        return home / f"{self.name}.json", home / f"{self.name}.log"


def _state(daemon: Daemon, home: Path) -> dict[str, Any]:
    path, _ = daemon.files(home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def status(daemon: Daemon, url: str, home: Path) -> dict[str, Any]:
    """Whether a server answers at ``url``, the pid of the one started here (None when it no longer runs), when
    it was started, and its log."""
    state = _state(daemon, home)
    pid = state.get("pid")
    return {"url": url, **daemon.probe(url), "pid": pid if _alive(pid) else None, "started": state.get("started"),
            "log": str(daemon.files(home)[1])}


def start(daemon: Daemon, url: str, home: Path, cmd: list[str], *, timeout: float = START_TIMEOUT,
          on_wait: Callable[[float], None] | None = None) -> dict[str, Any]:
    """Run ``cmd`` in the background unless a server answers at ``url``, and wait until one does. Returns
    :func:`status` with ``already_running`` (and ``seconds``, the wait, when started now). Raises
    :class:`StartError` with the log's tail when the process exits or does not answer in ``timeout`` seconds
    (it is stopped then)."""
    if daemon.answers(url):
        return {**status(daemon, url, home), "already_running": True}
    state_file, log = daemon.files(home)
    proc, seconds = start_detached(cmd, state_file, log, url, lambda: daemon.answers(url), timeout=timeout,
                                   on_wait=on_wait)
    if seconds is not None:
        return {**status(daemon, url, home), "already_running": False, "seconds": seconds}
    if proc.poll() is not None:
        raise StartError(f"{daemon.label} exited with code {proc.returncode} while starting; its log ({log}) ends "
                         f"with:\n{log_tail(log)}")
    stop(daemon, url, home)
    raise StartError(f"{daemon.label} did not answer within {timeout:g} s of starting; its log ({log}) ends "
                     f"with:\n{log_tail(log)}")


def stop(daemon: Daemon, url: str, home: Path, grace: float = STOP_GRACE) -> dict[str, Any]:
    """Stop the server started here: SIGTERM to its process group, then SIGKILL after ``grace`` seconds.
    ``stopped`` says whether one ran; ``still_up`` whether a server (another one) still answers at ``url``."""
    state_file, _ = daemon.files(home)
    pid = _state(daemon, home).get("pid")
    stopped = False
    if _alive(pid):
        try:
            os.killpg(pid, signal.SIGTERM) if _leads_group(pid) else os.kill(pid, signal.SIGTERM)
        except OSError:
            os.kill(pid, signal.SIGTERM)
        if not _gone(pid, grace):
            os.kill(pid, signal.SIGKILL)
            _gone(pid, KILL_WAIT)
        stopped = True
    state_file.unlink(missing_ok=True)
    return {"url": url, "stopped": stopped, "pid": pid, "still_up": daemon.answers(url)}


def _gone(pid: int, seconds: float) -> bool:
    """Wait up to ``seconds`` for ``pid`` to end (reaping it when it is this process's child)."""
    t0 = time.monotonic()
    while True:
        _reap(pid)
        if not _alive(pid):
            return True
        if time.monotonic() - t0 >= seconds:
            return False
        time.sleep(0.1)


def _leads_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return False


def _reap(pid: int) -> None:
    """Collect a child that exited (when this process started it), so it does not linger as a zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _serve_probe(url: str) -> dict[str, Any]:
    """What ``/health`` of a ``legalrag serve`` says: its build (``stale`` when it is not this one), model and
    indexes."""
    from legalrag.warm.build import build_id
    from legalrag.warm.client import probe_warm_server

    server = probe_warm_server(url)
    if server is None:
        return {"up": False}
    return {"up": True, "version": server.version, "build": server.build, "stale": server.build != build_id(),
            "llm": server.llm, "index": server.index, "indexes": list(server.indexes), "server_pid": server.pid}


def _llm_probe(url: str) -> dict[str, Any]:
    """The model a ``legalrag llm serve`` at ``url`` serves (``model`` None when none answers)."""
    from legalrag.llm.local import probe_model_server

    info = probe_model_server(url)
    return {"up": info is not None, "model": info.model if info else None}


SERVE = Daemon("serve", "the server", _serve_probe)  # `legalrag serve --background`
LLM_SERVER = Daemon("llm-server", "the model server", _llm_probe)  # `legalrag llm start`
