"""A local Milvus standalone server: the C++ server binary of the PyPI package ``milvus`` (2.3.5), started on
loopback with a data directory of its own, for the scale benchmarks and the tests that need a real server.

    server = start_standalone(Path(tempfile.mkdtemp()), auth=True)   # waits until /healthz answers OK
    uri = f"http://127.0.0.1:{server.listen_port}"                   # token: MILVUS_ROOT_TOKEN
    stop_server(server)

The package ships the server compressed (57 MB of .lzma); :func:`cached_binaries` unpacks it once per machine
into the temp folder, atomically, so concurrent starts find it whole or not at all.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

MILVUS_START_TIMEOUT = 120.0  # seconds for a started server to answer /healthz
MILVUS_ROOT_TOKEN = "root:Milvus"  # the server's built-in account, as a fresh server creates it


def _milvus():
    from legalrag._optional import require

    return require("milvus", "dev")


def cached_binaries(milvus_mod: Any = None) -> Path:
    """The unpacked server binaries (``.../bin``), unpacked on first use for this version of the package."""
    milvus_mod = milvus_mod or _milvus()
    cache = Path(tempfile.gettempdir()) / f"legalrag-milvus-server-{milvus_mod.__version__}"
    if not (cache / "bin" / "milvus").exists():
        tmp = Path(tempfile.mkdtemp(prefix="unpack-", dir=tempfile.gettempdir()))
        milvus_mod._initialize_data_files(str(tmp))
        cache.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(tmp / "bin", cache / "bin")  # atomic: a concurrent start finds it whole or not at all
        except OSError:
            pass
        shutil.rmtree(tmp, ignore_errors=True)
    return cache / "bin"


def start_standalone(data: Path, *, auth: bool = True, timeout: float = MILVUS_START_TIMEOUT):
    """Start a Milvus standalone server whose data lives in ``data`` (an empty folder) and wait until it is
    healthy; authentication on unless ``auth=False``. Returns the package's ``MilvusServer``."""
    milvus_mod = _milvus()
    (data / "bin").symlink_to(cached_binaries(milvus_mod), target_is_directory=True)
    config = milvus_mod.MilvusServerConfig(data_dir=str(data))
    if auth:
        config.set("authorization_enabled", True)
    server = milvus_mod.MilvusServer(config, wait_for_started=False)
    server.start()
    wait_healthy(server, timeout)
    return server


def stop_server(server: Any) -> None:
    """Stop the server and wait for it (the package's own stop() waits 1 s, then 3 s after a SIGKILL, and
    raises when a loaded machine needs longer). A throw-away server gets 5 s to stop cleanly (Milvus
    standalone often ignores SIGTERM for a minute), then SIGKILL."""
    proc = server.server_proc
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=60)
    server.stop()  # closes its log files


def wait_healthy(server: Any, timeout: float = MILVUS_START_TIMEOUT) -> None:
    """Wait until the server's ``/healthz`` answers OK; stops it and raises when its process exits (RuntimeError)
    or it is not healthy within ``timeout`` seconds (TimeoutError)."""
    import urllib.request

    deadline = time.monotonic() + timeout
    url = f"http://127.0.0.1:{server.webservice_port}/healthz"
    while time.monotonic() < deadline:
        if server.server_proc.poll() is not None:
            raise RuntimeError(f"the server process exited with code {server.server_proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if b"OK" in resp.read():
                    return
        except OSError:
            pass
        time.sleep(0.2)
    stop_server(server)
    raise TimeoutError(f"not healthy after {timeout:.0f} s")
