"""The charge catalogue: built from the charge-name rules, shipped as a table, 483 charges with their articles."""

from __future__ import annotations

import pytest

from legalrag.errors import InputError
from legalrag.judgment.charges import (EXPECTED_COUNT, ArticleRef, build_catalogue, by_any_name, by_article, by_name,
                                       load_catalogue, parse_catalogue, parse_refs)
from support.paths import SHARED_DATA

RULES = SHARED_DATA / "laws-2025" / "司法解释"


def test_the_shipped_table_holds_every_charge_with_its_article():
    charges = load_catalogue()
    assert len(charges) == EXPECTED_COUNT == 483
    names = by_name(charges)
    assert len(names) == 483  # no name twice
    assert names["盗窃罪"].citation == "第二百六十四条" and names["盗窃罪"].article_numbers == (264,)
    assert names["危险驾驶罪"].citation == "第一百三十三条之一" and names["危险驾驶罪"].article == "133-1"
    assert names["危险驾驶罪"].article_numbers == (133,)  # as JuDGE's evaluator reads 之一
    # additions of the amendments, with the paragraph the rules name
    assert names["袭警罪"].citation == "第二百七十七条第五款" and names["袭警罪"].source == "补充规定（七）"
    assert names["高空抛物罪"].article == "291-2"
    assert names["放火罪"].citation == "第一百一十四条、第一百一十五条第一款"
    # every charge but 骗购外汇罪 (the 1998 decision's) has an article and its law text
    assert [c.name for c in charges if not c.refs] == ["骗购外汇罪"]
    assert all(c.text for c in charges if c.refs)
    assert "醉酒驾驶机动车" in names["危险驾驶罪"].text


def test_renamed_and_abolished_charges():
    names, any_name = by_name(), by_any_name()
    assert "嫖宿幼女罪" not in any_name and "奸淫幼女罪" not in names
    assert "生产、销售假药罪" not in names
    assert any_name["生产、销售假药罪"].name == "生产、销售、提供假药罪"
    assert any_name["出售、非法提供公民个人信息罪"].name == "侵犯公民个人信息罪"
    assert any_name["徇私舞弊低价折股、出售国有资产罪"].name == "徇私舞弊低价折股、出售公司、企业资产罪"  # （八）
    assert [c.name for c in by_article()["264"]] == ["盗窃罪"]


def test_article_references_are_parsed_with_their_paragraphs():
    assert parse_refs("第114条、第115条第1款") == [ArticleRef("114"), ArticleRef("115", 1)]
    assert parse_refs("第127条第1款、第2款") == [ArticleRef("127", 1), ArticleRef("127", 2)]
    assert parse_refs("第一百二十条之一 （《刑法修正案（九）》第六条）") == [ArticleRef("120-1")]
    assert ArticleRef("133-1", 2).label == "第一百三十三条之一第二款"


@pytest.mark.skipif(not RULES.is_dir(), reason="the charge-name rules are not in the shared data")
def test_the_builder_reproduces_the_shipped_table():
    built = build_catalogue(RULES)
    assert [(c.name, c.refs, c.former) for c in built] == [(c.name, c.refs, c.former) for c in load_catalogue()]


def test_a_broken_table_line_names_the_line_and_the_fix():
    with pytest.raises(InputError, match="line 2.*make_charge_table"):
        parse_catalogue("charge\tarticles\tsource\tformer\ttext\n盗窃\t264\n")


def test_a_renamed_charge_gets_a_note_naming_its_current_name():
    from legalrag.judgment.predict import renamed_notes

    assert renamed_notes(["生产、销售假药罪", "盗窃罪"]) == [
        "charge 生产、销售假药罪 has since been renamed 生产、销售、提供假药罪 (补充规定（七）); the name of the facts' "
        "time is kept"]
