import pytest

from legalrag.io import atomic_dir


def test_atomic_dir_replaces_only_on_success(tmp_path):
    target = tmp_path / "idx"
    with atomic_dir(target) as d:
        (d / "a.json").write_text("1")
    assert (target / "a.json").read_text() == "1"
    with pytest.raises(RuntimeError):
        with atomic_dir(target) as d:
            (d / "a.json").write_text("2")
            raise RuntimeError("boom")
    assert (target / "a.json").read_text() == "1"
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]
