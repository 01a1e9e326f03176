"""Repeal chains: a law repealed by one that was itself repealed points to the law in force, through every link."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from legalrag.citecheck.repealed import RepealedTable


def chain_table(laws: list[str]) -> RepealedTable:
    """laws[0] repealed by laws[1], laws[1] by laws[2], ...; the last one is in force."""
    return RepealedTable({"laws": [{"law": a, "successor": b, "repealed_on": f"20{10 + i}-01-01", "source": f"{b}第一条"}
                                   for i, (a, b) in enumerate(zip(laws, laws[1:]))]})


def test_the_shipped_table_follows_the_individual_business_chain_to_the_law_in_force():
    e = RepealedTable.load().lookup("城乡个体工商户管理暂行条例")
    assert e.successor == "促进个体工商户发展条例"  # not the repealed 个体工商户条例
    assert e.chain == ("个体工商户条例",)
    assert "via 个体工商户条例" in e.describe()


def test_a_chain_of_three_repeals_ends_at_the_law_in_force():
    table = chain_table(["甲条例", "乙条例", "丙条例", "丁条例"])
    first = table.lookup("甲条例")
    assert first.successor == "丁条例" and first.chain == ("乙条例", "丙条例")
    assert table.lookup("乙条例").successor == "丁条例" and table.lookup("乙条例").chain == ("丙条例",)
    assert table.lookup("丙条例").successor == "丁条例" and table.lookup("丙条例").chain == ()
    assert table.lookup("丁条例") is None  # the law in force is not repealed


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=2, max_value=5))
def test_every_link_of_a_chain_points_to_its_last_law(length):
    laws = [f"第{i}号暂行条例" for i in range(length + 1)]
    table = chain_table(laws)
    for i, law in enumerate(laws[:-1]):
        e = table.lookup(law)
        assert e.successor == laws[-1]
        assert e.chain == tuple(laws[i + 1:-1])


def test_a_cycle_in_the_table_stops_where_it_comes_back():
    table = RepealedTable({"laws": [{"law": "甲条例", "successor": "乙条例", "source": "x"},
                                    {"law": "乙条例", "successor": "丙条例", "source": "y"},
                                    {"law": "丙条例", "successor": "甲条例", "source": "z"}]})
    e = table.lookup("甲条例")
    assert e.successor == "甲条例" and e.chain == ("乙条例", "丙条例")


def test_a_chain_is_followed_through_at_most_five_intermediate_laws():
    laws = [f"第{i}号暂行条例" for i in range(9)]
    e = chain_table(laws).lookup(laws[0])
    assert e.chain == tuple(laws[1:6]) and e.successor == laws[6]


def test_what_the_reader_is_told_about_a_repeal():
    table = RepealedTable({
        "laws": [{"law": "中华人民共和国合同法", "successor": "中华人民共和国民法典", "repealed_on": "2021-01-01",
                  "source": "中华人民共和国民法典第一千二百六十条", "in_corpus": True},
                 {"law": "甲条例", "successor": "乙条例", "repealed_on": None, "source": "乙条例第九条"},
                 {"law": "乙条例", "successor": "丙条例", "repealed_on": "2022-11-01", "source": "丙条例第三十九条"}],
        "articles": [{"law": "合同法", "article": "107", "successor_articles": ["577", "133-1"]}]})
    contract = table.lookup("《合同法》")
    assert (contract.law, contract.repealed_on, contract.in_corpus) == ("中华人民共和国合同法", "2021-01-01", True)
    assert contract.describe() == ("中华人民共和国合同法 was repealed on 2021-01-01; replaced by 中华人民共和国民法典 "
                                   "(source: 中华人民共和国民法典第一千二百六十条)")
    arts = table.successor_articles("中华人民共和国合同法", "107")
    assert arts == ("577", "133-1")
    assert contract.describe(arts) == ("中华人民共和国合同法 was repealed on 2021-01-01; replaced by 中华人民共和国民法典: "
                                       "now 第五百七十七条、第一百三十三条之一 (source: 中华人民共和国民法典第一千二百六十条)")
    assert table.successor_articles("合同法", "108") == () and table.successor_articles(None, "107") == ()
    first = table.lookup("甲条例")
    assert (first.law, first.in_corpus, first.repealed_on) == ("甲条例", False, None)
    assert first.describe() == "甲条例 was repealed; replaced by 丙条例 (via 乙条例) (source: 乙条例第九条)"
    assert len(RepealedTable({})) == 0 and RepealedTable({}).lookup("甲条例") is None


@pytest.mark.parametrize("written", ["", None])
def test_no_title_is_no_repeal(written):
    assert RepealedTable.load().lookup(written) is None


def test_a_loop_further_down_a_chain_stops_where_it_comes_back():
    table = RepealedTable({"laws": [{"law": "甲条例", "successor": "乙条例", "source": "x"},
                                    {"law": "乙条例", "successor": "丙条例", "source": "y"},
                                    {"law": "丙条例", "successor": "乙条例", "source": "z"}]})
    e = table.lookup("甲条例")
    assert e.chain == ("乙条例", "丙条例") and e.successor == "乙条例"


def test_a_longer_chain_is_described_link_by_link():
    table = chain_table(["甲条例", "乙条例", "丙条例", "丁条例"])
    assert "(via 乙条例 -> 丙条例)" in table.lookup("甲条例").describe()
    assert table.data["laws"][0]["law"] == "甲条例"  # the table it was built from
