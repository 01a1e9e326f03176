"""Versions written as article records and read back; the as-of retrieval filter on those records."""

from __future__ import annotations

import pytest

from legalrag.errors import InputError
from legalrag.laws.reader import read_folder
from legalrag.laws.select import both, has_versions, held_notes, in_force_filter
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


def test_records_carry_the_day_a_law_was_adopted_and_a_day_before_its_oldest_text_reads_it_only_if_then_in_force():
    lib = build_library(read_folder(MINI), repeal_table=None)
    again = library_from_records(enumerate(records(lib), 1))
    assert again.law("公司法").enacted == "1993-12-29" and again.law("公司法").original_held is False
    assert again.law("民法典").enacted == "2020-05-28" and again.law("民法典").original_held is True
    # a user's corpus that does not say when its laws were adopted: the oldest version answers, as before
    bare = library_from_records(enumerate([{"name": "某法第一条", "content": "旧", "version": "2010-01-01"}], 1))
    assert bare.law("某法").enacted is None and bare.law("某法").in_force_before_held("2000-01-01") is None

    def held(i, law, start, enacted, original):
        return Document(id=str(i), text="x", title=f"{law}第一条", metadata={
            "law": law, "in_force_from": start, "oldest_held": True, "version": start, "enacted": enacted,
            "original": original})

    docs = [held(1, "公司法（2018-10-26版）", "2018-10-26", "1993-12-29", False),  # an older text, not held
            held(2, "中华人民共和国民法典", "2021-01-01", "2020-05-28", True),  # its first text: not yet in force
            held(3, "某规定", "2024-07-01", "2024-07-01", True),  # adopted after the day
            held(4, "某法", "2010-01-01", None, None)]  # not known: the oldest answers
    keep = in_force_filter("2020-01-01")
    assert [d.id for d in docs if keep(d)] == ["1", "4"]
    assert [d.id for d in docs if in_force_filter("1990-01-01")(d)] == ["4"]  # 公司法 was adopted in 1993
    assert [d.id for d in docs if in_force_filter("2000-01-01")(d)] == ["1", "4"]
    assert held_notes(docs[:1] + docs[3:], "2000-01-01") == (
        "no version of 公司法 held for 2000-01-01; the oldest held is 2018-10-26 (in force from 2018-10-26)",
        "no version of 某法 held for 2000-01-01; the oldest held is 2010-01-01 (in force from 2010-01-01)")
    assert held_notes(docs, "2025-01-01") == ()  # every version answering was in force that day
