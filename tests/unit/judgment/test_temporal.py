"""刑法第十二条 in drafts and predictions: the acts' dates read from the facts, the version of each article applied
(the law at the time of the acts, or today's where it is milder), and the statement the draft makes.

The library is a two-version Criminal Law built from the real texts of 第一百六十五条 and 第三百九十条 before and
after 刑法修正案（十二） (in force 2024-03-01), through the same ``laws`` reader the shipped versions come from."""

from __future__ import annotations

import pytest

from legalrag.errors import InputError
from legalrag.judgment.act_dates import act_dates, dates_as_of
from legalrag.judgment.compose import compose_document
from legalrag.judgment.temporal import (
    NO_VERSIONS,
    apply_to_draft,
    compare,
    law_versions,
    no_versions,
    tiers,
)
from legalrag.laws.reader import Article
from legalrag.laws.versions import Law, Version, _intervals

OLD_165 = ("国有公司、企业的董事、经理利用职务便利，自己经营或者为他人经营与其所任职公司、企业同类的营业，获取非法利益，"
           "数额巨大的，处三年以下有期徒刑或者拘役，并处或者单处罚金；数额特别巨大的，处三年以上七年以下有期徒刑，并处罚金。")
NEW_165 = ("国有公司、企业的董事、监事、高级管理人员，利用职务便利，自己经营或者为他人经营与其所任职公司、企业同类的营业，"
           "获取非法利益，数额巨大的，处三年以下有期徒刑或者拘役，并处或者单处罚金；数额特别巨大的，处三年以上七年以下有期徒刑，"
           "并处罚金。\n\n其他公司、企业的董事、监事、高级管理人员违反法律、行政法规规定，实施前款行为，致使公司、企业利益遭受"
           "重大损失的，依照前款的规定处罚。")
OLD_390 = ("对犯行贿罪的，处五年以下有期徒刑或者拘役，并处罚金；因行贿谋取不正当利益，情节严重的，或者使国家利益遭受重大损失的，"
           "处五年以上十年以下有期徒刑，并处罚金；情节特别严重的，或者使国家利益遭受特别重大损失的，处十年以上有期徒刑或者无期"
           "徒刑，并处罚金或者没收财产。")
NEW_390 = ("对犯行贿罪的，处三年以下有期徒刑或者拘役，并处罚金；因行贿谋取不正当利益，情节严重的，或者使国家利益遭受重大损失的，"
           "处三年以上十年以下有期徒刑，并处罚金；情节特别严重的，或者使国家利益遭受特别重大损失的，处十年以上有期徒刑或者无期"
           "徒刑，并处罚金或者没收财产。")
ART_67 = "犯罪以后自动投案，如实供述自己的罪行的，是自首。"
TODAY = "2026-01-01"
PRIVATE = "被告人张某系某民营科技有限公司总经理，利用职务便利，自己经营与其所任职公司同类的营业，获取非法利益。"


def _version(day: str, effective: str, texts: dict[str, str]) -> Version:
    arts = tuple(Article(n, f"第{n}条", t) for n, t in texts.items())
    return Version("中华人民共和国刑法", day, effective, "table", (f"{day}.md",), arts)


class _Library:  # the one method law_versions reads of laws.versions.Library
    def __init__(self, law):
        self._law = law

    def law(self, title):
        return self._law if title in ("中华人民共和国刑法", "刑法") else None


LAW = _intervals(Law("中华人民共和国刑法", (
    _version("2020-12-26", "2021-03-01", {"165": OLD_165, "390": OLD_390, "67": ART_67}),
    _version("2023-12-29", "2024-03-01", {"165": NEW_165, "390": NEW_390, "67": ART_67}))))
LIB = _Library(LAW)


# ---------------------------------------------------------------------------------------------- act dates

@pytest.mark.parametrize("facts, earliest, latest", [
    ("2023年5月至2024年6月，被告人多次经营同类营业。", "2023-05-01", "2024-06-30"),
    ("2023年7月10日晚，被告人在超市内窃取手机一部。", "2023-07-10", "2023-07-10"),
    ("2022年底，被告人开始经营同类业务。", "2022-12-01", "2022-12-31"),
    ("2023年5月至11月，被告人经营同类营业。", "2023-05-01", "2023-11-30"),
    ("2023年5月10日至15日，被告人三次行贿。同年8月，被告人再次行贿。", "2023-05-10", "2023-08-31"),
    ("2023年X月X日，被告人窃取财物。", "2023-01-01", "2023-12-31"),
    ("2024年2月，被告人经营同类营业，至2024年3月案发前仍在经营。", "2024-02-01", "2024-03-31"),
])
def test_act_dates_are_read_from_the_facts(facts, earliest, latest):
    d = act_dates(facts)
    assert (d.earliest, d.latest, d.source) == (earliest, latest, "facts")


