"""``Root.index``, the one way a command opens an index: a directory, the saved ``index.path``, the shipped
national law when neither is given, the sample's demo index; and ``Root(encoder=...)`` standing in for every
dense component's encoder."""

from __future__ import annotations

import pytest

from legalrag.corpora.statutes import load_statutes
from legalrag.demo import SAMPLE_FILE, sample_path
from legalrag.errors import InputError
from legalrag.retrieval.index import ComponentSpec
from legalrag.settings import load_settings
from legalrag.testing import FakeEncoder
from legalrag.types import Document
from legalrag.wiring import Root

DOCS = [Document("1", "劳动合同应当以书面形式订立。", "劳动合同法 第十条"),
        Document("2", "离婚后，子女由父母双方抚养。", "民法典 第一千零八十四条"),
        Document("3", "出租人应当退还押金。", "民法典 第七百零三条")]


def settings(tmp_path, **env):
    return load_settings(env={"LEGALRAG_CONFIG": str(tmp_path / "none.toml"), "LEGALRAG_HOME": str(tmp_path / "home"),
                              **env})


def test_a_path_opens_that_index_and_the_saved_one_is_the_default(tmp_path):
    Root(settings=settings(tmp_path)).build_index(tmp_path / "idx", DOCS, ["bm25"], lang="zh")
    opened = Root(settings=settings(tmp_path)).index(tmp_path / "idx")
    assert opened.names == ["bm25"] and [d.id for d in opened.documents] == ["1", "2", "3"]
    saved = Root(settings=settings(tmp_path, LEGALRAG_INDEX=str(tmp_path / "idx"))).index()
    assert saved.path == opened.path
    assert saved.retriever("bm25").retrieve("押金", k=1)[0].id == "3"


def test_the_demo_index_is_the_statute_sample_kept_under_the_home_folder(tmp_path):
    idx = Root(settings=settings(tmp_path)).index(demo=True)
    assert idx.path == tmp_path / "home" / "demo-index"
    assert SAMPLE_FILE in idx.manifest["corpus"]["source"]
    assert len(list(idx.documents)) == len(list(load_statutes(sample_path())))


def test_no_index_given_or_saved_opens_the_national_law_in_force(national_index, law_in_force, tmp_path):
    from legalrag.retrieval.dated import DatedIndex

    # the fixtures built both through the composition root, beside $LEGALRAG_NATIONAL_INDEX
    again = Root(settings=settings(tmp_path)).index()
    assert isinstance(again, DatedIndex) and again.path == law_in_force.path != national_index.path
    assert again.manifest["corpus"]["source"].startswith("legalrag:versions")
    assert Root(settings=settings(tmp_path)).index(as_of="2020-01-01").day == "2020-01-01"
    snap = Root(settings=settings(tmp_path)).index(snapshot=True)  # the benchmarks' corpus
    assert snap.path == national_index.path and snap.manifest["corpus"]["snapshot"] == "2023-06-05"


def test_an_empty_list_of_laws_is_refused_naming_the_field(tmp_path):
    with pytest.raises(InputError, match="laws"):
        Root(settings=settings(tmp_path)).index(laws=[])


def test_a_handed_in_encoder_replaces_the_recorded_one_when_building_and_opening(tmp_path):
    enc = FakeEncoder()
    dense = ComponentSpec("dense", {"encoder": "no-such-encoder"}, name="dense-fake")
    Root(encoder=enc, settings=settings(tmp_path)).build_index(tmp_path / "idx", DOCS, [dense], lang="zh")
    built = enc.calls
    assert built == len(DOCS)
    idx = Root(encoder=enc, settings=settings(tmp_path)).index(tmp_path / "idx")
    assert idx.retriever("dense-fake").retrieve("离婚 子女 抚养", k=1)[0].id == "2"
    assert enc.calls > built, "the query was not encoded by the handed-in encoder"
    with pytest.raises(InputError, match="no-such-encoder"):  # without it, the recorded spec is looked up
        Root(settings=settings(tmp_path)).index(tmp_path / "idx").retriever("dense-fake")
