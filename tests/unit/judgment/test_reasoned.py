"""The reasoning-only drafter (scripted LLM: agreement, disagreement flag, unparsable reply, no LLM) and the
predict / draft / eval CLI on tiny files."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("lightgbm")

from legalrag.judgment.extract import extract_fields
from legalrag.judgment.labels import label_cases
from legalrag.judgment.predict import StructurePredictor
from legalrag.judgment.reasoned import ReasonedDrafter
from legalrag.testing import ScriptedLLM
from support.cli_runner import run_cli
from unit.judgment.test_structure import STATUTES, _cases, _gold

FACTS = "公诉机关指控：被告人赵某在商场盗窃手机一部，价值人民币8000元。被告人赵某到案后如实供述。"

# Cases the model never saw (other names, amounts and wording), with their judgments: eval judgment scores these.
HELD_OUT = {
    "h0": ("公诉机关指控：被告人周某在地铁站扒窃乘客钱包一个，内有现金人民币3500元。被告人周某到案后如实供述。",
           _gold("周某", "盗窃罪", 7, 2000, [264, 67, 52])),
    "h1": ("公诉机关指控：被告人吴某潜入邻居家中窃取金项链一条，价值人民币12000元。被告人吴某当庭自愿认罪。",
           _gold("吴某", "盗窃罪", 10, 5000, [264, 67, 52])),
    "h2": ("公诉机关指控：被告人郑某酒后驾驶小型轿车在道路上行驶，经鉴定血液中乙醇含量为210mg/100ml。被告人郑某主动投案。",
           _gold("郑某", "危险驾驶罪", 3, 3000, [133, 67, 52])),
    "h3": ("公诉机关指控：被告人王某醉酒后驾驶摩托车在公路上行驶，血液中乙醇含量为95mg/100ml。被告人王某如实供述。",
           _gold("王某", "危险驾驶罪", 2, 2000, [133, 67, 52])),
}


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


def test_cli_predict_eval_and_draft(tmp_path, monkeypatch, capsys):
    facts, gold = _cases()
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps({"text_id": k, "text": v}, ensure_ascii=False) + "\n"
                                                  for k, v in facts.items()), encoding="utf-8")
    (tmp_path / "gold.jsonl").write_text("".join(json.dumps({"id": k, "document": v}, ensure_ascii=False) + "\n"
                                                 for k, v in gold.items()), encoding="utf-8")
    law = tmp_path / "law.jsonl"
    law.write_text("".join(json.dumps({"text_id": d.id, "text": d.text, "name": d.title}, ensure_ascii=False) + "\n"
                           for d in STATUTES), encoding="utf-8")
    monkeypatch.setenv("LEGALRAG_LAW_CORPUS", str(law))
    # the model is trained by the library here; `legalrag train judge-structure` (the shipped recipe, over a JuDGE
    # folder) is driven by tests/unit/training/test_recipes.py
    StructurePredictor(label_cases(facts, gold).cases, STATUTES, select=False).train().save(tmp_path / "m")
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "predict", "--model-dir", tmp_path / "m",
                             "--facts", FACTS)
    assert code == 0, err
    assert json.loads(out)["charges"][0]["name"] == "盗窃罪"
    (tmp_path / "held.jsonl").write_text("".join(json.dumps({"text_id": k, "text": f}, ensure_ascii=False) + "\n"
                                                 for k, (f, _) in HELD_OUT.items()), encoding="utf-8")
    (tmp_path / "held-gold.jsonl").write_text("".join(json.dumps({"id": k, "document": g}, ensure_ascii=False) + "\n"
                                                      for k, (_, g) in HELD_OUT.items()), encoding="utf-8")
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "predict", "--model-dir", tmp_path / "m",
                             "--cases", tmp_path / "held.jsonl", "--out", tmp_path / "pred.jsonl")
    assert code == 0, err
    code, out, err = run_cli(monkeypatch, capsys, "eval", "judgment", "--pred", tmp_path / "pred.jsonl",
                             "--gold", tmp_path / "held-gold.jsonl", "--json", "-o", "text_metrics=false")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["n"] == 4 and summary["unparsed"] == [] and summary["charge_f1"] == 1.0, summary
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "draft", "--model-dir", tmp_path / "m", "--no-llm",
                             "--facts", FACTS, "--json")
    assert code == 0, err
    assert json.loads(out)["parsed"] is True
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "draft", "-o", "free=true", "--no-llm", "--facts", FACTS)
    assert code != 0 and "--model-dir" in err and "free=true" in err


def test_cli_draft_with_an_endpoint(tmp_path, monkeypatch, capsys):
    """--endpoint goes through wiring.make_llm to an OpenAI-compatible server (ours, over a scripted LLM)."""
    pytest.importorskip("uvicorn")
    import sys
    from pathlib import Path
    from support.http_app import serve_app

    from legalrag.llm.serve import create_llm_app

    facts, gold = _cases()
    labels = label_cases(facts, gold)
    StructurePredictor(labels.cases, STATUTES, select=False).train().save(tmp_path / "m")
    law = tmp_path / "law.jsonl"
    law.write_text("".join(json.dumps({"text_id": d.id, "text": d.text, "name": d.title}, ensure_ascii=False) + "\n"
                           for d in STATUTES), encoding="utf-8")
    scripted = ScriptedLLM([_reply(disagree=True, disagree_field="fine", disagree_reason="罚金偏高")])
    with serve_app(create_llm_app(scripted, model_name="remote")) as url:
        code, out, err = run_cli(monkeypatch, capsys, "judgment", "draft", "--model-dir", tmp_path / "m",
                                 "--law-corpus", law, "--facts", FACTS, "--model", url + "/v1#remote",
                                 "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["source"] == "llm" and res["disagreement"]["field"] == "fine" and res["parsed"]
    assert scripted.calls == 1
