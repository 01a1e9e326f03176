"""CAIL2018 cases as labelled cases (label reconciliation, bad lines, overlap with JuDGE, the hold-out split), the
shipped structure model's CAIL manifest and its lack of case texts, unseen charges, facts too short to decide,
and drafts that state only the circumstances the facts support."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from legalrag.judgment.cail import load_cail, official_charge, overlapping, split_holdout
from legalrag.judgment.extract import DEATH_MONTHS, LIFE_MONTHS
from legalrag.judgment.grounding import (dedupe_paragraphs, ground_reasoning, procuratorate, repeated_paragraphs,
                                         unsupported_circumstances)
from legalrag.judgment.labels import LabelledCase

REPO = Path(__file__).resolve().parents[3]
SHIPPED = REPO / "src" / "legalrag" / "data" / "models" / "judge-structure"


def _line(fact, acc, arts, months=6, fine=0, death=False, life=False, criminals=("张某",)):
    return json.dumps({"fact": fact, "meta": {"accusation": acc, "relevant_articles": arts, "punish_of_money": fine,
                                              "criminals": list(criminals), "term_of_imprisonment": {
                                                  "imprisonment": months, "death_penalty": death,
                                                  "life_imprisonment": life}}}, ensure_ascii=False)


def test_cail_labels_are_reconciled_and_bad_lines_are_reported_by_line(tmp_path):
    lines = [
        _line("被告人张某醉酒驾驶机动车在道路上行驶。", ["危险驾驶"], [133], 2, 2000),
        "{not json",
        _line("被告人李某贩卖甲基苯丙胺50克。", ["[走私、贩卖、运输、制造]毒品"], [347], 0, 0, death=True),
        _line("被告人王某抢劫。", [], [263]),  # no charge
        _line("被告人赵某盗窃。", ["盗窃"], [264], months=-3),  # impossible term
        _line("被告人钱某故意杀人。", ["故意杀人"], [232], death=True, life=True),  # both
        _line("被告人孙某走私。", ["走私"], [151]),  # covers several charges, article does not decide
        _line("被告人周某、吴某盗窃。", ["盗窃"], [264], criminals=("周某", "吴某")),
        _line("被告人郑某故意伤害他人致轻伤。", ["故意伤害"], [234], 300, 0, life=True),
        _line("被告人张某醉酒驾驶机动车在道路上行驶。", ["危险驾驶"], [133], 2, 2000),  # exact repeat
    ]
    path = tmp_path / "cail.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rep = load_cail([path])
    skipped = {line: why for _, line, why in rep.skipped}
    assert sorted(skipped) == [2, 4, 5, 6, 7, 8] and "not JSON" in skipped[2]
    assert "accusation" in skipped[4] and "-3" in skipped[5] and "several" in skipped[7] and "defendants" in skipped[8]
    assert rep.duplicates == 1 and len(rep.cases) == 3
    drunk, drugs, injury = rep.cases
    assert drunk.charges == ("危险驾驶罪",) and drunk.articles == (133,) and drunk.fine_yuan == 2000
    assert drunk.source == "cail" and not drunk.complete  # specific articles only, no probation label
    assert drugs.charges == ("走私、贩卖、运输、制造毒品罪",) and drugs.prison_months == DEATH_MONTHS
    assert drugs.fine_yuan is None  # CAIL's 0 yuan is no fine, as an absent fine in JuDGE
    assert injury.prison_months == LIFE_MONTHS
    assert rep.mapped["[走私、贩卖、运输、制造]毒品"] == "走私、贩卖、运输、制造毒品罪"
    assert official_charge("[制造、贩卖、传播]淫秽物品", [364]) == "传播淫秽物品罪"
    assert official_charge("[制造、贩卖、传播]淫秽物品", [363, 364]) == ""


def test_overlap_with_judge_and_a_holdout_stratified_by_main_charge():
    judge = {"j1": "经审理查明，2016年3月某日，被告人甲某在某县某镇某村路口驾驶无牌照两轮摩托车，经鉴定其血液中乙醇含量为"
                   "180mg/100ml，属醉酒驾驶机动车。"}
    copy = LabelledCase("cail-a", "2016年3月某日，被告人甲某在某县某镇某村路口驾驶无牌照两轮摩托车，经鉴定其血液中乙醇含量为"
                                  "180mg/100ml。", ("危险驾驶罪",), (133,), 2, 2000, False, source="cail")
    other = LabelledCase("cail-b", "被告人乙某在超市盗窃商品价值三千元，到案后如实供述。", ("盗窃罪",), (264,), 6, 1000,
                         False, source="cail")
    assert set(overlapping([copy, other], judge)) == {"cail-a"}
    cases = [LabelledCase(f"c{i}", "x", ("盗窃罪",), (264,), 6, None, False, source="cail") for i in range(10)]
    cases += [LabelledCase(f"r{i}", "x", ("罕见罪",), (100,), 6, None, False, source="cail") for i in range(4)]
    train, hold = split_holdout(cases)
    assert len(hold) == 2 and all(i.startswith("c") for i in hold)  # 20% of 10; the 4-case charge stays whole
    assert set(train) | set(hold) == {c.id for c in cases} and not set(train) & set(hold)
    assert split_holdout(cases) == (train, hold)  # by id hashes: the same split every time


def test_shipped_model_excludes_the_cail_cases_overlapping_judge_evaluation_cases(shared_data):
    man = json.loads((SHIPPED / "manifest.json").read_text(encoding="utf-8"))
    split = json.loads((REPO / "bench" / "data" / "cail-split.json").read_text(encoding="utf-8"))
    dropped = {d["cail"] for d in split["dropped_overlapping_judge_eval"]}
    assert man["cail_dropped_overlapping_judge_eval"] == len(dropped) >= 1
    ids = [json.loads(x)["id"] for x in (SHIPPED / "cases.jsonl").read_text(encoding="utf-8").splitlines() if x]
    cail = [i for i in ids if i.startswith("cail-")]
    assert len(cail) == man["n_cail_cases"] and not set(cail) & dropped
    assert not set(cail) & set(split["holdout_ids"])  # the hold-out never trained the shipped model
    # recomputed from the data: no shipped CAIL case overlaps any JuDGE evaluation case
    rep = load_cail([shared_data / "cail2018" / f for f in ("data_train.jsonl", "data_test.jsonl")])
    facts = {json.loads(x)["text_id"]: json.loads(x)["text"]
             for x in (shared_data / "judge" / "data" / "test.json").read_text(encoding="utf-8").splitlines() if x}
    evaluation = dict(sorted(facts.items())[200:])
    shipped = set(cail)
    assert not set(overlapping([c for c in rep.cases if c.id in shipped], evaluation))


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def test_shipped_models_hold_no_case_text(shared_data):
    """No string in a shipped judgment or citation model copies 20 characters of any JuDGE or CAIL case's facts."""
    values, rows = set(), 0
    for name in ("judge-structure", "judge-cite"):
        for p in (SHIPPED.parent / name).rglob("*"):
            if p.suffix == ".jsonl":
                for line in p.read_text(encoding="utf-8").splitlines():
                    rec = json.loads(line)
                    rows += 1
                    assert "facts" not in rec and "text" not in rec, p
                    values.update(_strings(rec))
            elif p.suffix == ".json":
                values.update(_strings(json.loads(p.read_text(encoding="utf-8"))))
            elif p.suffix == ".md":
                values.update(p.read_text(encoding="utf-8").splitlines())
    assert rows > 4000  # the labelled cases are there, as labels, digests and keys
    facts = [json.loads(x)["text"] for x in (shared_data / "judge" / "data" / "test.json").read_text(
        encoding="utf-8").splitlines() if x]
    facts += [json.loads(x)["fact"] for f in ("data_train.jsonl", "data_test.jsonl")
              for x in (shared_data / "cail2018" / f).read_text(encoding="utf-8").splitlines() if x]
    every = "\x00".join(facts)
    from legalrag.judgment.extract import charge_names

    long = [v for v in values - set(charge_names()) if len(v) >= 20]  # a charge's official name is a label
    copied = [v for v in long if any(v[i:i + 20] in every for i in range(0, len(v) - 19, 20))]
    assert not copied, copied[:1]


