"""Bad input to the judgment models: no crime, another language, very long facts, several defendants."""

from __future__ import annotations

import pytest

pytest.importorskip("lightgbm")

from legalrag.errors import InputError
from legalrag.judgment.compose import compose_document, template_reasoning
from legalrag.judgment.labels import label_cases
from legalrag.judgment.predict import StructurePredictor
from legalrag.judgment.reasoned import ReasonedDrafter
from unit.judgment.test_structure import STATUTES, _cases


@pytest.fixture(scope="module")
def model():
    facts, gold = _cases()
    return StructurePredictor(label_cases(facts, gold).cases, STATUTES, select=False).train()


def test_facts_of_no_crime_are_refused(model):
    lease = "张某与李某于2020年签订房屋租赁合同，约定月租金二千元，租期一年。合同到期后双方对押金退还发生争议。"
    with pytest.raises(InputError, match="no criminal act") as e:
        model.predict(lease)
    assert e.value.field == "facts"
    with pytest.raises(InputError, match="no criminal act"):
        ReasonedDrafter(model).draft(lease)


def test_facts_in_another_language_are_refused(model):
    with pytest.raises(InputError, match="not in Chinese"):
        model.predict("The defendant Zhang entered a supermarket and stole goods worth 800 yuan; he confessed.")


def test_twenty_thousand_characters_are_read_with_a_note(model):
    facts = "公诉机关指控：被告人赵某在商场盗窃手机一部，价值人民币8000元。" + "被告人赵某到案后如实供述。" * 1600
    assert len(facts) > 20_000
    d = ReasonedDrafter(model).draft(facts)
    assert "盗窃罪" in d.document and any("truncated" in n for n in d.structure.notes)
    assert facts.strip() in d.document  # the facts as given, however long


def test_several_defendants_with_different_roles(model):
    facts = ("公诉机关指控：被告人张某、李某共同盗窃商场手机两部，价值人民币9000元。被告人张某在共同犯罪中起次要作用。"
             "被告人李某于案发后主动到派出所投案，如实供述犯罪事实。")
    s = model.predict(facts)
    by = {(c.name, c.defendant) for c in s.circumstances}
    assert by == {("从犯", "张某"), ("自首", "李某")}
    doc = compose_document(facts, template_reasoning(s), s)
    # a draft states a circumstance whose article the model cites (67 here; not 27), with its defendant
    assert s.article_numbers and 67 in s.article_numbers and 27 not in s.article_numbers
    assert "被告人李某具有自首情节" in doc and "从犯" not in doc.split("本院认为")[1]
    assert "第六十七条第一款" in doc


def test_an_appeals_facts_are_not_refused(model):
    appeal = "经审理查明，原判认定上诉人米某酒后对在村道边卖爆米花的路某头面部、胸腹部拳打脚踢，致成重伤、五级伤残的事实。"
    assert model.predict(appeal).charges  # a structure, not a refusal
