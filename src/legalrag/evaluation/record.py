"""Record a benchmark result: one ``bench/results/*.json`` file with the figures, the exact command that made them,
the machine they were measured on and the date, written atomically.

    from legalrag.evaluation.record import paired, write_result

    write_result("bench/results/x.json", {"bm25": {"recall@10": 0.45}}, name="BM25 on STARD",
                 data="STARD, 1,234 training queries", paired={"hybrid vs bm25": paired(hybrid, bm25)})

The machine is detected once per process (:func:`machine`): CPU model, cores, memory, GPU (``none`` without
one) and operating system. ``machine`` in the file is its one-line description, with what the caller adds
(``machine_note``: "shared with other jobs", the load); ``machine_detail`` holds the fields. Paired tests are
the two-sided paired randomization test of :mod:`legalrag.evaluation.compare`, the one every comparison of
legalrag reports.
"""

from __future__ import annotations

import datetime
import functools
import os
import platform
import shlex
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from legalrag.errors import InputError

__all__ = ["Machine", "machine", "command", "paired", "paired_tests", "percentile", "write_result"]


@dataclass(frozen=True)
class Machine:
    cpu: str  # the CPU model as the OS names it
    cores: int  # logical cores this process may use
    memory_gib: float  # physical memory
    gpu: str  # the GPU model(s), or "none"
    os: str  # system, release and machine type

    def describe(self) -> str:
        """One line, e.g. ``AMD EPYC, 2 cores, 23.5 GiB, no GPU, Linux 6.1 x86_64``."""
        gpu = "no GPU" if self.gpu == "none" else f"GPU {self.gpu}"
        return f"{self.cpu}, {self.cores} cores, {self.memory_gib:g} GiB, {gpu}, {self.os}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                name = line.split(":", 1)[1].strip()
                if name:
                    return " ".join(name.split())
    except OSError:
        pass
    if sys.platform == "darwin":
        try:
            return subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True,
                                  timeout=5).stdout.strip() or platform.machine()
        except (OSError, subprocess.SubprocessError):
            pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _memory_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return 0.0


def _gpu() -> str:
    """The NVIDIA GPUs ``nvidia-smi`` lists, else the driver's view of them, else ``none`` (no import of torch)."""
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "--query-gpu=name,memory.total", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=20)
            names = [" ".join(x.split()) for x in out.stdout.splitlines() if x.strip()]
            if out.returncode == 0 and names:
                return "; ".join(names)
        except (OSError, subprocess.SubprocessError):
            pass
    names = []
    for info in sorted(Path("/proc/driver/nvidia/gpus").glob("*/information")):
        try:
            for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("Model:"):
                    names.append(line.split(":", 1)[1].strip())
        except OSError:
            continue
    return "; ".join(names) if names else "none"


@functools.lru_cache(maxsize=1)
def machine() -> Machine:
    """This machine, detected once per process."""
    return Machine(cpu=_cpu_model(), cores=_cores(), memory_gib=_memory_gib(), gpu=_gpu(),
                   os=f"{platform.system()} {platform.release()} {platform.machine()}".strip())


def command(argv: Sequence[str] | None = None, *, env: Sequence[str] = (),
            variables: Sequence[str] = ("LEGALRAG_DATA",)) -> str:
    """The command line that ran this process, as one would type it from the repository root:
    ``python bench/area/script.py --flag value`` (the script's path relative to the working directory when it
    lies below it). ``env`` names environment variables to show before it (``LEGALRAG_HOME=...``); the value of
    each variable of ``variables`` that is set is written as ``$NAME`` (the shared data folder)."""
    args = list(sys.argv if argv is None else argv)
    if args:
        script = Path(args[0])
        try:
            args[0] = str(script.resolve().relative_to(Path.cwd().resolve()))
        except (ValueError, OSError):
            pass
    prefix = [f"{name}={shlex.quote(os.environ[name])}" for name in env if name in os.environ]
    line = " ".join(prefix + ["python", shlex.join(args)]) if args else " ".join(prefix + ["python"])
    for name in variables:
        value = os.environ.get(name)
        if value and len(value) > 1:
            line = line.replace(value, f"${name}")
    return line


_this_command = command  # write_result's parameter of the same name hides it there