def test_dates_of_the_proceedings_and_numbers_are_not_act_dates():
    facts = ("2023年7月10日，被告人窃取现金人民币120000元。2024年1月5日，被告人被公安机关抓获。"
             "被告人于2024年2月1日被刑事拘留，2024年3月6日被逮捕。被告人1990年3月出生。")
    d = act_dates(facts)
    assert (d.earliest, d.latest) == ("2023-07-10", "2023-07-10")
    assert d.spans == ("2023年7月10日",)


def test_no_date_is_unknown_and_as_of_overrides():
    assert not act_dates("被告人窃取手机一部，价值人民币3000元。").known
    assert act_dates("").source == "none"
    d = dates_as_of("2024-05-01")
    assert (d.earliest, d.latest, d.source) == ("2024-05-01", "2024-05-01", "as_of")
    with pytest.raises(InputError, match="YYYY-MM-DD"):
        dates_as_of("2024-13-01")
    with pytest.raises(InputError, match="1949-10-01"):
        dates_as_of("1900-01-01")


# ------------------------------------------------------------------------------------- the milder rule

def test_tiers_and_the_milder_comparison_follow_the_statutory_maximum_then_minimum():
    assert tiers(OLD_390) == [(1, 60), (60, 120), (120, 240)]
    assert tiers(NEW_390) == [(1, 36), (36, 120), (120, 240)]
    assert compare(OLD_390, NEW_390, 24)[0] == "milder"  # first tier: at most 5 years then, 3 years now
    assert compare(OLD_390, NEW_390, 96)[0] == "milder"  # second tier: same maximum, lower minimum now
    assert compare(OLD_390, NEW_390, 48)[0] == "heavier"  # 4 years: first tier then, second tier now
    assert compare(OLD_165, NEW_165, None)[0] == "same"


# ----------------------------------------------------- 第一百六十五条: the private-company manager's acts

def test_acts_of_2023_by_a_private_manager_fall_under_the_old_text_which_does_not_cover_them():
    acts = act_dates("2023年5月至2023年11月，" + PRIVATE)
    v = law_versions(LIB, [165, 67], acts, PRIVATE, today=TODAY, months=24)
    a165, a67 = v.articles
    assert a165.rule == "not_covered" and a165.version == "2020-12-26" and a165.text == OLD_165
    assert a165.label == "中华人民共和国刑法（2020-12-26修正）第一百六十五条"
    assert a67.rule == "unchanged" and not a67.reason
    said = v.statement()
    assert said.startswith("本案被告人的行为发生于2023年5月1日至2023年11月30日。根据《中华人民共和国刑法》第十二条")
    assert "不构成该条规定之罪" in said and OLD_165.rstrip("。") in said and "第六十七条" not in said


def test_acts_after_the_amendment_apply_the_new_text_with_nothing_to_decide():
    acts = act_dates("2024年4月至2024年6月，" + PRIVATE)
    v = law_versions(LIB, [165], acts, PRIVATE, today=TODAY)
    (a,) = v.articles
    assert a.rule == "current" and a.version == "2023-12-29" and a.text == NEW_165
    assert a.label == "中华人民共和国刑法（2023-12-29修正）第一百六十五条" and v.statement() == ""


def test_acts_straddling_2024_03_01_apply_the_new_text_to_the_acts_from_that_day_only():
    acts = act_dates("2023年5月至2024年6月，" + PRIVATE)
    (a,) = law_versions(LIB, [165], acts, PRIVATE, today=TODAY).articles
    assert a.rule == "straddle" and a.version == "2023-12-29" and a.at_acts == "2020-12-26"
    assert "仅对2024年3月1日以后的行为适用《中华人民共和国刑法》（2023-12-29修正）第一百六十五条" in a.reason


def test_a_state_owned_manager_of_2023_is_judged_under_the_old_text_as_the_new_is_not_milder():
    facts = "2023年5月至2023年11月，被告人张某系某国有公司总经理，利用职务便利经营同类营业。"
    (a,) = law_versions(LIB, [165], act_dates(facts), facts, today=TODAY, months=30).articles
    assert a.rule == "old_law" and a.version == "2020-12-26" and a.compared["verdict"] == "same"
    assert "不属于处刑较轻" in a.reason


