"""The combined charge decision: the charge model keeps the seen charges, the law-text model adds or puts first
a charge no training case carries, through its article."""

from __future__ import annotations

import pytest

from legalrag.judgment.charges import by_name
from legalrag.judgment.law_candidates import LawCandidates
from unit.judgment.test_law_candidates import CHARGES, BigramEncoder

THROW = "公诉机关指控：被告人赵某从其居住的十二楼住宅窗口向楼下抛掷花盆、酒瓶等物品，砸坏停放的车辆，情节严重。"


@pytest.fixture(scope="module")
def trained():
    pytest.importorskip("lightgbm")
    from legalrag.judgment.labels import label_cases
    from legalrag.judgment.predict import StructurePredictor
    from unit.judgment.test_structure import STATUTES, _cases

    facts, gold = _cases()
    return facts, lambda: StructurePredictor(label_cases(facts, gold).cases, STATUTES, select=False).train()


def _law(model):
    return LawCandidates(BigramEncoder(), CHARGES + [by_name()["高空抛物罪"]], known=model.charge_counts)


def test_an_unseen_charge_is_predicted_through_its_article(trained):
    facts, make = trained
    model = make()
    assert "高空抛物罪" not in model.charge_counts
    model.add_law_model(_law(model), gate=0.0, margin=-1.0)  # every unseen candidate outranks: it comes first
    assert "charge_law" in model.models and model.CHARGE_COLUMNS[-2:] != ["law_rank", "law_cos"]
    s = model.predict(THROW)
    assert s.charges[0].name == "高空抛物罪" and s.charges[0].listed
    assert s.charges[0].evidence["law_article"] == "291-2" and "law_model" in s.charges[0].evidence
    assert "291" in [a.name for a in s.articles]  # the catalogue's article of the charge
    assert any("replaces" in n for n in s.notes)


def test_seen_charge_decisions_are_unchanged_by_the_combination(trained):
    facts, make = trained
    plain = make()
    before = {i: [(c.name, round(c.prob, 6)) for c in plain.predict(f).charges] for i, f in facts.items()}
    closed = make().add_law_model(_law(plain), gate=1.01)  # no unseen charge passes: the decision is the model's
    assert {i: [(c.name, round(c.prob, 6)) for c in closed.predict(f).charges] for i, f in facts.items()} == before
    adding = make().add_law_model(_law(plain), gate=0.0, margin=2.0, add_gate=0.0)  # never replaces, always adds
    for i, f in facts.items():
        got = [(c.name, round(c.prob, 6)) for c in adding.predict(f).charges]
        assert got[: len(before[i])] == before[i]  # the seen charges first, as the charge model decided them
        assert all(n not in plain.charge_counts for n, _ in got[len(before[i]):])


def test_the_combined_model_saves_and_loads_its_law_model(trained, tmp_path):
    from legalrag.judgment.predict import StructurePredictor
    from unit.judgment.test_structure import STATUTES

    facts, make = trained
    model = make().add_law_model(_law(make()), gate=0.3, margin=0.1)
    model.save(tmp_path / "m")
    back = StructurePredictor.load(tmp_path / "m", STATUTES, encoder=BigramEncoder())
    assert "charge_law" in back.models and back.law is not None and not back.law_columns
    assert back.thresholds["charge_law_gate"] == 0.3 and back.thresholds["charge_law_margin"] == 0.1
    with pytest.raises(Exception, match="encoder"):
        StructurePredictor.load(tmp_path / "m", STATUTES)
