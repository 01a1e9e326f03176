"""The HTTP API over a real BM25 index of the bundled statute sample, with the real answer, consultation,
drafting, agents and citation-prediction code; the model is ``legalrag.testing.ScriptedLLM`` (one test uses
the real embedded 0.5B)."""

from __future__ import annotations


import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from legalrag.server import ServerSettings, create_app  # noqa: E402
from support.sse import events
from support.server_setup import INJECTION, MISSING, REAL, REAL_ID, legal_llm, sample_index, sample_predictor  # noqa: E402


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return sample_index(tmp_path_factory.mktemp("srv") / "idx")


@pytest.fixture(scope="module")
def client(index, tmp_path_factory):
    app = create_app(index, legal_llm(), ServerSettings(rate_limit=0),
                     predictor=sample_predictor(index, tmp_path_factory.mktemp("cite")))
    return TestClient(app)




def test_search_returns_ranked_articles_with_terms(client, index):
    r = client.post("/search", json={"query": "用人单位拖欠工资怎么办", "k": 5})
    assert r.status_code == 200
    body = r.json()
    assert [h["rank"] for h in body["hits"]] == [1, 2, 3, 4, 5]
    assert all(h["id"] in index for h in body["hits"])
    assert any("劳动" in h["citation"] for h in body["hits"])
    assert "工资" in body["terms"] and "拖欠" in body["terms"]
    assert client.get("/health").json()["status"] == "ok"
    assert index.default in client.get("/index").json()["components"]


