"""The reasoning-only drafter (scripted LLM: agreement, disagreement flag, unparsable reply, no LLM) and the
train / predict / draft / eval CLI on tiny files."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("lightgbm")

from legalrag.judgment.extract import extract_fields
from legalrag.judgment.labels import label_cases
from legalrag.judgment.predict import StructurePredictor
from legalrag.judgment.reasoned import ReasonedDrafter
from legalrag.testing import ScriptedLLM
from tests.cli_runner import run_cli
from tests.test_judgment_structure import STATUTES, _cases

FACTS = "公诉机关指控：被告人赵某在商场盗窃手机一部，价值人民币8000元。被告人赵某到案后如实供述。"


@pytest.fixture(scope="module")
def model():
    facts, gold = _cases()
    return StructurePredictor(label_cases(facts, gold).cases, STATUTES, select=False).train()


def _reply(**kw):
    return json.dumps({"reasoning": "本院认为，被告人赵某以非法占有为目的，秘密窃取他人财物，数额较大，其行为已构成盗窃罪。",
                       "disagree": False, "disagree_field": None, "disagree_reason": "", **kw}, ensure_ascii=False)


def test_the_model_writes_only_the_reasoning_and_the_result_is_assembled(model):
    llm = ScriptedLLM([_reply()])
    d = ReasonedDrafter(model, llm).draft(FACTS)
    prompt = llm.requests[0].messages[-1]["content"]
    assert "盗窃罪" in prompt and "如实供述" in prompt  # the decision and the circumstances are given
    assert d.source == "llm" and d.disagreement is None and d.parsed
    f = extract_fields(d.document)
    assert list(f.charges) == d.structure.charge_names and f.prison_months == d.structure.prison.value
    assert f.sections.reasoning.startswith("本院认为，被告人赵某以非法占有为目的")


def test_disagreement_is_recorded_not_acted_on(model):
    d = ReasonedDrafter(model, ScriptedLLM([_reply(disagree=True, disagree_field="prison",
                                                   disagree_reason="刑期偏重")])).draft(FACTS)
    assert d.disagreement == {"field": "prison", "reason": "刑期偏重"}
    assert extract_fields(d.document).prison_months == d.structure.prison.value


def test_an_unparsable_reply_falls_back_to_the_template(model):
    d = ReasonedDrafter(model, ScriptedLLM(["这不是JSON"]), retries=1).draft(FACTS)
    assert d.source == "template-fallback" and d.error and d.parsed


def test_without_an_llm_the_reasoning_is_a_template(model):
    d = ReasonedDrafter(model, None).draft(FACTS)
    assert d.source == "template" and d.reasoning.startswith("本院认为") and d.parsed


def test_cli_train_predict_eval_and_draft(tmp_path, monkeypatch, capsys):
    facts, gold = _cases()
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps({"text_id": k, "text": v}, ensure_ascii=False) + "\n"
                                                  for k, v in facts.items()), encoding="utf-8")
    (tmp_path / "gold.jsonl").write_text("".join(json.dumps({"id": k, "document": v}, ensure_ascii=False) + "\n"
                                                 for k, v in gold.items()), encoding="utf-8")
    law = tmp_path / "law.jsonl"
    law.write_text("".join(json.dumps({"text_id": d.id, "text": d.text, "name": d.title}, ensure_ascii=False) + "\n"
                           for d in STATUTES), encoding="utf-8")
    monkeypatch.setenv("LEGALRAG_LAW_CORPUS", str(law))
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "train", "--facts", tmp_path / "cases.jsonl",
                             "--judgments", gold_path := tmp_path / "gold.jsonl", "--out", tmp_path / "m",
                             "--no-select")
    assert code == 0, err
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "predict", "--model-dir", tmp_path / "m",
                             "--facts", FACTS)
    assert code == 0, err
    assert json.loads(out)["charges"][0]["name"] == "盗窃罪"
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "predict", "--model-dir", tmp_path / "m",
                             "--cases", tmp_path / "cases.jsonl", "--out", tmp_path / "pred.jsonl")
    assert code == 0, err
    code, out, err = run_cli(monkeypatch, capsys, "eval", "judgment", "--pred", tmp_path / "pred.jsonl",
                             "--gold", gold_path, "--json", "--no-text-metrics")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["n"] == 16 and summary["unparsed"] == [] and summary["charge_f1"] > 0.9
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "draft", "--model-dir", tmp_path / "m", "--no-llm",
                             "--facts", FACTS, "--json")
    assert code == 0, err
    assert json.loads(out)["parsed"] is True
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "draft", "--no-llm", "--facts", FACTS)
    assert code != 0 and "--model-dir" in err


def test_cli_draft_with_an_endpoint(tmp_path, monkeypatch, capsys):
    """--endpoint goes through wiring.make_llm to an OpenAI-compatible server (ours, over a scripted LLM)."""
    pytest.importorskip("uvicorn")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from http_app import serve_app

    from legalrag.llm.serve import create_app

    facts, gold = _cases()
    labels = label_cases(facts, gold)
    StructurePredictor(labels.cases, STATUTES, select=False).train().save(tmp_path / "m")
    law = tmp_path / "law.jsonl"
    law.write_text("".join(json.dumps({"text_id": d.id, "text": d.text, "name": d.title}, ensure_ascii=False) + "\n"
                           for d in STATUTES), encoding="utf-8")
    scripted = ScriptedLLM([_reply(disagree=True, disagree_field="fine", disagree_reason="罚金偏高")])
    with serve_app(create_app(scripted, model_name="remote")) as url:
        code, out, err = run_cli(monkeypatch, capsys, "judgment", "draft", "--model-dir", tmp_path / "m",
                                 "--law-corpus", law, "--facts", FACTS, "--endpoint", url + "/v1",
                                 "--endpoint-model", "remote", "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["source"] == "llm" and res["disagreement"]["field"] == "fine" and res["parsed"]
    assert scripted.calls == 1
