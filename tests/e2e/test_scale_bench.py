"""The scale benchmark's pieces that decide what is measured: the corpus builder's windows and variants
(deterministic, real text, distinct), the derived vectors, and the cost-against-size plot."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from legalrag.errors import InputError
from legalrag.evaluation.plots import plot_scaling
from legalrag.types import Document

REPO = Path(__file__).resolve().parents[2]
PNG = b"\x89PNG\r\n\x1a\n"


def _load(path):
    name = Path(path).stem
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", REPO / path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def corpus_mod():
    return _load("tools/make_scale_corpus.py")


@pytest.fixture(scope="module")
def bench_mod():
    saved = list(sys.argv)
    try:
        return _load("bench/scale/bench_scale.py")
    finally:
        sys.argv = saved


def test_windows_cover_the_text_with_overlap(corpus_mod):
    text = "".join(chr(0x4E00 + i % 500) for i in range(600))
    wins = list(corpus_mod.windows(text))
    assert [k for k, _ in wins] == [0, 1, 2]
    assert all(len(w) <= corpus_mod.WINDOW for _, w in wins)
    assert wins[1][1] == text[corpus_mod.STRIDE:corpus_mod.STRIDE + corpus_mod.WINDOW]
    assert wins[-1][1].endswith(text[-10:])  # nothing at the end is dropped
    assert list(corpus_mod.windows("短文")) == [(0, "短文")]


def test_variants_are_deterministic_distinct_halves_of_real_passages(corpus_mod):
    base = [Document(str(i), f"第{i}条" + "甲乙丙丁戊己庚辛"[i % 8] * (20 + i)) for i in range(12)]
    one = list(corpus_mod.variants(base, 30))
    two = list(corpus_mod.variants(base, 30))
    assert [d.to_dict() for d in one] == [d.to_dict() for d in two]
    assert len(one) == 30 and len({d.id for d in one}) == 30
    texts = {d.id: d.text for d in base}
    for v in one:
        a, b = v.metadata["parents"]
        assert a != b
        ta, tb = texts[a], texts[b]
        assert v.text == ta[:len(ta) // 2] + tb[len(tb) // 2:]
    assert {d.metadata["variant"] for d in one} == {1, 2, 3}  # rounds over the base, each a new pairing


def test_derived_vectors_are_the_normalised_sum_of_the_parents(bench_mod):
    base = [Document("a", "x"), Document("b", "y")]
    vecs = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    out = bench_mod.derive_vectors(base, vecs, [Document("v1:0", "xy", metadata={"parents": ["a", "b"]})])
    assert np.allclose(out, [[2 ** -0.5, 2 ** -0.5]])
    check = bench_mod.derived_check(base + [Document("v1:0", "xy", metadata={"parents": ["a", "b"]})],
                                    np.vstack([vecs, [[0.6, 0.8]]]).astype(np.float32))
    assert check["derived_vs_real_cosine"]["variants"] == 1
    assert check["derived_vs_real_cosine"]["mean"] == pytest.approx((0.6 + 0.8) * 2 ** -0.5, abs=1e-4)
    with pytest.raises(SystemExit, match="no parents"):
        bench_mod.derive_vectors(base, vecs, [Document("v1:1", "z", metadata={"parents": ["a", "zz"]})])


def test_scaling_plot_draws_lines_with_missing_sizes(tmp_path):
    panels = {"build s": {"flat": {1e4: 1.0, 1e5: 9.0, 1e6: 95.0}, "engine": {1e4: 20.0, 1e5: 210.0}},
              "p50 ms": {"flat": {1e4: 1.6, 1e5: 15.0, 1e6: 160.0}, "engine": {1e4: 30.0, 1e5: 60.0}},
              "peak RSS MiB": {"flat": {1e4: 130.0, 1e6: 4000.0}}}
    out = plot_scaling(panels, tmp_path / "s.png", title="cost")
    assert out.read_bytes()[:8] == PNG
    assert [p.name for p in tmp_path.iterdir()] == ["s.png"]
    with pytest.raises(InputError, match="nothing to plot"):
        plot_scaling({}, tmp_path / "e.png")