# ------------------------------------------------------------------------------------ drafting and bad input

def test_a_draft_never_states_a_circumstance_the_facts_do_not_support():
    facts = "被告人张某于2023年5月在某超市盗窃价值3000元的商品，到案后如实供述。"
    reply = ("本院认为，被告人张某以非法占有为目的，秘密窃取他人财物，数额较大，其行为已构成盗窃罪。被告人张某系累犯，"
             "应当从重处罚；其主动投案，系自首，可以从轻处罚；到案后如实供述，系坦白；已退赔被害人损失。\n"
             "判决结果：被告人张某犯盗窃罪，判处有期徒刑六个月，并处罚金人民币二千元。")
    assert set(unsupported_circumstances(reply, facts)) == {"自首", "累犯", "退赃退赔"}
    grounded, removed = ground_reasoning(reply, facts)
    assert removed == ["累犯", "自首", "退赃退赔"]
    assert "自首" not in grounded and "累犯" not in grounded and "退赔" not in grounded
    assert "坦白" in grounded and "盗窃罪" in grounded and "判决结果" not in grounded
    assert not unsupported_circumstances(grounded, facts)
    # a circumstance the facts state is kept, and a negated mention states nothing
    assert not unsupported_circumstances("被告人不构成自首。", facts)
    assert ground_reasoning("本院认为，被告人主动投案，系自首。", "被告人李某作案后主动投案，如实供述了犯罪事实。")[1] == []
    # a surrender with no confession is a possible 自首 only: a draft does not state it
    assert ground_reasoning("本院认为，被告人主动投案，系自首。", "被告人李某作案后主动投案。")[1] == ["自首"]


