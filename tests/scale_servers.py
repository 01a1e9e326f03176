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
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

MILVUS_START_TIMEOUT = 120.0
RAY_START_TIMEOUT = 240.0  # a head took 55 s to start at load 15 on the shared 2-core machine
MILVUS_ROOT_TOKEN = "root:Milvus"  # the server's built-in account, as a fresh server creates it


def _stop_on_sigterm() -> None:
    """A session killed with SIGTERM (a CI time limit, `timeout`) would leave the servers running, orphaned:
    turn SIGTERM into SystemExit so pytest unwinds and the fixtures stop them."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- Milvus standalone server ---------------------------------------------------------------------------------

@dataclass
class MilvusServerInfo:
    uri: str
    token: str
    version: str
    pid: int
    data_dir: Path
    start_seconds: float


def _cached_binaries(milvus_mod) -> Path:
    """The package ships the server compressed (57 MB of .lzma); unpack it once per machine, not per session."""
    cache = Path(tempfile.gettempdir()) / f"legalrag-milvus-server-{milvus_mod.__version__}"
    if not (cache / "bin" / "milvus").exists():
        tmp = Path(tempfile.mkdtemp(prefix="unpack-", dir=tempfile.gettempdir()))
        milvus_mod._initialize_data_files(str(tmp))
        cache.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(tmp / "bin", cache / "bin")  # atomic: a concurrent session finds it whole or not at all
        except OSError:
            pass
        shutil.rmtree(tmp, ignore_errors=True)
    return cache / "bin"


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory):
    """A running Milvus standalone server on 127.0.0.1 (a free port), shared by the session."""
    try:
        import milvus as milvus_mod
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
        bins = _cached_binaries(milvus_mod)
        (data / "bin").symlink_to(bins, target_is_directory=True)
        config = milvus_mod.MilvusServerConfig(data_dir=str(data))
        config.set("authorization_enabled", True)
        server = milvus_mod.MilvusServer(config, wait_for_started=False)
        server.start()
        _wait_healthy(server)
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


def stop_server(server) -> None:
    """Stop the server and wait for it (the package's own stop() waits 1 s, then 3 s after a SIGKILL, and
    raises when a loaded machine needs longer). A test server's data is thrown away, so it gets 5 s to stop
    cleanly (Milvus standalone often ignores SIGTERM for a minute), then SIGKILL."""
    proc = server.server_proc
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=60)
    server.stop()  # closes its log files


def _wait_healthy(server) -> None:
    import urllib.request

    deadline = time.monotonic() + MILVUS_START_TIMEOUT
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
    raise TimeoutError(f"not healthy after {MILVUS_START_TIMEOUT:.0f} s")


@pytest.fixture
def milvus_token(milvus_server, monkeypatch) -> str:
    """The server's credentials in the environment, where legalrag reads them (never a command-line option)."""
    monkeypatch.setenv("LEGALRAG_MILVUS_TOKEN", milvus_server.token)
    return milvus_server.token


# -- Ray cluster -----------------------------------------------------------------------------------------------

# Fast detection of a dead node (defaults: about 30 s), so the node-kill test does not wait on timeouts.
# RAY_AUTH_MODE: `ray start --head` turns token authentication on by default and a joining node does not find
# the head's token; a loopback test cluster runs without it (the driver reads the same setting).
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_health_check_initial_delay_ms": "0", "RAY_health_check_period_ms": "500",
           "RAY_health_check_timeout_ms": "500", "RAY_health_check_failure_threshold": "3",
           "RAY_USAGE_STATS_ENABLED": "0", "RAY_worker_register_timeout_seconds": "300"}


@dataclass
class RayNode:
    name: str
    proc: subprocess.Popen
    log: Path

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-600:] if self.log.exists() else ""

    def kill(self) -> None:
        """SIGKILL the node's raylet, its workers and its agents (its own process group)."""
        if self.proc.poll() is None:
            self.kill_group()
            self.proc.wait(timeout=30)

    def kill_group(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass
class RayCluster:
    address: str
    temp_dir: Path
    nodes: list[RayNode] = field(default_factory=list)
    start_seconds: float = 0.0

    def add_node(self, name: str, *, num_cpus: int = 1, env: dict[str, str] | None = None) -> RayNode:
        """Start one more node (its own ``ray start --block`` process) joined to the head; wait until it runs."""
        node = _start_node(name, ["--address", self.address], num_cpus, self.temp_dir, env)
        self.nodes.append(node)
        return node

    def alive_nodes(self) -> int:
        import ray

        return sum(1 for n in ray.nodes() if n["Alive"])


def _ray_exe() -> str:
    exe = Path(sys.executable).with_name("ray")
    return str(exe) if exe.exists() else "ray"


def _start_node(name: str, role: list[str], num_cpus: int, temp_dir: Path, env: dict[str, str] | None,
                attempts: int = 3) -> RayNode:
    """`ray start` gives a raylet 30 s (hard-coded) to register; on a loaded machine it may need longer, so a
    start that timed out that way is tried again, as is one whose chosen port was taken meanwhile."""
    for attempt in range(1, attempts + 1):
        try:
            return _start_node_once(name, role, num_cpus, temp_dir, env)
        except RuntimeError as exc:
            # a raylet slow to register, or a chosen port taken by another process in the meantime
            retry = "timed out during startup" in str(exc) or "is trying to use a port number" in str(exc)
            if not retry or attempt == attempts:
                raise
    raise AssertionError("unreachable")


def _start_node_once(name: str, role: list[str], num_cpus: int, temp_dir: Path,
                     env: dict[str, str] | None) -> RayNode:
    log = temp_dir / f"{name}.log"
    base = free_port() // 100 * 100  # a block of worker ports per node, away from the others

    def single() -> int:  # a free port outside the worker block (Ray refuses a port used twice)
        while True:
            port = free_port()
            if not base <= port <= base + 99:
                return port

    ports = ["--node-manager-port", single(), "--object-manager-port", single(),
             "--dashboard-agent-listen-port", single(), "--dashboard-agent-grpc-port", single(),
             "--runtime-env-agent-port", single(), "--metrics-export-port", single()]
    cmd = [_ray_exe(), "start", "--block", *role, "--node-ip-address", "127.0.0.1", "--num-cpus", str(num_cpus),
           "--disable-usage-stats", *map(str, ports), "--min-worker-port", str(base),
           "--max-worker-port", str(min(base + 99, 65535))]
    full_env = {**os.environ, **RAY_ENV, **(env or {}), "PYTHONPATH": os.pathsep.join(
        p for p in (str(Path(__file__).resolve().parents[1] / "src"), os.environ.get("PYTHONPATH", "")) if p)}
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=full_env, start_new_session=True)
    node = RayNode(name, proc, log)
    deadline = time.monotonic() + RAY_START_TIMEOUT
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if "Ray runtime started" in text:
            return node
        if proc.poll() is not None:
            node.kill_group()  # what it started before failing
            raise RuntimeError(f"`ray start` for {name} exited with code {proc.returncode}: {text[-600:]}")
        time.sleep(0.2)
    node.kill()
    raise TimeoutError(f"the Ray node {name} did not start in {RAY_START_TIMEOUT:.0f} s: {node.tail()}")


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