def paired(a: Sequence[float], b: Sequence[float], *, trials: int = 10_000, seed: int = 0,
           digits: int | None = 4) -> dict[str, Any]:
    """Per-item values of two configurations on the same items: the means, ``a - b`` and the two-sided paired
    randomization test's p-value (:func:`legalrag.evaluation.compare.paired_randomization_test`)."""
    from legalrag.evaluation.compare import paired_randomization_test

    if len(a) != len(b):
        raise InputError(f"paired: a has {len(a)} values and b {len(b)}; give one value of each per item, "
                         "in the same order", field="b")
    if not a:
        raise InputError("paired: no values; give at least one item measured in both configurations", field="a")
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    p = paired_randomization_test(a, b, trials=trials, seed=seed)

    def r(x: float) -> float:
        return round(x, digits) if digits is not None else x

    return {"n": len(a), "a": r(mean_a), "b": r(mean_b), "a_minus_b": r(mean_a - mean_b), "p": r(p)}


def paired_tests(before: Mapping[str, Mapping[str, Any]], after: Mapping[str, Mapping[str, Any]],
                 metrics: Sequence[str], *, value: Callable[[Mapping[str, Any], str], float | None] | None = None,
                 trials: int = 10_000, seed: int = 0) -> dict[str, Any]:
    """Two runs as item id -> row: for each metric, the items both runs measured (a value of None is not
    measured), the means ``before`` and ``after`` and the paired test's p-value; None for a metric no shared
    item has. ``value(row, metric)`` reads a metric (default: ``row[metric]``)."""
    read = value or (lambda row, m: None if row.get(m) is None else float(row[m]))
    ids = sorted(set(before) & set(after))
    out: dict[str, Any] = {"n": len(ids)}
    for m in metrics:
        pairs = [(read(before[i], m), read(after[i], m)) for i in ids]
        pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
        if not pairs:
            out[m] = None
            continue
        xs, ys = zip(*pairs)
        t = paired(ys, xs, trials=trials, seed=seed)
        out[m] = {"n": t["n"], "before": t["b"], "after": t["a"], "p": t["p"]}
    return out


def shown_path(path: str | os.PathLike) -> str:
    """A path as a results file shows it: relative to the working folder (the repository root) when inside it,
    else its name alone; no machine's path is recorded."""
    p = Path(path).resolve()
    try:
        return str(p.relative_to(Path.cwd().resolve()))
    except ValueError:
        return p.name


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile (0..100) of ``values``: a measured value, never an interpolation."""
    if not values:
        raise InputError("percentile of no values; measure at least one", field="values")
    xs = sorted(values)
    return xs[min(len(xs) - 1, max(0, round(q / 100 * (len(xs) - 1))))]


def write_result(path: str | os.PathLike, metrics: Mapping[str, Any] | None = None, *, name: str, command: str | None = None,
                 data: str | None = None, machine_note: str | None = None, date: str | None = None,
                 paired: Mapping[str, Mapping[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
    """Write ``path`` (a ``bench/results/*.json``) atomically: ``name``, ``command`` (default: this process's,
    :func:`command`), ``machine`` (the detected machine's line, then ``machine_note``), ``machine_detail``,
    ``date`` (today, UTC), ``data``, ``metrics`` (omitted when None: a file whose results page rows read
    top-level fields), ``paired`` (tests from :func:`paired` / :func:`paired_tests`)
    and any further ``fields`` (``page``, ``source``, ``note``...). Returns what it wrote."""
    import json

    from legalrag.io import atomic_write_text

    if not name:
        raise InputError("write_result needs name=: what the figures measure, in one line", field="name")
    if metrics is not None and not isinstance(metrics, Mapping):
        raise InputError(f"metrics must be a mapping of figures, got {type(metrics).__name__}", field="metrics")
    here = machine()
    result: dict[str, Any] = {
        "name": name,
        "command": command if command is not None else _this_command(),
        "machine": here.describe() + (f"; {machine_note}" if machine_note else ""),
        "machine_detail": here.to_dict(),
        "date": date or datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
    }
    if data is not None:
        result["data"] = data
    if metrics is not None:
        result["metrics"] = dict(metrics)
    if paired:
        result["paired"] = dict(paired)
    for key, value in fields.items():
        if key in result:
            raise InputError(f"write_result: {key}= is set by the helper; drop it", field=key)
        result[key] = value
    atomic_write_text(path, json.dumps(result, ensure_ascii=False, indent=1) + "\n")
    return result