def test_a_bribe_of_2023_takes_the_milder_current_punishment():
    facts = "2023年7月10日，被告人向国家工作人员行贿人民币50万元。"
    (a,) = law_versions(LIB, [390], act_dates(facts), facts, today=TODAY, months=24).articles
    assert a.rule == "current_milder" and a.version == "2023-12-29" and a.text == NEW_390
    assert "处刑较轻" in a.reason and a.compared["old_tier"] == [1, 60] and a.compared["new_tier"] == [1, 36]


def test_as_of_and_unknown_dates_and_no_versions():
    assert law_versions(LIB, [165], dates_as_of("2024-05-01"), PRIVATE, today=TODAY).articles[0].rule == "current"
    (a,) = law_versions(LIB, [165], act_dates(PRIVATE), PRIVATE, today=TODAY).articles
    assert a.rule == "unknown_date" and a.version == "2023-12-29" and not a.reason
    none = law_versions(None, [165], act_dates(PRIVATE), PRIVATE, today=TODAY)
    assert none.notice == NO_VERSIONS and none.articles == () and none.statement() == ""
    assert none.lines() == [NO_VERSIONS] and no_versions(act_dates("")).to_dict()["notice"] == NO_VERSIONS


# -------------------------------------------------------------------------------- the rendered section

def _reasoned_draft(facts: str):
    from legalrag.judgment.features import extract_features
    from legalrag.judgment.reasoned import ReasonedDraft
    from legalrag.judgment.structure import Amount, Scored, Structure

    s = Structure(charges=(Scored("非法经营同类营业罪", 0.9),), articles=(Scored("165", 0.9), Scored("67", 0.8)),
                  prison=Amount(30), fine=Amount(50000), probation=Amount(0), defendants=("张某",),
                  features=extract_features(facts))
    reasoning = "本院认为，被告人张某的行为已构成非法经营同类营业罪，公诉机关指控的罪名成立。"
    return ReasonedDraft(compose_document(facts, reasoning, s), s, reasoning, "template")


@pytest.mark.parametrize("when, version, phrase", [
    ("2023年5月至2023年11月", "2020-12-26", "不构成该条规定之罪"),
    ("2024年4月至2024年6月", "2023-12-29", None),
])
def test_the_draft_states_the_version_applied_and_why(when, version, phrase):
    facts = f"公诉机关指控：{when}，{PRIVATE}"
    out = apply_to_draft(_reasoned_draft(facts), facts, LIB, today=TODAY)
    applied = {a.article: a for a in out.law_versions.articles}["165"]
    assert applied.version == version
    reasoning_part = out.document.split("判决如下")[0]
    if phrase is None:
        assert "第十二条" not in out.document and out.document == _reasoned_draft(facts).document
    else:
        assert phrase in reasoning_part and "根据《中华人民共和国刑法》第十二条" in reasoning_part
        assert reasoning_part.index("第十二条") < reasoning_part.index("依照《中华人民共和国刑法》第一百六十五条")
    d = out.to_dict()
    assert d["parsed"] and d["law_versions"]["articles"][1]["label"].endswith("第一百六十五条")


def test_as_of_overrides_the_facts_date_in_the_draft():
    facts = f"公诉机关指控：2023年5月至2023年11月，{PRIVATE}"
    out = apply_to_draft(_reasoned_draft(facts), facts, LIB, as_of="2024-05-01", today=TODAY)
    assert out.law_versions.acts.source == "as_of" and out.law_versions.articles[1].version == "2023-12-29"
    with pytest.raises(InputError, match="YYYY-MM-DD") as err:
        apply_to_draft(_reasoned_draft(facts), facts, LIB, as_of="2024/05/01", today=TODAY)
    assert err.value.field == "as_of"


