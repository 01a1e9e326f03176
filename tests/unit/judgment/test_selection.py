"""Cross-validated feature-group selection, several defendants (names, per-defendant sentences, one result
clause each) and charges proposed from their conduct text, on tiny inline cases."""

from __future__ import annotations

import json

import pytest

from legalrag.corpora.statutes import statute_document
from legalrag.judgment.charge_text import ChargeText, conduct_clause, defining_articles
from legalrag.judgment.defendants import (defendant_rows, defendant_sentences, defendants_in_facts, local_features,
                                          sentenced_defendants)
from legalrag.judgment.draft import HEADING
from legalrag.judgment.extract import extract_fields
from legalrag.judgment.selection import (EXCLUDED, TRAIN_ONLY, backward_eliminate, column_index, fold_assignments,
                                         nested_check)

# ------------------------------------------------------------------------------------------- selection


def test_backward_elimination_drops_what_hurts_and_stops_when_nothing_helps():
    # "noise" costs 0.05 and "weak" costs 0.001 (within the tolerance): only "noise" goes.
    def score(kept):
        return 0.7 + 0.1 * ("useful" in kept) - 0.05 * ("noise" in kept) - 0.001 * ("weak" in kept)

    sel = backward_eliminate(["useful", "noise", "weak"], score, tol=0.002)
    assert sel.kept == ("useful", "weak")
    assert sel.all_score == pytest.approx(0.749) and sel.score == pytest.approx(0.799)
    assert sel.to_dict()["tried"][0] == {"dropped": [], "cv_score": 0.749}
    # the same input gives the same choice, ties going to the earlier group
    tie = backward_eliminate(["a", "b"], lambda kept: 1.0 - 0.1 * len(kept), tol=0.0)
    assert tie.kept == () and backward_eliminate(["a", "b"], lambda kept: 1.0 - 0.1 * len(kept), tol=0.0) == tie


def test_fold_assignments_are_fixed_and_repeats_differ():
    a = fold_assignments(23, 5, 2)
    assert a == fold_assignments(23, 5, 2)
    assert a[0] == [i % 5 for i in range(23)] and a[1] != a[0]
    assert all(sorted(set(r)) == [0, 1, 2, 3, 4] for r in a)


def test_nested_check_runs_the_selection_without_the_outer_fold():
    seen = []

    def score(kept, assignments):
        seen.append(assignments)
        return 0.5 + 0.1 * ("good" in kept) - 0.2 * ("bad" in kept)

    check = nested_check(["good", "bad"], score, 10, folds=5, tol=0.01)
    assert check.helps and check.selected == pytest.approx(0.6) and check.all_groups == pytest.approx(0.4)
    inner = [a for call in seen for a in call if EXCLUDED in a]
    outer = [a for call in seen for a in call if TRAIN_ONLY in a]
    assert inner and outer
    # an inner assignment never tests or trains on its outer fold's cases; an outer one tests only them
    assert all(sum(x == EXCLUDED for x in a) == 2 for a in inner)
    assert all(sorted(i for i, x in enumerate(a) if x == 0) in ([k, k + 5] for k in range(5)) for a in outer)
    assert not nested_check(["x"], lambda kept, a: 0.5, 10, folds=5).helps  # no gain: all groups stay


def test_column_index_keeps_fixed_columns_and_kept_groups():
    groups = {"g1": ("a", "b"), "g2": ("c",), "g3": ("d", "e")}
    assert column_index(["f0", "f1"], groups, {"g1", "g3"}) == [0, 1, 2, 3, 5, 6]
    assert column_index(["f0"], groups, set()) == [0]


# -------------------------------------------------------------------------------------- several defendants

FACTS = ("公诉机关指控：被告人张某、李某伙同他人在超市盗窃商品，价值人民币8000元。被告人张某系主犯，纠集他人作案。"
         "被告人李某系从犯，到案后如实供述。被告人的供述与证人证言相互印证。被告人张某曾因盗窃被判处刑罚。")


def _judgment(result: str) -> str:
    return HEADING + "\n事实。\n本院认为，构成盗窃罪。依照《中华人民共和国刑法》第二百六十四条之规定，判决如下：\n" + result + \
        "\n如不服本判决，可在接到判决书的第二日起十日内上诉。"


