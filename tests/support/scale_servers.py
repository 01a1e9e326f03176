"""Real servers for the scale-out tests, started once per test session on loopback and shared by every test that
asks for them (a pytest plugin: ``pytest_plugins`` in conftest.py):

- ``milvus_server``: a Milvus standalone server process (the C++ server binary of the PyPI package ``milvus``,
  2.3.5) with a temporary data directory, authentication on (the tests send ``root:Milvus`` from the
  environment, as users do). Skipped, with the reason, when the package is missing or the server does not start.
- ``ray_cluster``: a Ray head node and one more node, each its own ``ray start --block`` process with its own
  raylet; ``ray_cluster.add_node(...)`` starts a further node that a test may kill.

Both are stopped at the end of the session (by process group: each was started in its own session).
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from legalrag.distributed.local import RayCluster, free_port
from legalrag.distributed.local import start_node as _start_node
from legalrag.retrieval.milvus.server import (
    MILVUS_ROOT_TOKEN,
    start_standalone,
    stop_server,
)


def _stop_on_sigterm() -> None:
    """A session killed with SIGTERM (a CI time limit, `timeout`) would leave the servers running, orphaned:
    turn SIGTERM into SystemExit so pytest unwinds and the fixtures stop them."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


# -- Milvus standalone server ---------------------------------------------------------------------------------

@dataclass
class MilvusServerInfo:
    uri: str
    token: str
    version: str
    pid: int
    data_dir: Path
    start_seconds: float


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory):
    """A running Milvus standalone server on 127.0.0.1 (a free port), shared by the session."""
    try:
        import milvus
    except ImportError:
        pytest.skip("the Milvus server package is not installed: pip install 'legalrag[dev]' (milvus==2.3.5)")
    if not sys.platform.startswith("linux"):
        pytest.skip("the milvus package's server binary is built for Linux x86-64")
    # Not tmp_path_factory: pytest keeps only the last three base temp dirs, and another pytest session on the
    # machine would delete this one under the running server.
    data = Path(tempfile.mkdtemp(prefix="legalrag-milvus-server-"))
    _stop_on_sigterm()
    started = time.perf_counter()
    try:
        server = start_standalone(data, auth=True)
    except Exception as exc:  # a sandbox without the needed syscalls, ports or libraries: skip with the cause
        log = data / "logs" / "milvus-stderr.log"
        tail = log.read_text(errors="replace")[-400:] if log.exists() else ""
        shutil.rmtree(data, ignore_errors=True)
        pytest.skip(f"the Milvus server did not start: {type(exc).__name__}: {exc} {tail}".strip())
    from pymilvus import MilvusClient

    uri = f"http://127.0.0.1:{server.listen_port}"
    client = MilvusClient(uri=uri, token=MILVUS_ROOT_TOKEN)
    version = str(client.get_server_version())
    client.close()
    info = MilvusServerInfo(uri, MILVUS_ROOT_TOKEN, version, server.server_proc.pid, data,
                            time.perf_counter() - started)
    yield info
    stop_server(server)
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def milvus_token(milvus_server, monkeypatch) -> str:
    """The server's credentials in the environment, where legalrag reads them (never a command-line option)."""
    monkeypatch.setenv("LEGALRAG_MILVUS_TOKEN", milvus_server.token)
    return milvus_server.token


# -- Ray cluster -----------------------------------------------------------------------------------------------

_DROVE_A_CLUSTER: list[bool] = []
_EXIT_STATUS: list[int] = []


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    _EXIT_STATUS.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """A pytest process that drove the two-node cluster ends without the interpreter's teardown: after every test
    had passed and the summary was printed, Ray's native threads crashed one such process at exit (a
    segmentation fault, which failed `make test`). Everything is reported by now; the test session's call cache
    (conftest) is removed here since atexit handlers do not run."""
    if not _DROVE_A_CLUSTER or not _EXIT_STATUS:
        return
    cache = os.environ.get("LEGALRAG_LLM_CACHE", "")
    if Path(cache).parent.name.startswith("legalrag-tests-"):
        shutil.rmtree(Path(cache).parent, ignore_errors=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_EXIT_STATUS[-1])


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory):
    """A Ray cluster of two nodes on 127.0.0.1 (head and ``node-2``, one CPU each), shared by the session.

    Tests connect with ``ray.init(address=ray_cluster.address)`` (or legalrag's ``--ray-address``) with
    ``RAY_AUTH_MODE=disabled`` in their environment (the ``ray_driver`` fixture) and must disconnect
    (``legalrag.distributed.cluster.shutdown()``) when done."""
    pytest.importorskip("ray", reason="pip install 'legalrag[scale]'")
    temp_dir = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    _stop_on_sigterm()
    started = time.perf_counter()
    port = free_port()
    cluster = RayCluster(f"127.0.0.1:{port}", temp_dir)
    try:
        cluster.nodes.append(_start_node("head", ["--head", "--port", str(port), "--include-dashboard", "false",
                                                  "--temp-dir", str(temp_dir)], 1, temp_dir, None))
        cluster.add_node("node-2")
    except Exception as exc:
        for n in cluster.nodes:
            n.kill()
        shutil.rmtree(temp_dir, ignore_errors=True)
        pytest.skip(f"could not start a two-node Ray cluster: {exc}")
    cluster.start_seconds = time.perf_counter() - started
    _DROVE_A_CLUSTER.append(True)
    yield cluster
    for n in reversed(cluster.nodes):
        n.stop()
    shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.fixture
def ray_driver(ray_cluster, monkeypatch):
    """This test process as a driver of ``ray_cluster``; disconnected afterwards (the cluster keeps running)."""
    from legalrag.distributed.cluster import shutdown

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    shutdown()
    yield ray_cluster
    shutdown()