def test_the_shipped_criminal_law_when_installed():
    """The real versions (刑法修正案（十二）): the same decisions on the shipped texts."""
    from legalrag.national_versions import law_library

    try:
        lib = law_library()
    except InputError:
        pytest.skip("no versions of the national law installed")
    if lib.law("中华人民共和国刑法") is None or len(lib.law("中华人民共和国刑法").versions) < 2:
        pytest.skip("the Criminal Law's two versions are not installed")
    old = law_versions(lib, [165], act_dates("2023年5月至2023年11月，" + PRIVATE), PRIVATE, today=TODAY)
    new = law_versions(lib, [165], act_dates("2024年4月，" + PRIVATE), PRIVATE, today=TODAY)
    assert old.articles[0].rule == "not_covered" and old.articles[0].version == "2020-12-26"
    assert new.articles[0].rule == "current" and new.articles[0].version == "2023-12-29"
    assert "其他公司、企业" in new.articles[0].text and "其他公司、企业" not in old.articles[0].text


def test_a_free_draft_gets_the_statement_before_its_result():
    from legalrag.judgment.draft import DraftResult, assemble
    from legalrag.judgment.extract import extract_fields

    facts = f"公诉机关指控：2023年5月至2023年11月，{PRIVATE}"
    doc = assemble(facts, "本院认为，被告人张某构成非法经营同类营业罪，依照《中华人民共和国刑法》第一百六十五条之规定，"
                          "判决如下：\n被告人张某犯非法经营同类营业罪，判处有期徒刑二年。")
    f = extract_fields(doc)
    out = apply_to_draft(DraftResult(doc, f.sections, f, ()), facts, LIB, today=TODAY)
    assert out.law_versions.articles[0].rule == "not_covered"
    assert out.sections.parsed and "第十二条" in out.sections.reasoning and out.fields.prison_months == 24
    assert out.to_dict()["law_versions"]["articles"][0]["version"] == "2020-12-26"


def test_a_bad_as_of_on_the_command_line_is_a_clear_error_before_anything_loads():
    from typer.testing import CliRunner

    from legalrag.cli.apps import app

    for command in (["judgment", "draft", "--facts", PRIVATE, "--no-llm"], ["judgment", "predict", "--facts", PRIVATE]):
        r = CliRunner().invoke(app, [*command, "--as-of", "2024-02-30"])
        assert r.exit_code != 0 and isinstance(r.exception, InputError), r.output
        assert "YYYY-MM-DD" in str(r.exception) and r.exception.field == "as_of"


def test_facts_given_inline_longer_than_a_file_name_are_read_as_facts():
    from legalrag.judgment.draft import read_facts

    facts = "2023年5月至2023年11月，" + PRIVATE * 3  # over 255 bytes in UTF-8, under 512 characters
    assert read_facts(facts) == facts


def test_an_article_the_facts_match_but_the_decision_does_not_apply_is_flagged_when_its_text_changed():
    from legalrag.judgment.temporal import flag_changed

    facts = "2023年5月至2023年11月，" + PRIVATE
    applied = law_versions(LIB, [67], act_dates(facts), facts, today=TODAY)  # a prediction that missed 165
    flagged = flag_changed(applied, LIB, ["165", "67", "390"], facts)
    # 67 is applied already; 165 and 390 changed since the acts (each decided as if applied)
    assert [(a.article, a.rule) for a in flagged.flagged] == [("165", "not_covered"), ("390", "current_milder")]
    assert [a.article for a in flagged.articles] == ["67"] and not flagged.statement()  # the draft is not changed
    assert any("not applied, but the facts match" in line and "第一百六十五条" in line for line in flagged.lines())
    assert flagged.to_dict()["not_applied_changed"][0]["article"] == "165"
    later = "2024年4月至2024年10月，" + PRIVATE  # today's text applies: nothing to review
    assert not flag_changed(law_versions(LIB, [67], act_dates(later), later, today=TODAY), LIB, ["165"], later).flagged
    assert flag_changed(no_versions(act_dates(facts)), None, ["165"], facts).flagged == ()


def test_cite_reads_each_predicted_criminal_law_provision_at_the_acts():
    from legalrag.judgment.temporal import provision_versions

    v = provision_versions(["165", "67", "民法典第五百条"], "2023年5月，" + PRIVATE, LIB)
    assert [a.article for a in v.articles] == ["165", "67"]  # not a Criminal Law article number: left out
    assert v.articles[0].rule == "not_covered" and v.articles[1].rule == "unchanged"
    after = provision_versions(["165"], PRIVATE, LIB, as_of="2024-05-01")  # --as-of: the date of the acts
    assert after.acts.earliest == "2024-05-01" and after.articles[0].rule == "current"
    with pytest.raises(InputError, match="not a date") as bad:
        provision_versions(["165"], PRIVATE, LIB, as_of="2024-13-01")
    assert bad.value.field == "as_of"
