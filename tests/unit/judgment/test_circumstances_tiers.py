"""Circumstance tiers: a draft states only the certain findings, each with the sentence of the facts that shows it;
a cue the definition does not settle is reported as possible and never stated."""

from __future__ import annotations

from dataclasses import replace

import pytest

from legalrag.judgment.circumstances import TIERS, find_circumstances

TANBAI = "公诉机关指控：被告人赵某在商场盗窃手机一部，价值人民币8000元。案发后，被告人赵某到案后如实供述。"
# a surrender the facts never follow with a confession: 自首 needs 如实供述 too
WEAK = "公诉机关指控：被告人赵某在商场盗窃手机一部，价值人民币8000元。2018年1月15日，被告人赵某到派出所投案。"
CLEAR_SENTENCE = "案发后，被告人赵某主动到公安机关投案，并如实供述了自己的犯罪事实。"
CLEAR = "公诉机关指控：被告人赵某在商场盗窃手机一部，价值人民币8000元。" + CLEAR_SENTENCE


def _names(facts: str, tiers=("certain",)) -> dict[str, str]:
    return {c.name: c.tier for c in find_circumstances(facts, tiers=tiers)}


def test_tanbai_facts_give_no_zishou_in_any_tier():
    assert _names(TANBAI, TIERS) == {"坦白": "certain"}


def test_a_surrender_without_confession_is_only_possible():
    assert "自首" not in _names(WEAK)
    assert _names(WEAK, TIERS)["自首"] == "possible"


def test_a_surrender_with_confession_is_certain_with_its_sentence():
    (c,) = find_circumstances(CLEAR)
    assert (c.name, c.tier, c.sentence) == ("自首", "certain", CLEAR_SENTENCE)
    assert c.to_dict()["tier"] == "certain"


def test_a_possible_zishou_leaves_tanbai_possible():
    facts = "被告人赵某到派出所投案。被告人赵某盗窃手机一部，到案后如实供述。"
    assert _names(facts, TIERS) == {"自首": "certain"}  # the confession follows the surrender
    facts = "被告人赵某到派出所投案。被告人赵某盗窃手机一部，具有坦白情节。"
    assert _names(facts, TIERS) == {"自首": "possible", "坦白": "possible"}
    assert _names(facts) == {}


def test_plea_needs_a_signed_undertaking():
    assert _names("被告人赵某自愿认罪认罚。", TIERS) == {"认罪认罚": "possible"}
    assert _names("被告人赵某自愿认罪认罚，并签署了认罪认罚具结书。") == {"认罪认罚": "certain"}


def test_the_prosecutions_assessment_is_only_possible():
    facts = "公诉机关认为，被告人赵某具有自首情节，建议从轻处罚。"
    assert _names(facts, TIERS) == {"自首": "possible"}


def test_an_unknown_tier_is_named():
    with pytest.raises(ValueError, match="tiers"):
        find_circumstances(CLEAR, tiers=("likely",))


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("lightgbm")
    from legalrag.judgment.labels import label_cases
    from legalrag.judgment.predict import StructurePredictor
    from unit.judgment.test_structure import STATUTES, _cases

    facts, gold = _cases()
    return StructurePredictor(label_cases(facts, gold).cases, STATUTES, select=False).train()


def _with_article_67(s):
    from legalrag.judgment.structure import Scored

    if any(str(a.name) == "67" for a in s.articles):
        return s
    return replace(s, articles=tuple(s.articles) + (Scored("67", 1.0),))


def test_a_weak_zishou_cue_is_not_stated_in_a_draft(model):
    from legalrag.judgment.compose import compose_document, template_reasoning
    from legalrag.judgment.reasoned import circumstances_text

    s = _with_article_67(model.predict(WEAK))  # even with 第六十七条 among the articles
    assert "自首" not in s.circumstance_names
    doc = compose_document(WEAK, template_reasoning(s), s)
    assert "自首" not in doc and "自首" not in circumstances_text(s)


def test_a_clear_zishou_is_stated_in_a_draft_with_its_sentence(model):
    from legalrag.judgment.compose import compose_document, template_reasoning
    from legalrag.judgment.reasoned import circumstances_text

    s = _with_article_67(model.predict(CLEAR))
    assert s.circumstance_names == ["自首"]
    doc = compose_document(CLEAR, template_reasoning(s), s)
    assert "自首" in doc and "坦白" not in doc
    assert CLEAR_SENTENCE.rstrip("。") in circumstances_text(s)