def test_heading_names_come_from_the_facts_or_are_marked_placeholders():
    assert procuratorate("上海市浦东新区人民检察院指控：被告人……") == "上海市浦东新区人民检察院"
    assert procuratorate("公诉机关北京市海淀区人民检察院指控") == "北京市海淀区人民检察院"
    assert procuratorate("被告人张某于2023年5月在某超市盗窃。") == "XX人民检察院"
    doc = "甲\n本院认为，被告人张某犯盗窃罪，判处有期徒刑六个月。\n本院认为，被告人张某犯盗窃罪，判处有期徒刑六个月。\n乙"
    assert repeated_paragraphs(doc) == 1 and repeated_paragraphs(dedupe_paragraphs(doc)) == 0


# ------------------------------------------------------------------------ CAIL rows in the learned models

def test_partial_label_cases_train_in_every_fold_and_are_never_scored(monkeypatch):
    """With the partial-label (CAIL) cases as TRAIN_ONLY, every out-of-fold fit learns from all of them and
    only the complete cases are predicted; left out, no fit sees them."""
    import numpy as np

    pytest.importorskip("lightgbm")
    from legalrag.judgment import selection

    seen = []
    real = selection.fit
    monkeypatch.setattr(selection, "fit", lambda X, y, o, c, w=None: (seen.append(X[:, 0].tolist()), real(X, y, o, c, w))[1])
    rng = np.random.default_rng(0)
    X = np.column_stack([np.arange(15.0), rng.normal(size=15)])  # column 0: the row's own index
    y = (X[:, 1] > 0).astype(float)
    with_p, without_p = selection.partial_assignments(10, 5)
    assert len(with_p) == len(without_p) == selection.REPEATS
    out = selection._oof(X, y, "binary", ["i", "x"], with_p[0])
    assert np.isnan(out[10:]).all() and not np.isnan(out[:10]).any()
    assert len(seen) == 5 and all(set(range(10, 15)) <= set(s) for s in seen)
    seen.clear()
    out = selection._oof(X, y, "binary", ["i", "x"], without_p[0])
    assert np.isnan(out[10:]).all() and seen and not any(set(range(10, 15)) & set(s) for s in seen)
    # the threshold is chosen on the complete cases only: the same as without the partial rows at all
    G = np.arange(15)
    t_all = selection.set_threshold_cv(X, y, G, 15, ["i", "x"], without_p[0])
    t_complete = selection.set_threshold_cv(X[:10], y[:10], G[:10], 10, ["i", "x"], without_p[0][:10])
    assert t_all == t_complete


def test_a_row_weight_changes_what_the_booster_learns():
    """Partial-label rows can train at a weight: rows of weight 0.1 move the fit a tenth as far."""
    pytest.importorskip("lightgbm")
    import numpy as np

    from legalrag.judgment.boosting import fit

    X = np.array([[0.0], [0.0], [1.0], [1.0]] * 10)
    y = np.array([0, 1, 1, 1] * 10)  # at x = 0, one row of each class
    w_even = np.ones(len(y))
    w_low = np.where((X[:, 0] == 0) & (y == 1), 0.1, 1.0)  # the positive x = 0 rows count a tenth
    p_even = fit(X, y, "binary", ["x"], w_even).predict(np.array([[0.0]]))[0]
    p_low = fit(X, y, "binary", ["x"], w_low).predict(np.array([[0.0]]))[0]
    assert abs(p_even - 0.5) < 0.05 and p_low < 0.2


