"""``POST /draft``, ``/draft/stream`` and ``/judgment/structure`` with ``as_of``: each Criminal Law article the
draft or the verdict applies is read in the version in force at the acts, over the server's versions (the app
context's loader, loaded once and shared with the /law routes), and the payload carries ``law_versions`` as
`legalrag judgment draft --json` does. The private-company manager of 2023: 第一百六十五条's old text, which does
not reach him; ``as_of`` 2024-05-01: today's text. A bad date is a 400 naming as_of."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("lightgbm")
from fastapi.testclient import TestClient  # noqa: E402

from legalrag.server import ServerSettings, create_app  # noqa: E402
from legalrag.testing import ScriptedLLM  # noqa: E402
from support.server_setup import sample_index  # noqa: E402
from unit.judgment.manager_case import ACTS_2023, TWO_VERSIONS, article, manager_model  # noqa: E402
from unit.judgment.test_temporal import NEW_165, OLD_165  # noqa: E402

REPLY = json.dumps({"reasoning": "本院认为，被告人张某利用职务便利，自己经营与其所任职公司同类的营业，获取非法利益，数额巨大，"
                                 "其行为已构成非法经营同类营业罪。被告人张某到案后如实供述，可以从轻处罚。"}, ensure_ascii=False)
FREE = ("本院认为，被告人张某利用职务便利，自己经营与其所任职公司同类的营业，获取非法利益，数额巨大，其行为已构成非法经营同类营业罪。"
        "依照《中华人民共和国刑法》第一百六十五条之规定，判决如下：\n被告人张某犯非法经营同类营业罪，判处有期徒刑二年。")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return sample_index(tmp_path_factory.mktemp("srv-versions") / "idx")


def client_for(index, llm, structure) -> tuple[TestClient, list]:
    app = create_app(index, llm, ServerSettings(rate_limit=0, mcp=False), structure=structure)
    loads: list = []
    app.state.context.versions = lambda: loads.append(1) or TWO_VERSIONS  # the launcher's loader
    return TestClient(app), loads


def test_the_structure_route_reads_the_law_at_the_acts(index):
    client, loads = client_for(index, None, manager_model())
    old = client.post("/judgment/structure", json={"facts": ACTS_2023})
    assert old.status_code == 200, old.text
    a = article(old.json()["law_versions"])
    assert (a["rule"], a["version"], a["text"]) == ("not_covered", "2020-12-26", OLD_165)
    acts = old.json()["law_versions"]["acts"]
    assert (acts["earliest"], acts["latest"], acts["source"]) == ("2023-05-01", "2023-11-30", "facts")
    new = client.post("/judgment/structure", json={"facts": ACTS_2023, "as_of": "2024-05-01"}).json()
    assert (article(new["law_versions"])["rule"], article(new["law_versions"])["text"]) == ("current", NEW_165)
    assert loads == [1]  # loaded on the first request, kept for the next
    bad = client.post("/judgment/structure", json={"facts": ACTS_2023, "as_of": "2024-02-30"})
    assert bad.status_code == 400 and bad.json()["error"]["fields"] == [{"field": "as_of", "type": "input"}]
    assert "YYYY-MM-DD" in bad.json()["error"]["message"]


def test_the_draft_route_states_the_version_applied(index):
    llm = ScriptedLLM([REPLY, REPLY])
    client, loads = client_for(index, llm, manager_model())
    old = client.post("/draft", json={"facts": ACTS_2023})
    assert old.status_code == 200, old.text
    body = old.json()
    assert body["drafter"] == "structure" and article(body["law_versions"])["rule"] == "not_covered"
    assert "根据《中华人民共和国刑法》第十二条" in body["reasoning"] and "不构成该条规定之罪" in body["sections"]["reasoning"]
    new = client.post("/draft", json={"facts": ACTS_2023, "as_of": "2024-05-01"}).json()
    assert article(new["law_versions"])["version"] == "2023-12-29" and "第十二条" not in new["document"]
    assert loads == [1] and llm.calls == 2
    bad = client.post("/draft", json={"facts": ACTS_2023, "as_of": "2024/05/01"})
    assert bad.status_code == 400 and "as_of" in json.dumps(bad.json()["error"]) and llm.calls == 2
    with client.stream("POST", "/draft/stream", json={"facts": ACTS_2023, "as_of": "2024-00-01"}) as r:
        assert r.status_code == 400  # before the stream starts
    too_long = client.post("/draft", json={"facts": ACTS_2023, "as_of": "2024-05-01T00:00"})
    assert too_long.status_code == 422 and "as_of" in too_long.text


def test_the_free_draft_states_it_too(index):
    client, _ = client_for(index, ScriptedLLM([FREE]), None)
    body = client.post("/draft", json={"facts": ACTS_2023}).json()
    assert body["drafter"] == "free" and article(body["law_versions"])["rule"] == "not_covered"
    result = body["document"].split("判决如下")[0]
    assert "根据《中华人民共和国刑法》第十二条" in result and "被告人张某犯非法经营同类营业罪" in body["document"]
