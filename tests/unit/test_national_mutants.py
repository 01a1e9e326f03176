"""The shipped vectors and the default index, pinned where one sample let a wrong value pass: the int8 scale
(symmetric, 127 steps, an all-zero row kept), shipped vectors that do not fit the manifest refused with the file,
no pickle read, the announcement of a first build, the passages looked up by the encoder's own cut, and an
encoder whose passages must come from the shipped vectors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from legalrag.errors import IndexError_, InputError
from legalrag.national import MANIFEST, PrecomputedPassages, dequantise, ensure_index, national_law, quantise
from legalrag.retrieval.index import ComponentSpec
from legalrag.testing import FakeEncoder

from unit.test_national import write_law  # the tiny data set in the shipped layout


def test_the_scale_is_the_largest_magnitude_over_127_and_codes_reach_both_ends():
    codes, scale = quantise(np.array([[0.5, -1.0, 0.25], [2.0, 1.0, -2.0]]))
    assert scale.dtype == np.float32 and codes.dtype == np.int8
    assert np.allclose(scale, [1.0 / 127, 2.0 / 127])
    assert codes.tolist() == [[64, -127, 32], [127, 64, -127]]


def test_an_all_zero_row_keeps_scale_one_and_codes_zero():
    codes, scale = quantise(np.array([[0.0, 0.0], [0.0, 3.0]]))
    assert scale.tolist()[0] == 1.0 and codes[0].tolist() == [0, 0]
    assert np.allclose(dequantise(codes, scale)[0], 0.0)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, (3, 8), elements=st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False)))
def test_codes_stay_within_127_steps_and_round_to_within_half_a_step(v):
    codes, scale = quantise(v)
    assert int(np.abs(codes.astype(np.int32)).max()) <= 127
    back = codes.astype(np.float64) * scale[:, None].astype(np.float64)
    assert np.all(np.abs(back - v) <= scale[:, None] * 0.5 + 1e-6 * np.maximum(1.0, np.abs(v)))


def test_float_input_is_quantised_in_float32():
    codes, scale = quantise([[1, 2, 3]])  # a list of ints works too
    assert codes.tolist() == [[42, 85, 127]] and scale.dtype == np.float32


def test_shipped_vectors_that_do_not_fit_the_manifest_are_refused_with_the_file(tmp_path):
    enc = FakeEncoder(dimension=16)
    law = write_law(tmp_path / "data", enc)
    codes_file = law.path / law.manifest["vectors"]["codes"]
    np.save(codes_file, np.load(codes_file)[:-1], allow_pickle=False)  # one row short of the articles
    with pytest.raises(InputError) as err:
        law.vectors()
    assert err.value.path == str(codes_file)
    assert f"for {law.manifest['n_articles']} articles" in str(err.value) and "restore it" in str(err.value)
    assert "shape (4, 16), scales (5,)" in str(err.value)


def test_scales_of_another_length_than_the_codes_are_refused(tmp_path):
    enc = FakeEncoder(dimension=16)
    law = write_law(tmp_path / "data", enc)
    scales_file = law.path / law.manifest["vectors"]["scales"]
    np.save(scales_file, np.load(scales_file)[:-1], allow_pickle=False)
    with pytest.raises(InputError, match=r"scales \(4,\)"):
        law.vectors()


def test_vectors_of_one_dimension_are_refused(tmp_path):
    enc = FakeEncoder(dimension=16)
    law = write_law(tmp_path / "data", enc)
    codes_file = law.path / law.manifest["vectors"]["codes"]
    np.save(codes_file, np.zeros(law.manifest["n_articles"], dtype=np.int8), allow_pickle=False)
    with pytest.raises(InputError, match="shipped vectors have shape"):
        law.vectors()


@pytest.mark.parametrize("which", ["codes", "scales"])
def test_a_pickled_vector_file_is_not_loaded(tmp_path, which):
    enc = FakeEncoder(dimension=16)
    law = write_law(tmp_path / "data", enc)
    target = law.path / law.manifest["vectors"][which]
    np.save(target, np.array([{"a": 1}] * law.manifest["n_articles"], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="allow_pickle"):
        law.vectors()


def test_a_first_build_is_announced_with_the_title_and_article_count(tmp_path):
    enc = FakeEncoder(dimension=16)
    law = write_law(tmp_path / "data", enc)
    said: list[str] = []
    seen: list = []

    def factory(spec, **_):
        seen.append(spec)
        return enc

    components = lambda: ["bm25", ComponentSpec("dense", {"encoder": "fake"}, name="dense-fake"), "hybrid"]  # noqa: E731
    ensure_index(tmp_path / "idx", law, components, factory, announce=said.append)
    assert said == [f"building the default index of test law once (5 articles; about a minute) into {tmp_path / 'idx'}"]
    assert seen[0] == "fake"  # the encoder the shipped vectors belong to
    said.clear()
    ensure_index(tmp_path / "idx", law, components, factory, announce=said.append)
    assert said == []  # opened, not built again


def test_passages_are_looked_up_by_the_encoders_cut(tmp_path):
    """The shipped vectors are keyed by each passage as the dense component cuts it (``max_chars``): a long
    article still finds its vector."""
    enc = FakeEncoder(dimension=16)
    long_text = "盗窃公私财物，数额较大的，处三年以下有期徒刑。" * 60  # longer than the default cut
    law = write_law(tmp_path / "data", enc, articles=[(0, "中华人民共和国刑法第二百六十四条", long_text),
                                                     (1, "劳动合同法第八十二条", "应当向劳动者每月支付二倍的工资。")])
    index = ensure_index(tmp_path / "idx", law,
                         lambda: [ComponentSpec("dense", {"encoder": "fake"}, name="dense-fake")],
                         lambda spec, **_: enc)
    assert index.retriever("dense-fake").retrieve("盗窃公私财物", k=1)[0].document.title.endswith("第二百六十四条")


class _Encoder(FakeEncoder):
    trained = True


def test_precomputed_passages_keep_the_encoders_identity_and_send_queries_to_it():
    enc = _Encoder(dimension=4)
    plain = PrecomputedPassages(FakeEncoder(dimension=4), {})
    shipped = PrecomputedPassages(enc, {"甲": np.ones(4, dtype=np.float64)})
    assert shipped.trained is True and plain.trained is False
    assert shipped.model_id == enc.model_id and shipped.dimension == 4
    assert np.allclose(shipped.encode_queries(["盗窃"]), enc.encode_queries(["盗窃"]))
    got = shipped.encode_documents(["甲", "甲"])
    assert got.dtype == np.float32 and got.shape == (2, 4)


def test_a_passage_without_a_shipped_vector_is_refused_naming_how_many_and_the_first():
    shipped = PrecomputedPassages(FakeEncoder(dimension=4), {"甲": np.ones(4)})
    first = "没有向量的第一段" * 10
    with pytest.raises(IndexError_) as err:
        shipped.encode_documents(["甲", first, "乙"])
    assert str(err.value) == (f"2 passages have no shipped vector (first: {first[:40]!r}); the corpus and the "
                              "vectors do not belong together")


def test_a_manifest_that_is_not_json_is_refused_with_its_path(tmp_path):
    (tmp_path / MANIFEST).write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError) as err:
        national_law(tmp_path)
    assert err.value.path == str(tmp_path / MANIFEST)
