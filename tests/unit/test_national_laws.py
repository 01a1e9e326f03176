"""The shipped versions of the national law (data/cn-law/laws.*): present with their hashes, within the size
budget, readable as versions, and giving the amended mark of the Company Law's 第二十六条 as of 2022."""

from __future__ import annotations

import json

import pytest

from legalrag.io import sha256_file
from legalrag.national import national_law
from legalrag.national_versions import LAWS, LAWS_MANIFEST, law_library


@pytest.fixture(scope="module")
def law():
    law = national_law()
    if law is None or not (law.path / LAWS_MANIFEST).is_file():
        pytest.skip("the shipped versions (data/cn-law/laws.*) are not in this install; tools/build_laws_data.py")
    return law


def test_files_match_their_hashes_and_the_budget(law):
    m = json.loads((law.path / LAWS_MANIFEST).read_text(encoding="utf-8"))
    for name, digest in m["files_sha256"].items():
        assert sha256_file(law.path / name) == digest, name
    total = sum(p.stat().st_size for p in law.path.iterdir() if p.is_file())
    assert total < 45_000_000  # the install-size budget of the national data, the versions included


def test_the_company_law_has_two_versions_and_the_trap_is_marked(law):
    from legalrag.citecheck.currency import currency

    lib = law_library(law=law)
    assert [v.version for v in lib.law("公司法").versions] == ["2018-10-26", "2023-12-29"]
    c = currency(lib, "中华人民共和国公司法", "26", "2022-06-01", today="2025-04-19")
    assert (c.status, c.new_article) == ("amended", "47") and "五年内缴足" in c.text_now
    crim = lib.law("刑法")
    assert [v.version for v in crim.versions] == ["2020-12-26", "2023-12-29"]
    assert crim.as_of("2023-06-01").version.article("165").text != crim.as_of("2024-06-01").version.article("165").text
    assert LAWS in m_files(law)


def m_files(law):
    return json.loads((law.path / LAWS_MANIFEST).read_text(encoding="utf-8"))["files_sha256"]
