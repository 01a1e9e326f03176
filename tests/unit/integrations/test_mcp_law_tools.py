"""The MCP tools `law_show` and `law_history`, and `check_citations` with `as_of`, driven by the official `mcp`
SDK's client connected in process to `create_mcp_server`, over a BM25 index of the fixture's versions and the
same versions as the tools' versions collaborator."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("mcp")

from legalrag.integrations.mcp_server import create_mcp_server  # noqa: E402
from legalrag.integrations.tools import Collaborators, LegalTools  # noqa: E402
from legalrag.laws.reader import read_folder  # noqa: E402
from legalrag.laws.report import history_report, law_report  # noqa: E402
from legalrag.laws.versions import build_library  # noqa: E402
from legalrag.national_versions import version_documents  # noqa: E402
from support.paths import REPO  # noqa: E402

MINI = REPO / "tests" / "data" / "laws-2025-mini" / "good"
MEMO = "依照《中华人民共和国公司法》第四条的规定，有限责任公司的注册资本为全体股东认缴的出资额。"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from legalrag.retrieval.index import build_index, open_index

    lib = build_library(read_folder(MINI), repeal_table=None)
    out = tmp_path_factory.mktemp("mcp-law") / "idx"
    build_index(out, list(version_documents(lib)), retrievers=("bm25",), lang="zh")
    index = open_index(out)
    return lib, index


def session(server, body):
    from mcp import Client

    async def go():
        async with Client(server) as client:
            return await body(client)

    return asyncio.run(go())


async def call(client, name: str, arguments: dict) -> dict:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def error(client, name: str, arguments: dict) -> str:
    result = await client.call_tool(name, arguments)
    assert result.is_error
    return result.content[0].text


def test_law_tools_answer_the_cli_json_and_check_gives_the_currency(setup):
    lib, index = setup
    server = create_mcp_server(LegalTools(Collaborators(index=lambda: index, versions=lambda: lib)))

    async def body(client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert {"law_show", "law_history", "check_citations"} <= set(listed)
        for name in ("law_show", "law_history", "check_citations"):
            assert "as_of" in listed[name].input_schema["properties"] and listed[name].output_schema
            chinese, english = listed[name].description.split("\n", 1)
            assert any("\u4e00" <= ch <= "\u9fff" for ch in chinese) and english[:1].isupper()

        shown = await call(client, "law_show", {"title": "公司法", "as_of": "2020-01-01"})
        assert shown == law_report(lib, "公司法", "2020-01-01")
        assert [v["selected"] for v in shown["versions"]] == [True, False]
        history = await call(client, "law_history", {"citation": "公司法第五条"})
        assert history == history_report(lib, "公司法第五条")
        assert [v["article"] for v in history["versions"]] == ["4", "5"]

        checked = await call(client, "check_citations", {"text": MEMO, "as_of": "2022-03-01"})
        (cur,) = checked["currency"]
        assert cur["status"] == "amended" and cur["label"] == "amended 2023-12-29" and cur["new_article"] == "5"
        assert checked["citations"][0]["resolved"]
        assert (await call(client, "check_citations", {"text": MEMO}))["currency"] == []

        assert "no law titled '不存在的法'" in await error(client, "law_show", {"title": "不存在的法"})
        assert "1949-10-01" in await error(client, "law_history", {"citation": "公司法第四条", "as_of": "1900-01-01"})
        assert "names no article" in await error(client, "law_history", {"citation": "公司法"})
        assert "1949-10-01" in await error(client, "check_citations", {"text": MEMO, "as_of": "1900-01-01"})
        assert "argument 'title' is missing" in await error(client, "law_show", {})

    session(server, body)


def test_without_versions_the_law_tools_say_what_is_missing(setup):
    _, index = setup
    server = create_mcp_server(LegalTools(Collaborators(index=lambda: index, versions=None)))

    async def body(client):
        assert "need the versions of the national law" in await error(client, "law_show", {"title": "公司法"})
        assert "need the versions" in await error(client, "check_citations", {"text": MEMO, "as_of": "2022-03-01"})
        assert (await call(client, "check_citations", {"text": MEMO}))["citations"]  # without as_of: as before

    session(server, body)
