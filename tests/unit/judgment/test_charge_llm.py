"""The LLM charge check: reading charge names from a reply, and the structure predictor asking the LLM only
where it is not confident (scripted LLM in-process; the CLI over an OpenAI-compatible server on 127.0.0.1)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("lightgbm")

from legalrag.errors import InputError
from legalrag.judgment.charge_llm import ChargeReader, read_charges
from legalrag.judgment.compose import result_section
from legalrag.judgment.extract import extract_fields
from legalrag.judgment.labels import label_cases
from legalrag.judgment.predict import StructurePredictor
from legalrag.judgment.reasoned import ReasonedDrafter
from legalrag.testing import ScriptedLLM
from support.cli_runner import run_cli
from unit.judgment.test_structure import STATUTES, _cases

CONFIDENT = "公诉机关指控：被告人赵某在商场盗窃手机一部，价值人民币8000元。被告人赵某到案后如实供述。"
UNSURE = "被告人钱某未经著作权人许可，在其摊档出售非法出版的影视光盘1008张，被公安机关当场查获。"


@pytest.fixture(scope="module")
def model():
    facts, gold = _cases()
    return StructurePredictor(label_cases(facts, gold).cases, STATUTES, select=False).train()


@pytest.mark.parametrize("reply, names", [
    ("侵犯著作权罪", ("侵犯著作权罪",)),
    ("被告人的行为构成非法占用农用地罪。", ("非法占用农用地罪",)),
    ("盗窃罪、诈骗罪", ("盗窃罪", "诈骗罪")),
    ("走私、贩卖、运输、制造毒品罪", ("走私、贩卖、运输、制造毒品罪",)),  # the 、 inside one name is kept
    ("构成容留他人吸毒罪和非法持有毒品罪", ("容留他人吸毒罪", "非法持有毒品罪")),
    ("故意伤害", ("故意伤害罪",)),  # a bare name as the whole reply
    ("抢劫罪\n\n被告人：孙某", ("抢劫罪",)),  # trailing words are not read as charges
    ("无法判断", ()),
    ("", ()),
])
def test_charge_names_are_read_from_the_reply(reply, names):
    assert read_charges(reply).names == names


def test_a_name_outside_the_charge_list_is_reported_not_used():
    r = read_charges("飞天遁地罪")
    assert r.names == () and r.unlisted == ("飞天遁地罪",)


def test_the_reader_shows_the_facts_cut_to_max_chars():
    llm = ScriptedLLM(["侵犯著作权罪"])
    reading = ChargeReader(llm, max_chars=20).read(UNSURE)
    assert reading.names == ("侵犯著作权罪",)
    shown = llm.last_prompt()
    assert UNSURE[:20] in shown and UNSURE[20:40] not in shown
    assert llm.requests[0].temperature == 0.0 and llm.requests[0].max_tokens == 32


def test_a_confident_charge_is_not_sent_to_the_llm(model):
    llm = ScriptedLLM(["危险驾驶罪"])
    s = model.predict(CONFIDENT, charge_reader=ChargeReader(llm))
    assert llm.calls == 0
    assert s.charge_names == ["盗窃罪"] and not s.low_confidence


def test_a_low_confidence_charge_is_replaced_by_the_llms_and_the_numbers_follow(model):
    plain = model.predict(UNSURE)
    assert plain.low_confidence  # the labelled cases know only theft and drunk driving
    llm = ScriptedLLM(["被告人的行为构成侵犯著作权罪。"])
    s = model.predict(UNSURE, charge_reader=ChargeReader(llm))
    assert llm.calls == 1 and s.charge_names == ["侵犯著作权罪"]
    ev = s.charges[0].evidence
    assert ev["model_choice"] == plain.charge_names and "侵犯著作权罪" in ev["llm_check"]
    assert any("LLM charge check replaced" in n for n in s.notes)
    assert extract_fields(result_section(s)).charges == ("侵犯著作权罪",)  # the result states the checked charge


def test_only_the_first_names_are_used_and_the_rule_says_which_cases_are_sent(model):
    three = "侵犯著作权罪、非法经营罪、诈骗罪"
    s = model.predict(UNSURE, charge_reader=ChargeReader(ScriptedLLM([three])))  # default: the first two
    assert s.charge_names == ["侵犯著作权罪", "非法经营罪"]
    one = model.predict(UNSURE, charge_reader=ChargeReader(ScriptedLLM([three]), max_charges=1))
    assert one.charge_names == ["侵犯著作权罪"]
    two = "侵犯著作权罪"
    reader = ChargeReader(ScriptedLLM([two]), when="unsupported")
    assert reader.applies("unsupported") and not reader.applies("low_p")
    assert model.predict(UNSURE, charge_reader=reader).charge_names == ["侵犯著作权罪"]  # no known conduct word
    with pytest.raises(InputError, match="when must be one of"):
        ChargeReader(ScriptedLLM([two]), when="always")
    with pytest.raises(InputError, match="max_charges"):
        ChargeReader(ScriptedLLM([two]), max_charges=0)


def test_a_reply_naming_no_listed_charge_keeps_the_models_choice(model):
    plain = model.predict(UNSURE)
    for reply, note in (("我无法判断", "named no listed charge"), ("飞天遁地罪", "not in the charge list")):
        s = model.predict(UNSURE, charge_reader=ChargeReader(ScriptedLLM([reply])))
        assert s.charge_names == plain.charge_names
        assert any(note in n for n in s.notes)


def test_the_drafter_passes_the_checked_charges_to_the_reasoning(model):
    reasoning = json.dumps({"reasoning": "本院认为，被告人钱某的行为已构成侵犯著作权罪。", "disagree": False,
                            "disagree_field": None, "disagree_reason": ""}, ensure_ascii=False)
    llm = ScriptedLLM(lambda req: "侵犯著作权罪" if "构成什么罪" in req.messages[-1]["content"] else reasoning)
    d = ReasonedDrafter(model, llm, charge_reader=ChargeReader(llm)).draft(UNSURE)
    assert llm.calls == 2 and "侵犯著作权罪" in llm.last_prompt()  # the reasoning prompt states the checked charge
    assert d.source == "llm" and extract_fields(d.document).charges == ("侵犯著作权罪",)


def test_cli_predict_checks_charges_through_an_endpoint(tmp_path, monkeypatch, capsys, model):
    """``judgment predict --check-charges --endpoint`` reaches an OpenAI-compatible server on 127.0.0.1."""
    pytest.importorskip("uvicorn")
    import sys
    from pathlib import Path
    from support.http_app import serve_app

    from legalrag.llm.serve import create_llm_app

    model.save(tmp_path / "m")
    law = tmp_path / "law.jsonl"
    law.write_text("".join(json.dumps({"text_id": d.id, "text": d.text, "name": d.title}, ensure_ascii=False) + "\n"
                           for d in STATUTES), encoding="utf-8")
    scripted = ScriptedLLM(["侵犯著作权罪"])
    with serve_app(create_llm_app(scripted, model_name="remote")) as url:
        code, out, err = run_cli(monkeypatch, capsys, "judgment", "predict", "--model-dir", tmp_path / "m",
                                 "--law-corpus", law, "--facts", UNSURE, "--check-charges",
                                 "--model", url + "/v1#remote")
    assert code == 0, err
    res = json.loads(out)
    assert [c["name"] for c in res["charges"]] == ["侵犯著作权罪"] and scripted.calls == 1
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "predict", "--model-dir", tmp_path / "m",
                             "--law-corpus", law, "--facts", UNSURE, "--model", url + "/v1")
    assert code != 0 and "--check-charges" in err
    code, out, err = run_cli(monkeypatch, capsys, "judgment", "draft", "--model-dir", tmp_path / "m",
                             "--law-corpus", law, "--facts", UNSURE, "--check-charges", "--no-llm")
    assert code != 0 and "--check-charges" in err
