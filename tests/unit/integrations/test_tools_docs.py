"""The examples of docs/integrations.md, run as written: the MCP host's `mcpServers` block (its command and
arguments, the index path pointed at a test index), the MCP SDK example (verbatim; `legalrag` on PATH is this
checkout's CLI) and the OpenAI client example (verbatim but for the server's address and key). The HTTP host
block is marked illustrative in the page: its field names belong to each host."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("openai")
pytest.importorskip("fastapi")

from support.http_app import serve_app  # noqa: E402
from support.server_setup import ANSWER, reply, sample_index  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
PAGE = (REPO / "docs" / "integrations.md").read_text(encoding="utf-8")
KEY = "docs-test-key-0123456789abcdef"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", PAGE, flags=re.S)


@pytest.fixture
def legalrag_on_path(tmp_path, monkeypatch):
    """A `legalrag` command on PATH that runs this checkout's CLI with the tests' settings, a temp home, and the
    statute sample's index saved as the default index (LEGALRAG_INDEX, as `legalrag config set index.path`
    would), so the examples run as written without building the national-law index."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "legalrag"
    sample_index(tmp_path / "idx")
    env = {"PYTHONPATH": str(REPO / "src"), "LEGALRAG_HOME": str(tmp_path / "home"),
           "LEGALRAG_CONFIG": os.environ["LEGALRAG_CONFIG"], "LEGALRAG_LLM_CACHE": os.environ["LEGALRAG_LLM_CACHE"],
           "LEGALRAG_INDEX": str(tmp_path / "idx")}
    shim.write_text("#!/bin/sh\n" + "".join(f"export {k}='{v}'\n" for k, v in env.items())
                    + f"exec '{sys.executable}' -m legalrag \"$@\"\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return tmp_path


def test_the_host_config_block_starts_a_working_server(legalrag_on_path):
    from mcp import Client, StdioServerParameters

    config = json.loads(blocks("json")[0])["mcpServers"]["legalrag"]
    args = [str(legalrag_on_path / "idx") if a == "indexes/stard" else a for a in config["args"]]

    async def session():
        async with Client(StdioServerParameters(command=config["command"], args=args),
                          read_timeout_seconds=300) as client:
            assert len((await client.list_tools()).tools) == 8
            found = await client.call_tool("search_statutes", {"query": "试用期", "k": 2})
            assert not found.is_error and len(found.structured_content["hits"]) == 2

    asyncio.run(session())


def test_the_mcp_sdk_example_runs_as_written(legalrag_on_path, capsys):
    code = next(b for b in blocks("python") if "StdioServerParameters" in b)
    exec(compile(code, "docs/integrations.md", "exec"), {"__name__": "__main__"})
    out = capsys.readouterr().out.splitlines()
    assert set(eval(out[0])) == {"search_statutes", "get_article", "check_citations", "predict_citations",
                                 "predict_verdict", "ask", "law_show", "law_history"}
    assert out[1:] == ["exists 劳动合同法第十条", "not_found 劳动合同法第九百九十九条"]


def test_the_openai_example_runs_against_serve(tmp_path, capsys):
    from legalrag.server import ServerSettings, create_app
    from unit.server.test_routes_openai import UsageStreamingLLM

    code = next(b for b in blocks("python") if "from openai import OpenAI" in b)
    app = create_app(sample_index(tmp_path / "idx"), UsageStreamingLLM(reply), ServerSettings(api_keys=(KEY,)))
    with serve_app(app) as url:
        code = code.replace("http://127.0.0.1:8080", url).replace("YOUR-KEY", KEY)
        exec(compile(code, "docs/integrations.md", "exec"), {"__name__": "__main__"})
    out = capsys.readouterr().out
    first, streamed = out.split("ignored: ['temperature']\n")
    assert first.startswith("法律依据：") and ANSWER[:30] in first and "引用核对 / Citations checked:" in first
    assert "not_found 劳动合同法第九百九十九条" in first
    assert streamed.startswith("法律依据：") and ANSWER[:30] in streamed and "✗ 劳动合同法第九百九十九条" in streamed
