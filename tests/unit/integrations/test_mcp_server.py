"""The MCP server end to end, driven by the official `mcp` SDK's own client.

`python -m legalrag mcp` runs as a subprocess over stdio with a BM25 index of the bundled statute sample, a
citation model learned from toy citation sets, a judgment structure model trained on the tiny labelled cases of
`test_judgment_structure`, and, for `ask`, a model behind a local 127.0.0.1 server in the OpenAI wire format
(`legalrag llm serve`'s app over a scripted model that cites one real and one non-existent article). The client
lists the tools and calls each on that data. The same tools over streamable HTTP at /mcp of `legalrag serve`'s
app, behind its API key."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp")
pytest.importorskip("fastapi")

from support.http_app import serve_app  # noqa: E402
from support.server_setup import ANSWER, MISSING, REAL, REAL_ID, reply, sample_index, sample_structure  # noqa: E402

from legalrag.testing import ScriptedLLM  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
TOOLS = {"search_statutes", "get_article", "check_citations", "predict_citations", "predict_verdict", "ask"}
THEFT = "公诉机关指控：被告人王某在商场盗窃手机一部，价值人民币5000元。被告人王某到案后如实供述。"
KEY = "mcp-test-key-0123456789abcdef"
# a supported citation, a repealed law (its successor named), a Swiss citation (no corpus) and an invented article
MARKED = ("用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资（《劳动合同法》"
          f"第八十二条）。合同无效的情形见《中华人民共和国合同法》第五十二条。另见 Art. 8 Abs. 1 BV。{MISSING}另有规定。")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """The index, the citation and structure model directories, the statute file, and the scripted endpoint."""
    from legalrag.citepredict.cocitation import CoCitationGraph
    from legalrag.citepredict.data import load_citation_sets
    from legalrag.citepredict.model import save_model
    from legalrag.citepredict.pipeline import CiteConfig
    from legalrag.citepredict.rules import learn_rules
    from legalrag.llm.serve import create_llm_app as model_server
    from unit.judgment.test_structure import STATUTES

    root = tmp_path_factory.mktemp("mcp")
    index = sample_index(root / "idx")
    labour = [d.id for d in index.documents if d.metadata.get("law") == "劳动合同法"][:12]
    rows = [{"id": f"d{i}", "cited": [labour[i % 6], labour[(i + 1) % 6], REAL_ID]} for i in range(12)]
    (root / "sets.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    sets = load_citation_sets(root / "sets.jsonl")
    save_model(root / "cite", learn_rules(sets, min_support=2), CoCitationGraph.build(sets),
               CiteConfig(seen_only=False, core_k=2))
    structure = sample_structure()
    if structure is None:
        pytest.skip("lightgbm is not installed (pip install 'legalrag[dense]')")
    structure.save(root / "structure")
    (root / "statutes.jsonl").write_text("".join(json.dumps({"id": d.id, "name": d.title, "content": d.text},
                                                            ensure_ascii=False) + "\n" for d in STATUTES),
                                         encoding="utf-8")
    llm = ScriptedLLM(reply)
    with serve_app(model_server(llm, model_name="scripted")) as url:
        yield {"root": root, "index": index, "endpoint": url + "/v1", "llm": llm}


def server_params(setup):
    from mcp import StdioServerParameters

    root = setup["root"]
    env = {"PYTHONPATH": str(REPO / "src"), "LEGALRAG_HOME": str(root / "home"),
           "LEGALRAG_CONFIG": os.environ["LEGALRAG_CONFIG"], "LEGALRAG_LLM_CACHE": os.environ["LEGALRAG_LLM_CACHE"],
           "LEGALRAG_JUDGMENT_MODEL": str(root / "structure"), "LEGALRAG_LAW_CORPUS": str(root / "statutes.jsonl")}
    return StdioServerParameters(command=sys.executable, env=env, cwd=str(REPO), args=[
        "-m", "legalrag", "mcp", "--index", str(root / "idx"), "--model", setup["endpoint"] + "#scripted",
        "--no-cache", "--cite-model-dir", str(root / "cite")])


async def call(client, name: str, arguments: dict) -> dict:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    # structured content for hosts that read it, the same JSON as text for those that read only text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def error(client, name: str, arguments: dict) -> str:
    result = await client.call_tool(name, arguments)
    assert result.is_error
    return result.content[0].text


def test_stdio_server_lists_and_runs_every_tool(setup):
    from mcp import Client

    async def session():
        async with Client(server_params(setup), read_timeout_seconds=300) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert set(listed) >= TOOLS
            for t in listed.values():  # bilingual descriptions, typed inputs and outputs
                chinese, english = t.description.split("\n", 1)  # a Chinese paragraph, then an English one
                assert any("\u4e00" <= ch <= "\u9fff" for ch in chinese) and english[:1].isupper()
                assert len(english.split()) > 10
                assert t.output_schema and t.input_schema["properties"]
            assert listed["search_statutes"].input_schema["properties"]["k"]["maximum"] == 50

            found = await call(client, "search_statutes", {"query": "用人单位未与劳动者订立书面劳动合同 二倍工资", "k": 3})
            assert len(found["hits"]) == 3 and found["hits"][0]["citation"] == "《劳动合同法》第八十二条"
            article = await call(client, "get_article", {"citation": REAL})
            assert article["id"] == REAL_ID and "书面劳动合同" in article["text"]
            assert "has no article 999" in await error(client, "get_article", {"citation": MISSING})

            checked = await call(client, "check_citations", {"text": MARKED})
            assert [c["mark"] for c in checked["citations"]] == ["supported", "repealed", "no_corpus", "not_found"]
            supported, repealed, _, missing = checked["citations"]
            assert supported["document_id"] == "13578" and "应当向劳动者每月支付二倍的工资" in supported["article_text"]
            assert "民法典" in repealed["successor"] and "has no article 999" in missing["mark_text"]
            assert checked["summary"]["supported"] == 1 and checked["not_found"] == 1

            cited = await call(client, "predict_citations", {"facts": "公司一直未与我订立书面劳动合同"})
            assert REAL_ID in {p["id"] for p in cited["provisions"]}
            verdict = await call(client, "predict_verdict", {"facts": THEFT})
            assert verdict["charges"][0]["name"] == "盗窃罪" and "264" in {a["name"] for a in verdict["articles"]}
            assert "盗窃罪" in verdict["result_section"]

            answer = await call(client, "ask", {"question": "公司一直不跟我签书面劳动合同，我可以要求双倍工资吗？"})
            assert answer["answer"].endswith(ANSWER) and answer["basis"] and answer["model"].startswith("scripted") and answer["sources"]
            marks = {c["canonical"]: c["mark"] for c in answer["citations"]}
            assert marks["劳动合同法第九百九十九条"] == "not_found" and answer["not_found"] == 1
            assert marks["劳动合同法第十条"] in ("supported", "exists")

            # wrong or missing arguments: a tool error naming the argument and how to call the tool
            text = await error(client, "search_statutes", {"k": "five"})
            assert "argument 'query' is missing" in text and "argument 'k'" in text and "'five'" in text
            assert "Call search_statutes(query: string (required), k: integer 1..50 = 5)" in text
            assert "'question' is missing" in await error(client, "ask", {})
            assert "less than or equal to 50" in await error(client, "search_statutes", {"query": "合同", "k": 51})

    asyncio.run(session())
    assert len(setup["llm"].requests) == 1  # ask went through the endpoint, once


def test_the_tools_over_streamable_http_on_serve(setup):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from legalrag.server import ServerSettings, create_app

    app = create_app(setup["index"], ScriptedLLM(reply), ServerSettings(rate_limit=0, api_keys=(KEY,)))

    async def session(url: str, key: str):
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}) as http:
            async with Client(streamable_http_client(url + "/mcp", http_client=http)) as client:
                assert {t.name for t in (await client.list_tools()).tools} >= TOOLS
                checked = await call(client, "check_citations", {"text": f"{REAL}；{MISSING}"})
                assert [c["mark"] for c in checked["citations"]] == ["exists", "not_found"]
                answer = await call(client, "ask", {"question": "不签书面劳动合同怎么办？", "k": 3})
                assert answer["answer"].endswith(ANSWER) and answer["basis"] and len(answer["sources"]) == 3
                assert "predict_citations needs a citation model" in await error(
                    client, "predict_citations", {"facts": "未签劳动合同"})

    with serve_app(app) as url:
        asyncio.run(session(url, KEY))
        # serve's API key applies to /mcp as to every route: the SDK's client fails, and the answer is a 401
        with pytest.raises(Exception, match="unhandled errors"):
            asyncio.run(session(url, "wrong-key-0123456789abcdef"))
        import httpx

        hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        refused = httpx.post(url + "/mcp", json=hello, headers={"Accept": "application/json, text/event-stream"})
        assert refused.status_code == 401 and "needs an API key" in refused.json()["error"]["message"]
