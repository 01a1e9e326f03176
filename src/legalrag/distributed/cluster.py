"""Starting or joining a Ray cluster and running batches on it with counted retries of crashed workers."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from legalrag._optional import require
from legalrag.errors import InputError, LegalRagError


@dataclass
class BatchReport:
    """What a fan-out did: batches run, worker crashes retried, seconds (start-up of the cluster included)."""

    batches: int = 0
    retries: int = 0
    seconds: float = 0.0
    workers: int = 0
    address: str = "local"
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"batches": self.batches, "retries": self.retries, "seconds": round(self.seconds, 3),
                "workers": self.workers, "address": self.address, "errors": list(self.errors)}


def _ray():
    return require("ray", "scale")


def ensure_ray(workers: int | None = None, address: str | None = None) -> Any:
    """Start a local Ray cluster with ``workers`` CPUs, or connect to ``address``; reuse one already started.

    A local cluster's workers get this process's ``legalrag`` on their path, so a source checkout runs
    unchanged; on a remote cluster legalrag must be installed on every node (``pip install 'legalrag[scale]'``)."""
    ray = _ray()
    if ray.is_initialized():
        return ray
    if address:
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        except Exception as exc:  # ConnectionError, or ray's own errors for a bad address
            raise LegalRagError(f"cannot connect to the Ray cluster at {address}: {' '.join(str(exc).split())[:300]}; "
                                "check the address (ray://HOST:10001 or auto) and that the cluster is up") from None
        return ray
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}")
    src = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)
    ray.init(num_cpus=workers or 1, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    return ray


def run_batches(fn: Callable[..., Any], batches: Sequence[Any], *args: Any, workers: int | None = None,
                address: str | None = None, max_retries: int = 3, progress: bool = False,
                desc: str = "batches") -> tuple[list[Any], BatchReport]:
    """``[fn(batch, *args) for batch in batches]`` on Ray workers, in input order.

    A batch whose worker process dies (killed, out of memory, crashed) runs again, up to ``max_retries``
    times; an exception raised by ``fn`` itself is not retried (it would fail again) and is re-raised."""
    ray = ensure_ray(workers, address)
    started = time.perf_counter()
    remote = ray.remote(max_retries=0, num_cpus=1)(fn)
    shared = [ray.put(a) for a in args]
    report = BatchReport(workers=int(ray.cluster_resources().get("CPU", 0)), address=address or "local")
    results: list[Any] = [None] * len(batches)
    attempts = [0] * len(batches)
    pending = {remote.remote(batches[i], *shared): i for i in range(len(batches))}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(batches), desc=desc, unit="batch")
    crashed = _lost_work_errors(ray)
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            i = pending.pop(ref)
            try:
                results[i] = ray.get(ref)
            except crashed as exc:
                attempts[i] += 1
                report.retries += 1
                report.errors.append(f"batch {i}: {type(exc).__name__}")
                if attempts[i] > max_retries:
                    if bar is not None:
                        bar.close()
                    raise LegalRagError(
                        f"batch {i} of {len(batches)} failed {attempts[i]} times ({type(exc).__name__}: its worker "
                        f"or node died each time) on the Ray cluster at {report.address}; nothing was written from "
                        "this run; check the nodes' memory and logs (a node that was stopped or lost) and run "
                        "again: work already finished is kept where the caller caches it") from None
                pending[remote.remote(batches[i], *shared)] = i
                continue
            except ray.exceptions.RayTaskError as exc:
                raise exc.as_instanceof_cause() from None
            report.batches += 1
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    report.seconds = time.perf_counter() - started
    return results, report


def _lost_work_errors(ray) -> tuple[type[BaseException], ...]:
    """What Ray raises when a batch's work is lost with its process or node (not an error of the batch itself):
    the batch is submitted again. ObjectLostError covers a result that lived only on a node that died."""
    names = ("WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError", "OutOfMemoryError", "ObjectLostError")
    return tuple(getattr(ray.exceptions, n) for n in names if hasattr(ray.exceptions, n))


_PER_PROCESS: dict[Any, Any] = {}


def _factory_key(factory: Any) -> Any:
    """What identifies a factory across its unpickled copies: the function's name and the partial's arguments
    (both stable within a process), else its pickled bytes."""
    import functools

    if isinstance(factory, functools.partial):
        return ("partial", _factory_key(factory.func), repr(factory.args), repr(sorted(factory.keywords.items())))
    name = getattr(factory, "__qualname__", None)
    if name is not None and "<lambda>" not in name and "<locals>" not in name:
        return ("callable", getattr(factory, "__module__", ""), name)
    return ("pickled", _ray().cloudpickle.dumps(factory))


def once_per_process(factory: Callable[[], Any]) -> Any:
    """``factory()``, built once in this worker process and reused by its later batches. Each task receives
    its own unpickled copy of the factory, so copies are matched by name and arguments, not identity."""
    try:
        key = _factory_key(factory)
    except Exception:  # cannot be identified: build it afresh
        return factory()
    if key not in _PER_PROCESS:
        _PER_PROCESS[key] = factory()
    return _PER_PROCESS[key]


def shutdown() -> None:
    ray = _ray()
    if ray.is_initialized():
        ray.shutdown()