def test_defendants_are_read_from_the_facts_without_misread_phrases():
    assert defendants_in_facts(FACTS) == ["张某", "李某"]  # not 被告人的供述
    assert defendants_in_facts("被告人王五驾驶车辆。") == []  # named once: not trusted
    rows = defendant_rows(FACTS, ["张某", "李某"])
    assert [n for n, _ in rows] == ["张某", "李某"]
    zhang, li = (f for _, f in rows)
    assert zhang["def_主犯"] >= 1 and zhang["def_累犯"] >= 1 and li["def_从犯"] >= 1 and li["def_坦白"] >= 1
    assert zhang["def_count"] == 2 and li["def_index"] == 1
    assert defendant_rows("无名之案。", [])[0][1]["def_count"] == 1


def test_per_defendant_sentences_follow_the_evaluator():
    gold = _judgment("一、被告人张某犯盗窃罪，判处有期徒刑二年，并处罚金人民币五千元。"
                     "二、被告人李某犯盗窃罪，判处有期徒刑一年，缓刑二年，并处罚金人民币二千元。"
                     "三、被告人王某犯盗窃罪，判处有期徒刑一年，并处罚金人民币二千元。")
    assert sentenced_defendants(gold) == ["张某", "李某", "王某"]
    got = [(d.name, d.months, d.fine_yuan) for d in defendant_sentences(gold)]
    assert got == [("张某", 24, 5000), ("李某", 12, 2000), ("王某", 12, 2000)]
    # the evaluator sums distinct phrases: 24 + 12 months, 5000 + 2000 yuan
    fields = extract_fields(gold)
    assert fields.prison_months == 36 and fields.fine_yuan == 7000


def test_labels_keep_each_defendants_sentence():
    from legalrag.judgment.labels import label_case

    gold = _judgment("一、被告人张某犯盗窃罪，判处有期徒刑二年。二、被告人李某犯盗窃罪，判处有期徒刑八个月。")
    case = label_case("x", FACTS, gold)
    assert case.prison_months == 32 and case.defendants == (("张某", 24, None), ("李某", 8, None))
    assert json.loads(json.dumps(case.to_dict()))["defendants"] == [["张某", 24, None], ["李某", 8, None]]
    single = label_case("y", FACTS, _judgment("被告人张某犯盗窃罪，判处有期徒刑二年。"))
    assert single.defendants == ()


def test_one_result_clause_per_defendant_reads_back_as_the_evaluator_sums():
    from legalrag.judgment.compose import result_section
    from legalrag.judgment.features import extract_features
    from legalrag.judgment.structure import Amount, Scored, Structure

    s = Structure((Scored("盗窃罪", 0.9),), (Scored("264", 0.9),), Amount(30), Amount(7000, prob=0.9), Amount(0),
                  ("张某", "李某"), extract_features(FACTS),
                  sentences=({"name": "张某", "months": 24, "fine_yuan": 5000},
                             {"name": "李某", "months": 6, "fine_yuan": 2000}))
    text = result_section(s)
    assert text.startswith("一、被告人张某犯盗窃罪") and "二、被告人李某犯盗窃罪" in text
    fields = extract_fields(_judgment(text))
    assert fields.prison_months == 30 and fields.fine_yuan == 7000 and fields.charges == ("盗窃罪",)
    same = Structure(s.charges, s.articles, Amount(6), Amount(None), Amount(0), s.defendants, s.features,
                     sentences=({"name": "张某", "months": 6, "fine_yuan": None},
                                {"name": "李某", "months": 6, "fine_yuan": None}))
    assert extract_fields(_judgment(result_section(same))).prison_months == 6  # equal terms count once
    assert local_features(FACTS, "李某", ["张某", "李某"])["def_mention_share"] < 0.5


# ------------------------------------------------------------------------------------------- charge text

STATUTES = [
    statute_document("217", "以营利为目的，有下列侵犯著作权情形之一，违法所得数额较大的，处三年以下有期徒刑：未经著作权人许可，复制发行其文字作品、音乐、电影的。",
                     "中华人民共和国刑法第二百一十七条"),
    statute_document("264", "盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制。", "中华人民共和国刑法第二百六十四条"),
    statute_document("67", "犯罪以后自动投案，如实供述自己的罪行的，是自首。", "中华人民共和国刑法第六十七条"),
]


