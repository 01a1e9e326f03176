"""Versions written as article records and read back; the as-of retrieval filter on those records."""

from __future__ import annotations

import pytest

from legalrag.errors import InputError
from legalrag.laws.reader import read_folder
from legalrag.laws.select import both, has_versions, in_force_filter
from legalrag.laws.store import library_from_records, records
from legalrag.laws.versions import build_library
from legalrag.types import Document
from support.paths import REPO

MINI = REPO / "tests" / "data" / "laws-2025-mini" / "good"


def test_records_round_trip_with_stable_ids():
    lib = build_library(read_folder(MINI), repeal_table=None)
    recs = list(records(lib))
    ids = [r["id"] for r in recs]
    assert len(ids) == len(set(ids)) and "公司法第五条@2023-12-29" in ids and "公司法第四条@2018-10-26" in ids
    again = library_from_records(enumerate(recs, 1))
    assert again.counts()["versions"] == lib.counts()["versions"]
    law = again.law("公司法")
    assert [(v.version, v.in_force_from, v.in_force_until) for v in law.versions] == \
        [(v.version, v.in_force_from, v.in_force_until) for v in lib.law("公司法").versions]
    assert again.law("印花税暂行条例").repealed.by == "印花税法"


def test_a_users_corpus_with_only_versions_gets_its_intervals():
    recs = [{"name": "某法第一条", "content": "旧", "version": "2010-01-01"},
            {"name": "某法第一条", "content": "新", "version": "2020-01-01", "effective": "2020-06-01"}]
    law = library_from_records(enumerate(recs, 1)).law("某法")
    assert [(v.in_force_from, v.in_force_until) for v in law.versions] == [("2010-01-01", "2020-06-01"),
                                                                          ("2020-06-01", None)]
    with pytest.raises(InputError, match="line 2|:2"):
        library_from_records(enumerate([recs[0], {"name": "某法第二条", "content": "x"}], 1), source="mine.jsonl")


def doc(i, start, until=None):
    meta = {"law": "公司法"}
    if start:
        meta.update(in_force_from=start, in_force_until=until)
    return Document(id=str(i), text="x", metadata=meta)


def test_the_as_of_filter_keeps_the_versions_in_force_that_day():
    docs = [doc(1, "2018-10-26", "2024-07-01"), doc(2, "2024-07-01"), doc(3, None)]
    keep = in_force_filter("2020-01-01")
    assert [d.id for d in docs if keep(d)] == ["1", "3"]  # 3 has no versions: kept
    assert [d.id for d in docs if in_force_filter("2024-07-01")(d)] == ["2", "3"]
    assert has_versions(docs) and not has_versions([doc(3, None)])
    only2 = both(in_force_filter("2025-01-01"), lambda d: d.id != "3")
    assert [d.id for d in docs if only2(d)] == ["2"]
    with pytest.raises(InputError, match="1949"):
        in_force_filter("1900-01-01")
