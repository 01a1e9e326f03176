"""The drafting page's route drafts as `legalrag judgment draft` does: with a structure model the model decides
the judgment and the LLM writes the reasoning (``ReasonedDrafter``, the CLI's defaults), so `POST /draft` (and
its stream, which the page reads) returns the document the CLI prints for the same facts and the same scripted
model; without a structure model the route keeps the free drafter."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("lightgbm")
from fastapi.testclient import TestClient  # noqa: E402
from support.server_setup import sample_index, sample_structure  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from legalrag.cli import app  # noqa: E402
from legalrag.judgment.reasoned import ReasonedDrafter  # noqa: E402
from legalrag.server import ServerSettings, create_app  # noqa: E402
from legalrag.testing import ScriptedLLM  # noqa: E402
from legalrag.wiring import Root  # noqa: E402

THEFT = "公诉机关指控：被告人赵某在商场盗窃手机一部，价值人民币8000元。被告人赵某到案后如实供述。"
REPLY = json.dumps({"reasoning": "本院认为，被告人赵某以非法占有为目的，秘密窃取他人财物，数额较大，其行为已构成盗窃罪。"
                                 "被告人赵某到案后如实供述，可以从轻处罚。"}, ensure_ascii=False)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return sample_index(tmp_path_factory.mktemp("srv-draft") / "idx")


@pytest.fixture(scope="module")
def structure():
    return sample_structure()


def events(client: TestClient, facts: str) -> list[tuple[str, dict]]:
    out, name = [], ""
    with client.stream("POST", "/draft/stream", json={"facts": facts}) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                out.append((name, json.loads(line[5:])))
    return out


def test_the_route_drafts_what_the_cli_drafts(index, structure, tmp_path):
    served = ScriptedLLM([REPLY])
    client = TestClient(create_app(index, served, ServerSettings(rate_limit=0), structure=structure))
    body = client.post("/draft", json={"facts": THEFT}).json()
    library = ReasonedDrafter(structure, ScriptedLLM([REPLY]), max_tokens=500).draft(THEFT)
    assert body["drafter"] == "structure" and body["source"] == "llm" == library.source
    assert body["document"] == library.document and body["reasoning"] == library.reasoning
    assert body["structure"] == library.structure.to_dict()
    assert "盗窃罪" in body["sections"]["result"] and body["citations"] and body["unresolved"] == 0
    assert [h["id"] for h in body["laws"]] == [a.name for a in library.structure.articles]

    structure.save(tmp_path / "model")  # the CLI over the same model, statutes and scripted reply
    with (tmp_path / "laws.jsonl").open("w", encoding="utf-8") as fh:  # JuDGE's shape
        for d in structure.statutes:
            fh.write(json.dumps({"text_id": d.id, "text": d.text, "name": d.title}, ensure_ascii=False) + "\n")
    cli_llm = ScriptedLLM([REPLY])
    res = CliRunner().invoke(app, ["judgment", "draft", "--facts", THEFT, "--model-dir", str(tmp_path / "model"),
                                   "--law-corpus", str(tmp_path / "laws.jsonl"), "--json"], obj=Root(llm=cli_llm))
    assert res.exit_code == 0, res.output + repr(res.exception)
    assert json.loads(res.output)["document"] == body["document"]
    assert cli_llm.requests[0].messages == served.requests[0].messages
    assert cli_llm.requests[0].max_tokens == served.requests[0].max_tokens == 500

    streamed = events(client, THEFT)  # the page's route: stages as they start, then the same payload
    stages = [d["stage"] for name, d in streamed if name == "stage"]
    assert stages == ["predict", "laws", "generate"]
    done = [d for name, d in streamed if name == "done"][0]
    assert done["document"] == body["document"] and done["laws"] == body["laws"]


def test_without_a_structure_model_the_route_drafts_freely(index):
    free = "本院认为，被告人赵某盗窃他人财物，数额较大，其行为已构成盗窃罪。依照《中华人民共和国刑法》第二百六十四条，判决如下：" \
           "被告人赵某犯盗窃罪，判处有期徒刑一年。"
    client = TestClient(create_app(index, ScriptedLLM([free]), ServerSettings(rate_limit=0)))
    body = client.post("/draft", json={"facts": THEFT}).json()
    assert body["drafter"] == "free" and "判处有期徒刑一年" in body["document"] and body["laws"]


def test_facts_too_thin_to_decide_are_a_clear_error(index, structure):
    client = TestClient(create_app(index, ScriptedLLM([REPLY]), ServerSettings(rate_limit=0), structure=structure))
    r = client.post("/draft", json={"facts": "   "})
    assert r.status_code == 400 and "facts" in r.json()["error"]["message"]
