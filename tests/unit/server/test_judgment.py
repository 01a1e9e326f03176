"""``POST /judgment/structure``: the predicted verdict over HTTP (a structure model trained on the tiny labelled
cases of ``test_judgment_structure``, the real BM25 sample index), the LLM charge check through the server's
model (``ScriptedLLM``), and the errors a client sees without a structure model or a language model."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("lightgbm")
from fastapi.testclient import TestClient  # noqa: E402

from legalrag.judgment.extract import extract_fields  # noqa: E402
from legalrag.server import ServerSettings, create_app  # noqa: E402
from legalrag.testing import ScriptedLLM  # noqa: E402
from support.server_setup import sample_index, sample_structure  # noqa: E402

THEFT = "公诉机关指控：被告人赵某在商场盗窃手机一部，价值人民币8000元。被告人赵某到案后如实供述。"
DISCS = "被告人钱某未经著作权人许可，在其摊档出售非法出版的影视光盘1008张，被公安机关当场查获。"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return sample_index(tmp_path_factory.mktemp("srv-judgment") / "idx")


@pytest.fixture(scope="module")
def structure():
    return sample_structure()


def test_the_structure_comes_with_its_evidence_and_resolved_articles(index, structure):
    client = TestClient(create_app(index, None, ServerSettings(rate_limit=0), structure=structure))
    assert client.get("/capabilities").json()["features"]["judgment_structure"] is True
    r = client.post("/judgment/structure", json={"facts": THEFT})
    assert r.status_code == 200, r.text
    body = r.json()
    s = body["structure"]
    assert [c["name"] for c in s["charges"]] == ["盗窃罪"] and s["prison_months"]["value"] >= 1
    assert s["features"]["values"]["amount_max"] == 8000
    assert body["articles"] and all(a["resolved"] for a in body["articles"]) and body["unresolved"] == 0
    labels = {a["article"]: a["citation"] for a in body["articles"]}
    assert labels["264"] == "《中华人民共和国刑法》第二百六十四条"
    fields = extract_fields(body["document"])  # the composed result states the prediction
    assert list(fields.charges) == ["盗窃罪"] and fields.prison_months == s["prison_months"]["value"]


def test_the_charge_check_uses_the_servers_model(index, structure):
    llm = ScriptedLLM(["侵犯著作权罪"])
    client = TestClient(create_app(index, llm, ServerSettings(rate_limit=0), structure=structure))
    plain = client.post("/judgment/structure", json={"facts": DISCS}).json()
    assert plain["structure"]["low_confidence"] and llm.calls == 0
    checked = client.post("/judgment/structure", json={"facts": DISCS, "check_charges": True}).json()
    assert [c["name"] for c in checked["structure"]["charges"]] == ["侵犯著作权罪"] and llm.calls == 1
    assert checked["structure"]["charges"][0]["evidence"]["model_choice"] == \
        [c["name"] for c in plain["structure"]["charges"]]


def test_missing_models_and_bad_bodies_are_clear_errors(index, structure):
    bare = TestClient(create_app(index, None, ServerSettings(rate_limit=0)))
    r = bare.post("/judgment/structure", json={"facts": THEFT})
    assert r.status_code == 503 and "--judgment-model" in r.json()["error"]["message"]
    assert bare.get("/capabilities").json()["features"]["judgment_structure"] is False
    no_llm = TestClient(create_app(index, None, ServerSettings(rate_limit=0), structure=structure))
    r = no_llm.post("/judgment/structure", json={"facts": DISCS, "check_charges": True})
    assert r.status_code == 503 and "language model" in r.json()["error"]["message"]
    for body in ({"facts": ""}, {"facts": THEFT, "unknown": 1}, {}):
        r = no_llm.post("/judgment/structure", json=body)
        assert r.status_code == 422, body
    r = no_llm.post("/judgment/structure", json={"facts": "   "})
    assert r.status_code == 400 and "facts" in r.json()["error"]["message"]


def test_serve_needs_the_statute_corpus_with_a_judgment_model(tmp_path, monkeypatch, capsys, structure):
    """In an install without the national-law data (whose criminal law is the default statute set)."""
    from support.cli_runner import run_cli

    import legalrag.national

    monkeypatch.setattr(legalrag.national, "data_dir", lambda: tmp_path / "no-national-data")
    monkeypatch.delenv("LEGALRAG_LAW_CORPUS", raising=False)
    structure.save(tmp_path / "m")
    code, out, err = run_cli(monkeypatch, capsys, "serve", "--judgment-model-dir", tmp_path / "m", "--no-llm")
    assert code != 0 and "--law-corpus" in err
