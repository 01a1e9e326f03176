"""POST /search with ``as_of``: only the versions in force that day, over a BM25 index of the fixture's versions."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from legalrag.laws.reader import read_folder  # noqa: E402
from legalrag.laws.versions import build_library  # noqa: E402
from legalrag.national_versions import version_documents  # noqa: E402
from legalrag.server import ServerSettings, create_app  # noqa: E402
from legalrag.testing import ScriptedLLM  # noqa: E402
from support.paths import REPO  # noqa: E402

MINI = REPO / "tests" / "data" / "laws-2025-mini" / "good"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from legalrag.retrieval.index import build_index, open_index

    lib = build_library(read_folder(MINI), repeal_table=None)
    out = tmp_path_factory.mktemp("asof") / "idx"
    build_index(out, list(version_documents(lib)), retrievers=("bm25",), lang="zh")
    return TestClient(create_app(open_index(out), ScriptedLLM(["unused"]), ServerSettings(rate_limit=0)))


def test_as_of_selects_the_version_in_force(client):
    q = {"query": "有限责任公司的注册资本 全体股东认缴的出资额", "k": 3}
    old = client.post("/search", json={**q, "as_of": "2020-01-01"}).json()["hits"]
    assert old[0]["id"] == "公司法第四条@2018-10-26"
    assert old[0]["metadata"]["law"] == "公司法（2018-10-26版）"  # superseded: marked
    new = client.post("/search", json={**q, "as_of": "2025-01-01"}).json()["hits"]
    assert new[0]["id"] == "公司法第五条@2023-12-29"
    assert all(h["metadata"].get("version") != "2018-10-26" for h in new)


def test_a_date_before_1949_is_a_clear_error(client):
    r = client.post("/search", json={"query": "注册资本", "as_of": "1900-01-01"})
    assert r.status_code in (400, 422) and "1949-10-01" in r.text


def test_a_day_before_the_oldest_version_held_answers_from_it_and_says_so(client):
    q = {"query": "有限责任公司的注册资本 全体股东认缴的出资额", "k": 3}
    out = client.post("/search", json={**q, "as_of": "2000-01-01"}).json()  # 公司法 was adopted in 1993
    assert out["hits"][0]["id"] == "公司法第四条@2018-10-26"
    assert "no version of 公司法 held for 2000-01-01; the oldest held is 2018-10-26 (in force from 2018-10-26)" \
        in out["notes"]
    in_force = client.post("/search", json={**q, "as_of": "2020-01-01"}).json()  # the 2018 text was in force then
    assert in_force["hits"][0]["id"] == "公司法第四条@2018-10-26" and not any("公司法" in n for n in in_force["notes"])
    # before its adoption, the law was not in force: none of its versions answers
    early = client.post("/search", json={**q, "as_of": "1990-01-01"}).json()
    assert all(not h["id"].startswith("公司法") for h in early["hits"])