def test_the_structure_model_records_where_cail_rows_were_used(tmp_path):
    """CAIL cases named in ``partial_rows`` are offered to every learned model; each model's choice and the
    cross-validated scores behind it (on the complete cases) are in the manifest; probation and the
    general-part articles still come from complete cases only."""
    pytest.importorskip("lightgbm")
    from unit.judgment.test_structure import STATUTES, _cases

    from legalrag.judgment.labels import label_cases
    from legalrag.judgment.lexvec import LexicalVectors
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.judgment.selection import PARTIAL_WEIGHTS, TOL
    from legalrag.testing import FakeEncoder

    facts, gold = _cases()
    judge = list(label_cases(facts, gold).cases)
    cail = [LabelledCase(f"cail-{i}", f"被告人王{i}在商场盗窃手机一部，价值人民币{3000 + 500 * i}元。", ("盗窃罪",), (264,),
                         4 + i % 5, 1000 * (1 + i % 3) if i % 4 else None, False, source="cail") for i in range(12)]
    cases = judge + cail
    model = StructurePredictor(cases, STATUTES, encoder=FakeEncoder(), select=False,
                               lexical=LexicalVectors.fit([c.facts for c in cases], min_df=2))
    model.train(partial_rows=[c.id for c in cail[:8]])
    assert model.n_partial_rows == 8
    assert set(model.partial_use) == {"prison", "fine_present", "fine", "charge", "article"}
    assert all(set(v) == {"with_partial", "complete_only"} for v in model.partial_cv.values())
    assert "probation" not in model.partial_use  # CAIL says nothing of probation
    for kind, cv in model.partial_cv.items():  # the largest weight that does not cost the complete cases
        tried, floor = cv["with_partial"], cv["complete_only"] - TOL
        assert list(tried) == [str(w) for w in PARTIAL_WEIGHTS[: len(tried)]]
        assert all(score < floor for score in list(tried.values())[:-1])
        last_w, last = list(tried.items())[-1]
        assert model.partial_use[kind] == (float(last_w) if last >= floor else 0.0)
    model.save(tmp_path / "m", case_texts=False)
    man = json.loads((tmp_path / "m" / "manifest.json").read_text(encoding="utf-8"))
    assert man["partial_rows"]["n_cases"] == 8 and man["partial_rows"]["used_by"] == model.partial_use
    s = model.predict("被告人周某在超市盗窃商品，价值人民币5000元，到案后如实供述。")
    assert s.charges[0].name == "盗窃罪"


def test_cail_cases_searched_by_the_encoder_are_saved_at_half_precision_and_load_as_trained(tmp_path):
    """Without the n-gram vectors, every case (CAIL too) is a neighbour by the encoder: the CAIL cases give rows
    as partial-label cases, the neighbour vectors are held and saved at float16, and the loaded model (without
    case texts) predicts exactly as the trained one."""
    pytest.importorskip("lightgbm")
    import numpy as np
    from unit.judgment.test_structure import STATUTES, _cases

    from legalrag.judgment.labels import label_cases
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.testing import FakeEncoder

    facts, gold = _cases()
    judge = list(label_cases(facts, gold).cases)
    cail = [LabelledCase(f"cail-{i}", f"被告人王{i}在商场盗窃手机一部，价值人民币{3000 + 500 * i}元。", ("盗窃罪",), (264,),
                         4 + i % 5, 1000 * (1 + i % 3) if i % 4 else None, False, source="cail") for i in range(12)]
    model = StructurePredictor(judge + cail, STATUTES, encoder=FakeEncoder(), select=False)
    assert model.neighbours.ids[-1] == "cail-11"  # CAIL cases are neighbours by the encoder
    assert model.complete_neighbours.ids == [c.id for c in judge]  # general-part articles from JuDGE only
    model.train(partial_rows=[c.id for c in cail])
    assert model.n_partial_rows == 12 and set(model.partial_use) >= {"prison", "charge"}
    model.save(tmp_path / "m", case_texts=False)
    assert np.load(tmp_path / "m" / "neighbours.npy").dtype == np.float16
    loaded = StructurePredictor.load(tmp_path / "m", STATUTES, FakeEncoder())
    for text in ("被告人周某在超市盗窃商品，价值人民币5000元，到案后如实供述。", facts[judge[0].id]):
        assert loaded.predict(text).to_dict() == model.predict(text).to_dict()
