"""A Ray cluster of real nodes on loopback: each node is its own ``ray start --block`` process (its own raylet,
process group and log), for the scale benchmarks and the multi-node tests.

    port = free_port()
    cluster = RayCluster(f"127.0.0.1:{port}", temp_dir)
    cluster.nodes.append(start_node("head", ["--head", "--port", str(port), "--include-dashboard", "false",
                                             "--temp-dir", str(temp_dir)], 1, temp_dir))
    cluster.add_node("node-2")               # joined to the head; node.kill() takes one down mid-run
    ...
    for node in reversed(cluster.nodes):
        node.stop()

``temp_dir`` should be short (``/tmp/ray-...``): Ray's socket paths must fit 107 bytes.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

RAY_START_TIMEOUT = 240.0  # a head took 55 s to start at load 15 on a shared 2-core machine

# Fast detection of a dead node (defaults: about 30 s), so a node killed mid-run is noticed without waiting.
# RAY_AUTH_MODE: `ray start --head` turns token authentication on by default and a joining node does not find
# the head's token; a loopback cluster runs without it (the driver reads the same setting).
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_health_check_initial_delay_ms": "0", "RAY_health_check_period_ms": "500",
           "RAY_health_check_timeout_ms": "500", "RAY_health_check_failure_threshold": "3",
           "RAY_USAGE_STATS_ENABLED": "0", "RAY_worker_register_timeout_seconds": "300"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
        node = start_node(name, ["--address", self.address], num_cpus, self.temp_dir, env)
        self.nodes.append(node)
        return node

    def alive_nodes(self) -> int:
        import ray

        return sum(1 for n in ray.nodes() if n["Alive"])


def _ray_exe() -> str:
    exe = Path(sys.executable).with_name("ray")
    return str(exe) if exe.exists() else "ray"


def start_node(name: str, role: list[str], num_cpus: int, temp_dir: Path, env: dict[str, str] | None = None,
               attempts: int = 3) -> RayNode:
    """Start one node (``role``: ``["--head", "--port", P, ...]`` or ``["--address", A]``) and wait until it
    runs. `ray start` gives a raylet 30 s (hard-coded) to register; on a loaded machine it may need longer, so a
    start that timed out that way is tried again, as is one whose chosen port was taken meanwhile."""
    for attempt in range(1, attempts + 1):
        try:
            return _start_node_once(name, role, num_cpus, temp_dir, env)
        except RuntimeError as exc:
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
    # the workers import this legalrag: the folder that holds the package comes first on their path
    here = str(Path(__file__).resolve().parents[2])
    full_env = {**os.environ, **RAY_ENV, **(env or {}), "PYTHONPATH": os.pathsep.join(
        p for p in (here, os.environ.get("PYTHONPATH", "")) if p)}
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
