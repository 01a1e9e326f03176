"""An index read as of a day (retrieval.dated): only the versions in force answer, through every component
(BM25, dense, their hybrid); a day before a law's oldest version reads that oldest; an index without versions is
left as it is; the view shares what the index loaded; bad dates are refused naming ``as_of``."""

from __future__ import annotations

import pytest

from legalrag.errors import InputError
from legalrag.retrieval.dated import DatedIndex, dated, undated
from legalrag.retrieval.index import ComponentSpec
from legalrag.retrieval.pipeline import build_pipeline, law_filter
from legalrag.testing import FakeEncoder
from legalrag.types import Document
from legalrag.wiring import Root

OLD = "有限责任公司的注册资本为在公司登记机关登记的全体股东认缴的出资额。"
NEW = "有限责任公司的注册资本为在公司登记机关登记的全体股东认缴的出资额。全体股东认缴的出资额由股东按照公司章程的规定自公司成立之日起五年内缴足。"


def version(doc_id: str, text: str, law: str, start: str, until: str | None, oldest: bool, ended: str = "") -> Document:
    return Document(id=doc_id, text=text, title=f"{law}第二十六条", metadata={
        "law": law, "article": "26", "version": start, "in_force_from": start, "in_force_until": until,
        "ended_by": ended, "oldest_held": oldest})


DOCS = [
    version("old", OLD, "公司法（2018-10-26版）", "2018-10-26", "2024-07-01", True, "superseded"),
    version("new", NEW, "公司法", "2024-07-01", None, False),
    Document(id="plain", text="股东应当按期足额缴纳公司章程中规定的各自所认缴的出资额。", title="公司登记管理条例第五条",
             metadata={"law": "公司登记管理条例", "article": "5"}),  # no versions: always kept
]
COMPONENTS = ["bm25", ComponentSpec("dense", {"encoder": "fake"}, name="dense-fake"), "hybrid"]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root, path = Root(encoder=FakeEncoder()), tmp_path_factory.mktemp("dated") / "idx"
    root.build_index(path, DOCS, COMPONENTS, lang="zh")
    return root.index(path)


def ids(index, name, query="有限责任公司 股东 认缴的出资额", **kw):
    return {h.document.id for h in index.retriever(name).retrieve(query, k=5, **kw)}


@pytest.mark.parametrize("name", ["bm25", "dense-fake", "hybrid"])
def test_each_component_answers_from_the_versions_in_force(index, name):
    assert isinstance(index, DatedIndex)  # Root.index reads an index of versions as of today
    assert ids(undated(index), name) == {"old", "new", "plain"}
    assert ids(dated(index, "2020-01-01"), name) == {"old", "plain"}
    assert ids(dated(index, "2024-07-01"), name) == {"new", "plain"}  # the day the new version takes effect
    assert ids(index, name) == {"new", "plain"}
    assert ids(dated(index, "2000-01-01"), name) == {"old", "plain"}  # before the oldest held: the oldest


def test_a_caller_filter_still_applies_and_the_view_shares_the_loaded_components(index):
    old = dated(index, "2020-01-01")
    flt = law_filter(old, ["公司登记管理条例"])
    assert {h.document.id for h in build_pipeline(old).search("股东 出资额", k=5, filter=flt)} == {"plain"}
    assert old.retriever("bm25").inner is undated(index).retriever("bm25")
    assert old.documents is undated(index).documents and old.get("new").metadata["law"] == "公司法"
    # the same day twice reads the same masks: repeated searches agree
    assert ids(old, "dense-fake") == ids(old, "dense-fake") == {"old", "plain"}


def test_an_index_without_versions_is_returned_as_it_is(tmp_path):
    root = Root(encoder=FakeEncoder())
    plain = root.build_index(tmp_path / "plain", DOCS[2:], ["bm25"], lang="zh")
    assert dated(plain, "2020-01-01") is plain
    assert not isinstance(root.index(tmp_path / "plain", as_of="2020-01-01"), DatedIndex)


@pytest.mark.parametrize("day", ["2020-13-01", "yesterday", "1900-01-01"])
def test_a_bad_day_is_refused_naming_as_of(index, day):
    with pytest.raises(InputError) as err:
        dated(index, day)
    assert err.value.field == "as_of"