def test_charges_are_ranked_by_their_conduct_text():
    ct = ChargeText(STATUTES)
    hits = ct.search("被告人冯某在市场门口出售侵犯著作权的盗版光盘，非法经营数额二万元。")
    assert hits and hits[0].score == 1.0 and [h.rank for h in hits] == list(range(len(hits)))
    assert "侵犯著作权罪" in [h.name for h in hits[:3]]
    assert ChargeText(STATUTES).search("。。。") == []


def test_defining_articles_match_conduct_clauses_not_the_general_part():
    assert conduct_clause(STATUTES[1].text) == "盗窃公私财物，数额较大的"
    found = defining_articles(STATUTES, min_cover=0.8)
    assert found["盗窃罪"][0] == "264" and found["侵犯著作权罪"][0] == "217"
    assert all(art != "67" for art, _ in found.values())
    with_clauses = ChargeText(STATUTES, min_cover=0.8)
    assert with_clauses.articles["侵犯著作权罪"][0] == "217"


# ------------------------------------------------------------------------------------ trained end to end

def _labelled():
    from legalrag.judgment.compose import months_phrase
    from legalrag.judgment.labels import label_cases
    from legalrag.numerals import to_chinese

    facts, gold = {}, {}
    for i in range(10):
        name = f"张{to_chinese(i + 1)}"
        facts[f"s{i}"] = (f"公诉机关指控：被告人{name}在超市盗窃商品，价值人民币{2000 * (i + 1)}元。被告人{name}到案后如实供述。")
        gold[f"s{i}"] = _judgment(f"被告人{name}犯盗窃罪，判处{months_phrase(6 + i)}，并处罚金人民币{to_chinese(1000 * (i + 1))}元。")
    for i in range(6):
        a, b = f"王{to_chinese(i + 1)}", f"赵{to_chinese(i + 1)}"
        facts[f"m{i}"] = (f"公诉机关指控：被告人{a}、{b}结伙盗窃电动车，价值人民币{5000 * (i + 1)}元。被告人{a}系主犯，"
                          f"被告人{b}系从犯，如实供述。")
        gold[f"m{i}"] = _judgment(f"一、被告人{a}犯盗窃罪，判处{months_phrase(12 + 2 * i)}，并处罚金人民币三千元。"
                                  f"二、被告人{b}犯盗窃罪，判处{months_phrase(6 + i)}，并处罚金人民币一千元。")
    labels = label_cases(facts, gold)
    assert not labels.skipped and sum(bool(c.defendants) for c in labels.cases) == 6
    return labels.cases


def test_training_records_the_choices_and_they_survive_save_and_load(tmp_path):
    pytest.importorskip("lightgbm")
    from legalrag.judgment.compose import result_section
    from legalrag.judgment.features import GROUPS
    from legalrag.judgment.predict import SELECTED, StructurePredictor

    model = StructurePredictor(_labelled(), STATUTES).train()
    assert set(model.selection) <= set(SELECTED) and "article" in model.selection
    for kind, groups in model.model_groups.items():
        assert set(groups) <= set(GROUPS)
        entry = model.selection[kind]
        # a CV choice is used only where the nested check on the training cases says it generalises
        assert (tuple(groups) == tuple(entry["kept"])) if entry["selection_used"] else (tuple(groups) == tuple(GROUPS))
    assert set(model.per_defendant) == {"prison", "fine"}
    model.save(tmp_path / "m")
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["feature_selection"]["enabled"] and manifest["feature_selection"]["models"].keys() == model.selection.keys()
    assert manifest["per_defendant"]["models"] == model.per_defendant and "charge" in manifest["cv_f1"]
    again = StructurePredictor.load(tmp_path / "m", STATUTES)
    facts = "公诉机关指控：被告人钱某、孙某结伙盗窃电动车，价值人民币9000元。被告人钱某系主犯，被告人孙某系从犯。"
    a, b = model.predict(facts), again.predict(facts)
    assert a.to_dict() == b.to_dict() and a.defendants == ("钱某", "孙某")
    # whatever the mode, the written result reads back as the predicted total
    assert extract_fields(_judgment(result_section(a))).prison_months == a.prison.value
    if a.sentences:
        assert [d["name"] for d in a.sentences] == ["钱某", "孙某"] and a.prison.evidence["defendants"]
    off = StructurePredictor(_labelled(), STATUTES, select=False, per_defendant=False).train()
    assert off.model_groups == {} and off.per_defendant == {}