def test_law_filter_and_bad_requests(index):
    client = TestClient(create_app(index, settings=ServerSettings(max_k=20)))
    r = client.post("/search", json={"query": "合同", "k": 5, "laws": ["劳动合同法"]})
    assert r.status_code == 200 and all(h["citation"].startswith("《劳动合同法》") for h in r.json()["hits"])
    r = client.post("/search", json={"query": "合同", "laws": ["刑法"]})
    assert r.status_code == 400 and "no document in the index has law title '刑法'" in r.json()["error"]["message"]
    r = client.post("/search", json={"query": "合同", "k": 500})
    assert r.status_code == 400 and "limit of 20" in r.json()["error"]["message"]
    r = client.post("/search", json={"query": "合同", "k": 10000})
    assert r.status_code == 422 and "k: Input should be less than or equal to 1000" in r.json()["error"]["message"]
    r = client.post("/search", json={"query": ""})
    assert r.status_code == 422 and "query" in r.json()["error"]["message"]
    r = client.post("/search", json={"query": "x", "bogus": 1})
    assert r.status_code == 422 and "bogus: Extra inputs are not permitted" in r.json()["error"]["message"]
    r = client.post("/search", json={"query": "合" * 5000})
    assert r.status_code == 422 and "at most 4000 characters" in r.json()["error"]["message"]
    r = client.post("/search", content=b'{"query": "x",', headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "MalformedJSON"
    r = client.post("/search", json={"query": "合同", "retriever": "dense"})
    assert r.status_code == 400 and "no 'dense' retriever" in r.json()["error"]["message"]
    r = client.get("/no/such/route")
    assert r.status_code == 404 and "/docs" in r.json()["error"]["message"]


def test_documents_laws_and_capabilities(client):
    doc = client.get(f"/documents/{REAL_ID}").json()
    assert doc["citation"] == REAL and doc["text"].startswith("建立劳动关系")
    r = client.get("/documents/nope")
    assert r.status_code == 404 and r.json()["error"]["type"] == "NotFound"
    laws = {law["title"]: law["articles"] for law in client.get("/laws").json()["laws"]}
    assert laws["劳动合同法"] == 98 and sum(laws.values()) == 397
    caps = client.get("/capabilities").json()
    assert caps["features"] == {"search": True, "ask": True, "agents": True, "draft": True, "cite": True,
                                "judgment_structure": False}
    assert "rewrite" in caps["processors"] and caps["retrievers"] == ["bm25"]


def test_citation_check_flags_unresolved(client, index):
    doc = next(d for d in index.documents if d.metadata.get("article"))
    text = f"依照《{doc.metadata['law']}》{doc.metadata['article_label']}、第九千九百九十九条之规定"
    body = client.post("/citations/check", json={"text": text}).json()
    assert [c["resolved"] for c in body["citations"]] == [True, False]
    assert body["citations"][0]["document_id"] == doc.id and body["unresolved"] == 1
    assert "no article" in body["citations"][1]["note"]


def test_ask_checks_every_citation_and_keeps_markup_as_data(client):
    r = client.post("/ask", json={"question": "公司不签劳动合同<script>alert(1)</script>怎么办", "k": 3})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    body = r.json()
    assert INJECTION in body["answer"] and len(body["retrieved"]) == 3
    by_text = {c["text"]: c for c in body["citations"]}
    assert by_text[REAL]["resolved"] and by_text[REAL]["document_id"] == REAL_ID
    assert not by_text[MISSING]["resolved"] and "no article 999" in by_text[MISSING]["note"]
    assert body["unresolved"] == 1 and body["timings"]["queue_s"] >= 0


def test_consultation_carries_the_history_into_the_query(index):
    llm = legal_llm()
    client = TestClient(create_app(index, llm))
    history = [{"role": "user", "content": "试用期工资有什么规定？"}, {"role": "assistant", "content": "见第二十条。"}]
    r = client.post("/consult", json={"question": "那公司不签合同呢？", "history": history,
                                      "processor": "all_questions", "k": 3, "laws": ["劳动合同法"]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["query"] == "试用期工资有什么规定？ 那公司不签合同呢？" and body["processor"] == "all_questions"
    assert all(h["citation"].startswith("《劳动合同法》") for h in body["retrieved"])
    assert "见第二十条。" in llm.last_prompt()  # the history reaches the model
    r = client.post("/consult", json={"question": "x", "history": [{"role": "judge", "content": "y"}]})
    assert r.status_code == 422 and "history.0.role" in r.json()["error"]["message"]


def test_consultation_shows_the_searched_query_and_the_carried_articles(index):
    """The double-wage follow-up: /consult names the query it searched and the earlier articles it carried, and
    the stream sends one `retrieved` event with them (not one per search behind the fused results)."""
    client = TestClient(create_app(index, legal_llm()))
    first = "公司一直不跟我签书面劳动合同，我可以要求公司支付双倍工资吗？"
    history = [{"role": "user", "content": first}, {"role": "assistant", "content": "可以要求。"}]
    request = {"question": "那最多能要几个月？", "history": history, "processor": "carry", "k": 6}
    body = client.post("/consult", json=request).json()
    assert body["query"] == "那最多能要几个月？" and body["searched"] == ["那最多能要几个月？", f"{first} 那最多能要几个月？"]
    assert "劳动合同法第八十二条" in [c["title"] for c in body["carried"]]
    assert body["follow_up"]["same_issue"] is True and body["processor"] == "carry"
    assert any(h["citation"] == "《劳动合同法》第八十二条" for h in body["retrieved"])
    seq = events(client.post("/consult/stream", json=request).text)
    retrieved = [data for name, data in seq if name == "retrieved"]
    assert len(retrieved) == 1 and retrieved[0]["query"] == "那最多能要几个月？"
    assert [c["title"] for c in retrieved[0]["carried"]] == [c["title"] for c in body["carried"]]
    assert seq[-1][1]["carried"] == body["carried"]


def test_consultation_stream_sends_retrieval_tokens_then_the_answer(client):
    r = client.post("/consult/stream", json={"question": "公司不签劳动合同怎么办", "k": 2})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    seq = events(r.text)
    names = [name for name, _ in seq]
    assert names[0] == "started" and names[1] == "retrieved" and names[-1] == "done" and "token" in names
    streamed = "".join(data["text"] for name, data in seq if name == "token")
    done = seq[-1][1]
    assert streamed == done["answer"] and len(done["retrieved"]) == 2
    assert streamed.startswith("法律依据：") and len(done["basis"]) == 2  # the quoted basis streams first
    # the basis's two articles, then the answer's own citations: the real one and the invented one
    assert [c["resolved"] for c in done["citations"]] == [True, True, True, False]


def test_agents_search_returns_the_planner_trajectory(client):
    body = client.post("/agents/search", json={"query": "公司不签合同能要双倍工资吗", "k": 5}).json()
    actions = [(s["agent"], s["action"]) for s in body["trajectory"]]
    assert ("planner", "single_element") in actions and ("single_element", "rewrite") in actions
    assert body["summary"]["reformulations"] == ["用人单位 未订立 书面劳动合同 二倍工资"]
    assert body["summary"]["rounds"] == 1 and len(body["hits"]) == 5


def test_draft_stream_and_citation_prediction(client):
    seq = events(client.post("/draft/stream", json={"facts": "被告人张某盗窃他人手机一部，价值三千元。"}).text)
    done = seq[-1][1]
    assert seq[-1][0] == "done" and "判处有期徒刑六个月" in done["sections"]["result"]
    assert done["citations"][0]["canonical"] == "中华人民共和国刑法第二百六十四条"
    assert not done["citations"][0]["resolved"]  # the sample has no criminal law: flagged, not dropped
    body = client.post("/cite", json={"facts": "公司一直未与我订立书面劳动合同"}).json()
    by_id = {p["id"]: p for p in body["provisions"]}
    assert REAL_ID in by_id and by_id[REAL_ID]["citation"] == REAL
    assert {v["stage"] for p in body["provisions"] for v in p["provenance"]} >= {"always-add", "retrieval"}


def test_without_a_model_generation_is_503_and_search_works(index):
    client = TestClient(create_app(index))
    for path, body in [("/ask", {"question": "试用期多长？"}), ("/consult", {"question": "试用期多长？"}),
                       ("/consult/stream", {"question": "试用期多长？"}), ("/draft", {"facts": "盗窃"}),
                       ("/draft/stream", {"facts": "盗窃"}), ("/agents/search", {"query": "试用期"}),
                       ("/cite", {"facts": "盗窃"})]:
        r = client.post(path, json=body)
        assert r.status_code == 503, path
        assert "search and citation checks still work" in r.json()["error"]["message"] or path == "/cite"
    assert client.post("/search", json={"query": "试用期"}).status_code == 200
    assert client.get("/capabilities").json()["features"]["ask"] is False


def test_an_unreachable_model_is_a_clear_503(index):
    from legalrag.llm.openai_compat import OpenAICompatLLM
    from support.http_app import free_port

    llm = OpenAICompatLLM(f"http://127.0.0.1:{free_port()}/v1", "absent", api_key_env=None, max_retries=0, timeout=2)
    client = TestClient(create_app(index, llm))
    r = client.post("/ask", json={"question": "试用期多长？", "k": 2})
    assert r.status_code == 503 and r.json()["error"]["type"] == "LLMUnavailable"
    assert "Traceback" not in r.text
    seq = events(client.post("/consult/stream", json={"question": "试用期多长？", "k": 2}).text)
    assert seq[-1][0] == "error" and seq[-1][1]["error"]["type"] == "LLMUnavailable"
    assert client.post("/search", json={"query": "试用期"}).status_code == 200


def test_an_internal_failure_says_so_without_a_stack_trace(index, caplog):
    from legalrag.testing import ScriptedLLM

    def broken(request):
        raise RuntimeError("secret detail in /srv/app.py")

    client = TestClient(create_app(index, ScriptedLLM(broken)), raise_server_exceptions=False)
    r = client.post("/ask", json={"question": "试用期多长？"})
    assert r.status_code == 500 and r.json()["error"]["type"] == "InternalError"
    assert "secret" not in r.text and "Traceback" not in r.text
    assert any(rec.exc_info and "secret detail" in str(rec.exc_info[1]) for rec in caplog.records)  # logged here


def test_openapi_schema_and_offline_docs_page(client):
    schema = client.get("/openapi.json").json()
    for path in ("/search", "/ask", "/ask/stream", "/consult/stream", "/draft/stream", "/cite", "/agents/search"):
        assert path in schema["paths"]
    body = schema["components"]["schemas"]["SearchBody"]
    assert body["additionalProperties"] is False and body["properties"]["k"]["maximum"] == 1000
    page = client.get("/docs")
    assert page.status_code == 200 and "/static/docs.js" in page.text and "cdn" not in page.text.lower()
    for name in ("/", "/search.html", "/draft.html", "/cite.html"):
        html = client.get(name).text
        assert "<script>" not in html and "http" not in html.replace("http-equiv", "")  # no inline script, no CDN


@pytest.mark.llm
def test_ask_answers_with_checked_citations(index, small_llm):
    r = TestClient(create_app(index, small_llm)).post(
        "/ask", json={"question": "劳动合同的试用期最长可以约定多久？", "k": 3, "max_tokens": 96})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["answer"].strip()
    assert len(body["retrieved"]) == 3
    for c in body["citations"]:  # every citation is reported with its check, resolved or not
        assert isinstance(c["resolved"], bool)
        if c["resolved"]:
            assert c["document_id"] in index


def test_a_trained_policy_runs_the_agents_search_apart_from_answers(index):
    """``agents_llm`` (what `legalrag serve --policy DIR` passes) drives /agents/search; answers keep ``llm``,
    here none, so they stay 503 while the agents search works."""
    policy = legal_llm()
    client = TestClient(create_app(index, None, ServerSettings(rate_limit=0), agents_llm=policy))
    caps = client.get("/capabilities").json()
    assert caps["features"]["agents"] is True and caps["features"]["ask"] is False
    assert caps["agents_llm"] == policy.model_id and caps["llm"] is None
    body = client.post("/agents/search", json={"query": "公司不签合同能要双倍工资吗", "k": 5}).json()
    assert body["summary"]["reformulations"] == ["用人单位 未订立 书面劳动合同 二倍工资"]
    assert policy.requests and all(r.json_schema for r in policy.requests)  # planner and rewriter calls
    assert client.post("/ask", json={"question": "试用期多长？"}).status_code == 503


def test_the_servers_evidence_budget_reaches_ask_and_consult_prompts(index):
    """`legalrag serve -o evidence_tokens=N` is ``ServerSettings.evidence_tokens``: it bounds the evidence of /ask and
    /consult prompts (and their stream forms), /capabilities reports it, and a request may ask for less. (The brief
    answer's evidence: the guided answer's is its quoted legal basis.)"""
    question = {"question": "公司不签劳动合同怎么办", "k": 3, "style": "brief"}

    def prompts(budget, **body):
        llm = legal_llm()
        client = TestClient(create_app(index, llm, ServerSettings(rate_limit=0, evidence_tokens=budget)))
        shown = []
        for path in ("/ask", "/consult"):
            r = client.post(path, json={**question, **body})
            assert r.status_code == 200, r.text
            shown.append(llm.last_prompt())
            if budget or body:
                step = next(s for s in r.json()["steps"] if s["action"] == "select_evidence")
                assert step["input"]["budget"] == body.get("evidence_tokens", budget)
        return client, shown

    client, whole = prompts(None)  # `--evidence-tokens 0`: whole articles
    assert client.get("/capabilities").json()["evidence_tokens"] is None
    client, cut = prompts(120)
    assert client.get("/capabilities").json()["evidence_tokens"] == 120
    assert "evidence budget of 120 prompt tokens" in client.get("/openapi.json").json()["info"]["description"]
    for short, long in zip(cut, whole):
        assert len(short) < len(long) and REAL in short  # the article cited by the answer keeps its name
    _, smaller = prompts(120, evidence_tokens=60)  # a request may lower the budget
    assert all(len(s) < len(c) for s, c in zip(smaller, cut))
    seq = events(client.post("/consult/stream", json={**question, "evidence_tokens": 60}).text)
    assert seq[-1][0] == "done" and any(s["action"] == "select_evidence" for s in seq[-1][1]["steps"])

    for path in ("/ask", "/consult", "/ask/stream", "/consult/stream"):
        r = client.post(path, json={**question, "evidence_tokens": 500})  # above the server's budget
        assert r.status_code == 400, path
        assert "evidence_tokens=500 is above this server's evidence budget of 120" in r.json()["error"]["message"]
        r = client.post(path, json={**question, "evidence_tokens": 0})
        assert r.status_code == 422 and "evidence_tokens" in r.json()["error"]["message"], path
    for path in ("/ask", "/consult"):
        r = client.post(path, json={**question, "evidence_tokens": 5})  # too small for any evidence
        assert r.status_code == 400 and "evidence_tokens" in r.json()["error"]["message"]
        assert "too small for any evidence" in r.json()["error"]["message"]
    seq = events(client.post("/ask/stream", json={**question, "evidence_tokens": 5}).text)  # known after retrieval
    assert seq[-1][0] == "error" and "evidence_tokens" in seq[-1][1]["error"]["message"]
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    assert schema["ConsultBody"]["properties"]["evidence_tokens"]["anyOf"][0]["minimum"] == 1


def test_evidence_budget_setting_is_validated():
    from pydantic import ValidationError

    from legalrag.types import DEFAULT_EVIDENCE_TOKENS

    assert ServerSettings().evidence_tokens == DEFAULT_EVIDENCE_TOKENS  # the library default, as `legalrag ask`
    with pytest.raises(ValidationError, match="evidence_tokens"):
        ServerSettings(evidence_tokens=0)


def test_serve_evidence_tokens_option_reaches_the_app(index, monkeypatch):
    import uvicorn
    from typer.testing import CliRunner

    from legalrag.cli import app as cli

    served = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.append(app))  # no socket: the app is checked
    for option, expected in (("150", 150), ("0", None)):
        res = CliRunner().invoke(cli, ["serve", "--index", str(index.path), "--no-llm",
                                       "-o", f"evidence_tokens={option}"])
        assert res.exit_code == 0, res.output
        assert TestClient(served[-1]).get("/capabilities").json()["evidence_tokens"] == expected
    res = CliRunner().invoke(cli, ["serve", "--index", str(index.path), "--no-llm", "-o", "evidence_tokens=-3"])
    assert res.exit_code == 2 and "evidence_tokens" in res.output and "'-o'" in res.output
