"""The web chat's follow-up through the HTTP route: the page sends no processor of its own, so /consult and
/consult/stream use the server's default (the one GET /capabilities names), and "那最多能要几个月？" after the
double-wage question is searched with the articles the consultation established. BM25 over the bundled statute
sample, the real consultation code, a scripted model."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

import legalrag.wiring  # noqa: E402,F401  (registers the citation support scorer the answers are marked with)
from legalrag.server import create_app  # noqa: E402
from support.server_setup import legal_llm, sample_index  # noqa: E402

FIRST = "公司一直不跟我签书面劳动合同，我可以要求公司支付双倍工资吗？"
FOLLOW_UP = "那最多能要几个月？"
DOUBLE_WAGE = "《劳动合同法》第八十二条"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    return TestClient(create_app(sample_index(tmp_path_factory.mktemp("chat") / "idx"), legal_llm()))


def _history(client) -> list[dict]:
    first = client.post("/consult", json={"question": FIRST, "k": 6}).json()
    assert any(h["citation"] == DOUBLE_WAGE for h in first["retrieved"])
    return [{"role": "user", "content": FIRST}, {"role": "assistant", "content": first["answer"]}]


def test_capabilities_name_the_default_processor_the_consult_route_uses(client):
    caps = client.get("/capabilities").json()
    assert caps["default_processor"] in caps["processors"] and "auto" in caps["processors"]
    body = client.post("/consult", json={"question": FOLLOW_UP, "history": _history(client), "k": 6}).json()
    assert body["processor"] == caps["default_processor"]


def test_the_follow_up_without_a_processor_is_searched_with_the_carried_articles(client):
    history = _history(client)
    body = client.post("/consult", json={"question": FOLLOW_UP, "history": history, "k": 6}).json()
    assert DOUBLE_WAGE in [h["citation"] for h in body["retrieved"]]
    assert "劳动合同法第八十二条" in [c["title"] for c in body["carried"]]
    assert body["follow_up"]["same_issue"] is True and FOLLOW_UP in body["searched"]
    # searched on its own, as the page did when it sent a processor of its own, the follow-up loses the topic
    alone = client.post("/consult", json={"question": FOLLOW_UP, "history": history, "k": 6, "processor": "last"}).json()
    assert DOUBLE_WAGE not in [h["citation"] for h in alone["retrieved"]] and alone["carried"] == []


def test_the_pages_stream_route_carries_too(client):
    seq = []
    text = client.post("/consult/stream", json={"question": FOLLOW_UP, "history": _history(client), "k": 6}).text
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        seq.append((lines["event"], json.loads(lines["data"])))
    retrieved = [d for name, d in seq if name == "retrieved"]
    assert len(retrieved) == 1 and DOUBLE_WAGE in [h["citation"] for h in retrieved[0]["hits"]]
    assert retrieved[0]["carried"] and seq[-1][1]["carried"] == retrieved[0]["carried"]


def test_the_page_sends_a_processor_only_when_the_reader_picks_one(client):
    js = client.get("/static/chat.js").text
    body = re.search(r"const body = \{[^}]*\}", js).group(0)
    assert "processor" not in body  # the request the page builds names none of its own
    assert "if ($('#processor').value) body.processor = $('#processor').value;" in js
    assert "fillSelect($('#processor'), ['', ...caps.processors], processorLabel, '')" in js
