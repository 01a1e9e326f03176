"""Drafts state only the circumstances the extractor found, cite the paragraph the circumstance decides and never
repeat a line."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("lightgbm")

from legalrag.judgment.compose import compose_document, template_reasoning
from legalrag.judgment.draft import assemble
from legalrag.judgment.grounding import dedupe_paragraphs, repeated_paragraphs
from legalrag.judgment.labels import label_cases
from legalrag.judgment.predict import StructurePredictor
from legalrag.judgment.reasoned import ReasonedDrafter
from legalrag.testing import ScriptedLLM
from unit.judgment.test_structure import STATUTES, _cases

TANBAI = "公诉机关指控：被告人赵某在商场盗窃手机一部，价值人民币8000元。案发后，被告人赵某到案后如实供述。"


@pytest.fixture(scope="module")
def model():
    facts, gold = _cases()
    return StructurePredictor(label_cases(facts, gold).cases, STATUTES, select=False).train()


def test_tanbai_facts_give_no_zishou_in_the_draft(model):
    s = model.predict(TANBAI)
    assert s.circumstance_names == ["坦白"]
    doc = compose_document(TANBAI, template_reasoning(s), s)
    assert "坦白" in doc and "自首" not in doc
    assert "第六十七条第三款" in doc  # the paragraph 坦白 engages
    # the model writes 自首 anyway: the clause is removed and the note says so
    reply = json.dumps({"reasoning": "本院认为，被告人赵某秘密窃取他人财物，数额较大，其行为已构成盗窃罪。被告人赵某具有自首情节，"
                                     "可以从轻处罚。"}, ensure_ascii=False)
    d = ReasonedDrafter(model, ScriptedLLM([reply])).draft(TANBAI)
    assert "自首" not in d.reasoning and any("自首" in n for n in d.notes)
    assert d.structure.to_dict()["circumstances"][0]["sentence"] == "案发后，被告人赵某到案后如实供述。"


def test_a_draft_has_no_repeated_line(model):
    s = model.predict(TANBAI)
    doc = compose_document(TANBAI, template_reasoning(s), s)
    assert repeated_paragraphs(doc) == 0
    twice = ("本院认为，被告人赵某的行为构成盗窃罪。\n判决如下：\n一、被告人赵某犯盗窃罪，判处有期徒刑六个月，并处罚金人民币二千元。"
             "\n一、被告人赵某犯盗窃罪，判处有期徒刑六个月，并处罚金人民币二千元。")
    free = assemble(TANBAI, twice)  # the free drafter's reply with the judgment line written twice
    assert repeated_paragraphs(free) == 0 and free.count("犯盗窃罪，判处有期徒刑六个月") == 1
    inline = "一、被告人赵某犯盗窃罪，判处有期徒刑六个月。一、被告人赵某犯盗窃罪，判处有期徒刑六个月。"
    assert dedupe_paragraphs(inline) == "一、被告人赵某犯盗窃罪，判处有期徒刑六个月。"


def test_the_free_drafter_keeps_no_zishou_the_facts_do_not_state():
    from legalrag.corpora.statutes import statute_document
    from legalrag.judgment.draft import JudgmentDrafter

    facts = "公诉机关指控：2023年5月1日，被告人张某在某超市窃取商品，价值人民币800元，后被民警抓获。案发后如实供述。"
    reply = ("本院认为，被告人张某秘密窃取他人财物，数额较大，其行为已构成盗窃罪。被告人张某具有自首情节，依法可以从轻处罚。"
             "判决如下：\n一、被告人张某犯盗窃罪，判处拘役四个月，并处罚金人民币一千元。\n一、被告人张某犯盗窃罪，判处拘役四个月，"
             "并处罚金人民币一千元。")
    laws = [statute_document("264", "盗窃公私财物，数额较大的，处三年以下有期徒刑。", "中华人民共和国刑法第二百六十四条"),
            statute_document("67", "犯罪以后自动投案，如实供述自己的罪行的，是自首。", "中华人民共和国刑法第六十七条"),
            statute_document("9001", "为了正确适用刑法，现就时间效力问题解释如下。", "最高人民法院关于适用刑法时间效力规定的若干问题的解释第一条")]
    d = JudgmentDrafter(ScriptedLLM([reply]), laws).draft(facts)
    assert "自首" not in d.sections.reasoning and d.notes and "自首" in d.notes[0]
    assert repeated_paragraphs(d.document) == 0 and d.document.count("犯盗窃罪，判处拘役四个月") == 1
    # the law search: the charge's own article and the circumstance's first, the Criminal Law only
    assert [h.document.title for h in d.law_hits[:2]] == ["中华人民共和国刑法第二百六十四条", "中华人民共和国刑法第六十七条"]
    assert all("解释" not in h.document.title for h in d.law_hits)
