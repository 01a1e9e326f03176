"""What the web pages need from the HTTP API, over the real sample index with the scripted model: the agents
search and drafting stream their progress before the result, citation prediction says when facts fall outside
what its model learned, errors carry codes a page can word in its language, a browser asking for a missing page
gets the 404 page (an API client JSON), and the favicon, HEAD / and /health's documentation are right."""

from __future__ import annotations


import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from legalrag.server import ServerSettings, create_app  # noqa: E402
from legalrag.server.render import reason_code  # noqa: E402
from support.sse import events
from support.server_setup import legal_llm, sample_index, sample_predictor  # noqa: E402

CIVIL = "我租的房子到期了，房东不退押金怎么办？"
LABOUR = "公司自用工之日起一直未与我订立书面劳动合同，也不支付加班费。"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return sample_index(tmp_path_factory.mktemp("web") / "idx")


@pytest.fixture(scope="module")
def client(index, tmp_path_factory):
    app = create_app(index, legal_llm(), ServerSettings(rate_limit=0),
                     predictor=sample_predictor(index, tmp_path_factory.mktemp("cite")))
    return TestClient(app)




def test_agents_stream_sends_each_step_then_the_same_result_as_the_json_route(client):
    body = {"query": "公司不跟我签合同，能要双倍工资吗", "k": 5, "max_rounds": 2}
    r = client.post("/agents/search/stream", json=body)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    got = events(r.text)
    names = [n for n, _ in got]
    assert names[0] == "started" and names[-1] == "done" and set(names[1:-1]) == {"step"}
    steps = [d for n, d in got if n == "step"]
    assert steps[0]["action"] == "retrieve" and steps[0]["input"]["source"] == "original"
    assert steps == got[-1][1]["trajectory"]
    plain = client.post("/agents/search", json=body).json()
    assert [h["id"] for h in plain["hits"]] == [h["id"] for h in got[-1][1]["hits"]]


def test_draft_stream_names_each_stage_before_the_text(client):
    r = client.post("/draft/stream", json={"facts": "被告人张某于2023年5月在某商场盗窃他人手机一部，价值人民币三千元。"})
    got = events(r.text)
    names = [n for n, _ in got]
    stages = [d["stage"] for n, d in got if n == "stage"]
    assert stages == ["retrieve_laws", "laws", "generate"]
    assert names.index("stage") < names.index("token") < names.index("done")
    laws = next(d for n, d in got if n == "stage" and d["stage"] == "laws")
    assert laws["hits"] and [h["id"] for h in laws["hits"]] == [h["id"] for h in got[-1][1]["laws"]]


def test_citation_prediction_says_when_facts_are_outside_its_training(client):
    civil = client.post("/cite", json={"facts": CIVIL}).json()["scope"]
    assert civil["in_scope"] is False and civil["score"] < civil["threshold"] and civil["check"] == "law_area"
    assert civil["trained_laws"] == ["劳动合同法"] and civil["top_laws"]
    labour = client.post("/cite", json={"facts": LABOUR}).json()["scope"]
    assert labour["in_scope"] is True and labour["score"] >= labour["threshold"]
    assert labour["top_laws"][0]["law"] == "劳动合同法"


def test_errors_carry_codes_the_page_translates(client):
    r = client.post("/consult", json={"question": "x" * 5000, "processor": ""})
    error = r.json()["error"]
    assert r.status_code == 422 and error["type"] == "InvalidRequest"
    fields = {f["field"]: f for f in error["fields"]}
    assert fields["question"]["type"] == "string_too_long" and fields["question"]["limits"]["max_length"] == 4000
    assert fields["processor"]["type"] == "enum"
    r = client.post("/search", json={"query": "工资", "k": 999})
    assert r.status_code == 400 and r.json()["error"]["fields"] == [{"field": "k", "type": "input"}]


def test_rate_limit_and_key_errors_carry_their_parameters(index):
    keyed = TestClient(create_app(index, settings=ServerSettings(api_keys=("k" * 20,), rate_limit=1, rate_burst=1)))
    assert keyed.get("/capabilities").json()["error"]["type"] == "Unauthorized"
    assert keyed.get("/health").status_code == 200  # no key needed
    auth = {"X-API-Key": "k" * 20}
    keyed.get("/capabilities", headers=auth)
    r = keyed.get("/capabilities", headers=auth)
    assert r.status_code == 429 and r.json()["error"]["params"]["retry_after"] == int(r.headers["retry-after"])


def test_unresolved_citations_carry_a_reason_code(client):
    text = ("依据《劳动合同法》第十条、《劳动合同法》第九百九十九条、《合同法》第八条和第五条。")
    cits = client.post("/citations/check", json={"text": text}).json()["citations"]
    reasons = {c["text"]: c["reason"] for c in cits}
    assert reasons["《劳动合同法》第十条"] is None
    assert reasons["《劳动合同法》第九百九十九条"] == "unknown_article"
    assert reasons["《合同法》第八条"] == "unknown_law"


def test_every_resolution_reason_maps_to_its_code():
    from legalrag.citecheck.chinese import ChineseCitation
    from legalrag.citecheck.resolve import Reason, Resolution
    from legalrag.types import Citation

    cite = ChineseCitation(law="合同法", article=8)
    for reason in Reason:
        note = Resolution(cite, law="合同法", reason=reason, candidates=("a", "b")).message
        assert reason_code(Citation(text="x", resolved=False, note=note)) == reason.value, note


def test_a_missing_page_is_a_page_for_browsers_and_json_for_clients(client):
    page = client.get("/no/such/page", headers={"Accept": "text/html,application/xhtml+xml"})
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert 'id="nf-path"' in page.text
    api = client.get("/no/such/page", headers={"Accept": "application/json"})
    assert api.status_code == 404 and api.json()["error"]["type"] == "NotFound"


def test_favicon_head_and_health_documentation(client):
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert client.head("/").status_code == 200
    spec = client.get("/openapi.json").json()
    assert set(spec["paths"]["/health"]["get"]["responses"]) == {"200"}
    assert "/agents/search/stream" in spec["paths"]
