"""GET /law/show, GET /law/history and POST /citations/check with ``as_of``, over the fixture's versions (a BM25
index of them, and the same versions handed to the app as its versions): the JSON `legalrag law show|history
--json` prints, the currency mark beside each support mark, and bad input named by its field."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from legalrag.laws.reader import read_folder  # noqa: E402
from legalrag.laws.versions import build_library  # noqa: E402
from legalrag.national_versions import version_documents  # noqa: E402
from legalrag.server import ServerSettings, create_app  # noqa: E402
from support.paths import REPO  # noqa: E402

MINI = REPO / "tests" / "data" / "laws-2025-mini" / "good"
MEMO = "依照《中华人民共和国公司法》第四条的规定，有限责任公司的注册资本为全体股东认缴的出资额。"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from legalrag.retrieval.index import build_index, open_index

    lib = build_library(read_folder(MINI), repeal_table=None)
    out = tmp_path_factory.mktemp("law") / "idx"
    build_index(out, list(version_documents(lib)), retrievers=("bm25",), lang="zh")
    app = create_app(open_index(out), None, ServerSettings(rate_limit=0, mcp=False))
    loads = []
    app.state.context.versions = lambda: loads.append(1) or lib  # the launcher's loader: the fixture's versions
    return TestClient(app), loads


def cli_json(*args: str) -> dict:
    from legalrag.cli import app

    r = CliRunner().invoke(app, [*args, "--laws", str(MINI), "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_law_show_answers_what_the_cli_prints(served):
    client, loads = served
    r = client.get("/law/show", params={"title": "《中华人民共和国公司法》", "as_of": "2020-01-01"})
    assert r.status_code == 200, r.text
    data = r.json()
    assert [(v["version"], v["selected"]) for v in data["versions"]] == [("2018-10-26", True), ("2023-12-29", False)]
    assert data["versions"][0]["in_force_until"] == "2024-07-01" and data["versions"][1]["effective_source"] == "last_article"
    assert data == cli_json("law", "show", "《中华人民共和国公司法》", "--as-of", "2020-01-01")
    early = client.get("/law/show", params={"title": "公司法", "as_of": "2000-01-01"}).json()
    assert early["note"].startswith("no version held for 2000-01-01; the oldest held is 2018-10-26")
    repealed = client.get("/law/show", params={"title": "印花税暂行条例"}).json()
    assert repealed["repealed"]["by"] == "印花税法"
    assert len(loads) == 1  # loaded once per server, on the first request that needs it


def test_law_history_follows_the_article_through_renumbering(served):
    client, _ = served
    data = client.get("/law/history", params={"citation": "公司法第五条"}).json()
    assert [v["article"] for v in data["versions"]] == ["4", "5"]
    assert data["versions"][1]["changed"] and "五年内缴足" in data["versions"][1]["text"]
    assert data == cli_json("law", "history", "公司法第五条")
    old = client.get("/law/history", params={"citation": "公司法第四条", "as_of": "2020-01-01"}).json()
    assert [v["article"] for v in old["versions"]] == ["4", "5"]


@pytest.mark.parametrize("path, params, field, words", [
    ("/law/show", {"title": "不存在的法"}, "title", "no law titled"),
    ("/law/show", {"title": "公司法", "as_of": "1900-01-01"}, "as_of", "1949-10-01"),
    ("/law/show", {"title": "公司法", "as_of": "yesterday"}, "as_of", "not a date"),
    ("/law/history", {"citation": "公司法"}, "citation", "names no article"),
    ("/law/history", {"citation": "不存在的法第一条"}, "citation", "no law titled"),
])
def test_bad_input_is_a_400_naming_the_field(served, path, params, field, words):
    client, _ = served
    r = client.get(path, params=params)
    assert r.status_code == 400 and words in r.json()["error"]["message"]
    assert r.json()["error"]["fields"][0]["field"] == field


def test_a_missing_or_over_long_parameter_is_a_422_naming_it(served):
    client, _ = served
    r = client.get("/law/show")
    assert r.status_code == 422 and r.json()["error"]["fields"][0]["field"] == "title"
    r = client.get("/law/history", params={"citation": "公司法第一条", "as_of": "2020-01-01T00:00"})
    assert r.status_code == 422 and r.json()["error"]["fields"][0]["field"] == "as_of"


def test_check_with_as_of_returns_the_currency_beside_the_support_mark(served):
    client, _ = served
    r = client.post("/citations/check", json={"text": MEMO, "as_of": "2022-03-01"})
    assert r.status_code == 200, r.text
    out = r.json()
    (cit,), (cur,) = out["citations"], out["currency"]
    assert cit["resolved"] and cit["mark"]
    assert cur["status"] == "amended" and cur["label"] == "amended 2023-12-29" and cur["new_article"] == "5"
    assert cur["dated"] is True and "五年内缴足" in cur["text_now"]
    assert "currency" not in client.post("/citations/check", json={"text": MEMO}).json()  # no as_of: as before


def test_check_refuses_a_bad_date_naming_as_of(served):
    client, _ = served
    r = client.post("/citations/check", json={"text": MEMO, "as_of": "1900-01-01"})
    assert r.status_code == 400 and r.json()["error"]["fields"][0]["field"] == "as_of"


def test_without_versions_the_law_routes_say_so_and_check_still_works(tmp_path):
    from legalrag.errors import InputError
    from legalrag.retrieval.index import build_index, open_index

    lib = build_library(read_folder(MINI), repeal_table=None)
    build_index(tmp_path / "idx", list(version_documents(lib)), retrievers=("bm25",), lang="zh")
    app = create_app(open_index(tmp_path / "idx"), None, ServerSettings(rate_limit=0, mcp=False))

    def none_installed():
        raise InputError("no versions of the national law are installed")

    app.state.context.versions = none_installed
    client = TestClient(app)
    r = client.get("/law/show", params={"title": "公司法"})
    assert r.status_code == 503 and "no versions of the national law" in r.json()["error"]["message"]
    out = client.post("/citations/check", json={"text": MEMO, "as_of": "2022-03-01"}).json()
    assert out["currency"] == [] and len(out["citations"]) == 1
