"""Structure prediction on tiny labelled cases: labels, training, evidence, save/load, the composed result,
bad input (no amount, unknown charge, long facts, unreadable judgments), and the reasoning-only drafter."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("lightgbm")

from legalrag.corpora.statutes import statute_document
from legalrag.errors import InputError
from legalrag.judgment.compose import compose_document, months_phrase, result_section, template_reasoning
from legalrag.judgment.draft import HEADING
from legalrag.judgment.extract import extract_fields
from legalrag.judgment.labels import label_case, label_cases
from legalrag.judgment.numbers import numbers_in
from legalrag.judgment.predict import StructurePredictor
from legalrag.judgment.ranges import statutory_range
from legalrag.judgment.signals import charge_mentions
from legalrag.numerals import to_chinese

STATUTES = [
    statute_document("264", "盗窃公私财物，数额较大的，或者多次盗窃的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金；"
                            "数额巨大的，处三年以上十年以下有期徒刑，并处罚金。", "中华人民共和国刑法第二百六十四条"),
    statute_document("133", "在道路上驾驶机动车，醉酒驾驶机动车的，处拘役，并处罚金。", "中华人民共和国刑法第一百三十三条"),
    statute_document("67", "犯罪以后自动投案，如实供述自己的罪行的，是自首。", "中华人民共和国刑法第六十七条"),
    statute_document("52", "判处罚金，应当根据犯罪情节决定罚金数额。", "中华人民共和国刑法第五十二条"),
]


def _gold(name: str, charge: str, months: int, fine: int, articles: list[int]) -> str:
    cite = "、".join(f"第{to_chinese(a)}条" for a in articles)
    return (HEADING + f"\n公诉机关指控被告人{name}犯{charge}。\n本院认为，被告人{name}的行为构成{charge}。依照《中华人民共和国刑法》"
            f"{cite}之规定，判决如下：\n被告人{name}犯{charge}，判处{months_phrase(months)}，并处罚金人民币{to_chinese(fine)}元。\n"
            "如不服本判决，可在接到判决书的第二日起十日内上诉。")


def _cases():
    facts, gold = {}, {}
    for i in range(8):
        cid = f"t{i}"
        amount = 2000 * (i + 1)
        facts[cid] = (f"公诉机关指控：被告人张{i}在超市盗窃商品，价值人民币{amount}元。被告人张{i}到案后如实供述，"
                      f"当庭自愿认罪。")
        gold[cid] = _gold(f"张{i}", "盗窃罪", 6 + i, 1000 * (i + 1), [264, 67, 52])
    for i in range(8):
        cid = f"d{i}"
        facts[cid] = (f"公诉机关指控：被告人李{i}醉酒驾驶机动车在道路上行驶，经鉴定血液中乙醇含量为{150 + 10 * i}mg/100ml。"
                      f"被告人李{i}主动投案。")
        gold[cid] = _gold(f"李{i}", "危险驾驶罪", 1 + i % 4, 2000 + 1000 * (i % 3), [133, 67, 52])
    return facts, gold


@pytest.fixture(scope="module")
def model():
    facts, gold = _cases()
    labels = label_cases(facts, gold)
    assert not labels.skipped
    return StructurePredictor(labels.cases, STATUTES, select=False).train()  # selection: test_judgment_selection.py


def test_labels_come_from_the_benchmark_extractor_and_unreadable_ones_are_counted():
    facts, gold = _cases()
    case = label_case("t1", facts["t1"], gold["t1"])
    assert case.charges == ("盗窃罪",) and case.prison_months == 7 and case.fine_yuan == 2000
    assert case.articles == (52, 67, 264)
    gold["bad"] = "这不是一份判决书。"
    facts["bad"] = "被告人某某。"
    report = label_cases(facts, gold)
    assert [s[0] for s in report.skipped] == ["bad"] and "charge" in report.skipped[0][1]
    assert isinstance(label_case("x", "事实", ""), str)


def test_predictions_follow_the_facts_and_carry_evidence(model):
    s = model.predict("公诉机关指控：被告人王某醉酒驾驶机动车，血液中乙醇含量为180mg/100ml。被告人王某主动投案。")
    assert s.charge_names == ["危险驾驶罪"]
    assert s.charges[0].evidence.get("keyword_positions"), "the facts' own words (醉酒驾驶) name the conduct"
    assert s.charges[0].evidence.get("vote", 0) > 0.5, "similar drunk-driving cases vote for the charge"
    assert 133 in s.article_numbers
    assert 1 <= s.prison.value <= 6  # clipped to the statutory range of art. 133 (拘役)
    assert s.prison.evidence["top_features"] is not None and s.prison.evidence["neighbours"]
    t = model.predict("公诉机关指控：被告人赵某在商场盗窃手机一部，价值人民币一万二千元。")
    assert t.charge_names == ["盗窃罪"] and 264 in t.article_numbers
    assert t.features.values["amount_max"] == 12000.0
    json.dumps(t.to_dict(), ensure_ascii=False)  # fully serialisable evidence


def test_similar_cases_vote_for_a_charge_the_facts_do_not_name(model):
    """Facts with no charge keyword and no named charge (拿走, not 盗窃): the charge comes from the similar cases."""
    facts = "公诉机关指控：被告人钱某趁店主不备拿走超市货架上的商品，价值人民币6000元。被告人钱某到案后如实供述，当庭自愿认罪。"
    s = model.predict(facts)
    top = s.charges[0]
    assert not top.evidence.get("keyword_positions") and not top.evidence.get("mentions")
    assert top.evidence.get("vote", 0) > 0.5, f"no neighbour vote behind {top.name}: evidence {top.evidence}"
    assert s.charge_names == ["盗窃罪"]


def test_the_composed_result_parses_to_exactly_the_prediction(model):
    s = model.predict("公诉机关指控：被告人赵某在商场盗窃手机一部，价值人民币8000元。")
    doc = compose_document("公诉机关指控：被告人赵某盗窃。", template_reasoning(s), s)
    f = extract_fields(doc)
    assert f.sections.parsed
    assert list(f.charges) == s.charge_names
    assert f.prison_months == s.prison.value
    assert f.fine_yuan == s.fine.value
    assert list(f.article_numbers) == s.article_numbers


@pytest.mark.parametrize("months", [1, 5, 6, 12, 18, 25, 36, 120, 179])
def test_months_phrase_reads_back(months):
    from legalrag.judgment.extract import term_months

    assert term_months(months_phrase(months)) == months


def test_fine_phrase_reads_back():
    for yuan in (1000, 2000, 15000, 20000, 120000, 1500000):
        assert numbers_in(f"罚金人民币{to_chinese(yuan)}元") == [yuan]


def test_no_amount_and_no_charge_gives_low_confidence_not_a_crash(model):
    s = model.predict("被告人于某日在某地与他人发生纠纷。")
    assert s.low_confidence
    assert s.charges and s.prison.value >= 1
    assert any("no amount" in n for n in s.notes)


def test_a_charge_outside_the_list_is_kept_and_flagged(model):
    assert charge_mentions("指控被告人钱某犯飞天遁地罪")[0].name == ""
    s = model.predict("公诉机关指控被告人钱某犯飞天遁地罪，在超市盗窃商品价值人民币3000元。")
    flagged = [c for c in s.charges if not c.listed]
    assert flagged and flagged[0].name == "飞天遁地罪"
    assert any("not in the charge list" in n for n in s.notes)
    assert "犯飞天遁地罪" not in result_section(s)  # the listed charge decides the result


def test_long_facts_and_contradictory_amounts_are_noted(model):
    s = model.predict("被告人孙某盗窃现金，共计1000元，后查明共计5000元。" + "经查。" * 4000)
    assert any("truncated" in n for n in s.notes)
    assert any("contradictory amounts" in n for n in s.notes)
    with pytest.raises(InputError):
        model.predict("   ")


def test_save_and_load_round_trip_without_pickle(model, tmp_path):
    model.save(tmp_path / "m")
    files = sorted(p.name for p in (tmp_path / "m").iterdir())
    assert "manifest.json" in files and "prison.lgb.txt" in files
    assert all(name.endswith((".json", ".jsonl", ".txt")) for name in files)
    again = StructurePredictor.load(tmp_path / "m", STATUTES)
    facts = "公诉机关指控：被告人周某在超市盗窃商品，价值人民币5000元。"
    a, b = model.predict(facts), again.predict(facts)
    assert a.to_dict() == b.to_dict()
    with pytest.raises(InputError):
        StructurePredictor.load(tmp_path, STATUTES)


def test_ablation_names_are_checked():
    facts, gold = _cases()
    with pytest.raises(InputError):
        StructurePredictor(label_cases(facts, gold).cases, STATUTES, disabled=["nonsense"])
    with pytest.raises(InputError):
        StructurePredictor([], STATUTES)


def test_the_prison_term_is_capped_by_the_charges_own_article_when_the_month_model_runs_high():
    """Drunk-driving cases labelled with terms of two years and more teach the month model to predict far above
    what art. 133-1 (拘役 only: at most six months) allows; the predictor must cap the term there, not at the
    range of art. 133 (交通肇事, up to fifteen years), the number JuDGE's corpus cites such cases under."""
    traffic = statute_document("133", "违反交通运输管理法规，因而发生重大事故，致人重伤、死亡或者使公私财产遭受重大损失的，"
                                      "处三年以下有期徒刑或者拘役；交通运输肇事后逃逸或者有其他特别恶劣情节的，处三年以上"
                                      "七年以下有期徒刑；因逃逸致人死亡的，处七年以上有期徒刑。", "中华人民共和国刑法第一百三十三条")
    statutes = [STATUTES[0], traffic, *STATUTES[2:]]
    facts, gold = _cases()
    for i in range(8):
        gold[f"d{i}"] = _gold(f"李{i}", "危险驾驶罪", 24 + i, 2000, [133, 67, 52])
    high = StructurePredictor(label_cases(facts, gold).cases, statutes, select=False).train()
    s = high.predict("公诉机关指控：被告人王某醉酒驾驶机动车，血液中乙醇含量为180mg/100ml。被告人王某主动投案。")
    assert s.charge_names == ["危险驾驶罪"]
    assert s.prison.raw > 12, f"the month model was meant to run high; raw {s.prison.raw:.1f}"
    assert s.prison.value <= 6, (f"prison {s.prison.value} months exceeds art. 133-1's 拘役 (at most 6); "
                                 f"evidence {s.prison.evidence.get('statutory_range')}")
    assert s.prison.evidence["statutory_range"] == {"article": "133-1", "months": [1, 6], "clipped": True}
    # several charges: the combined range of art. 69 over each charge's own article
    assert high._range_for(["盗窃罪", "危险驾驶罪"]) == ("264+133-1", (1, 126))
    assert high._range_for(["危险驾驶罪"]) == ("133-1", (1, 6))


def test_statutory_range_reads_tiers():
    assert statutory_range(STATUTES[0].text) == (1, 120)
    assert statutory_range("处十年以上有期徒刑、无期徒刑或者死刑") == (120, 240)
    assert statutory_range("是自首。") is None


def test_encoder_signal_cross_fitted_citation_pool_and_round_trip(tmp_path):
    """Neighbours and the citation first stage by an encoder, the citation set decision answered out of fold for
    the training cases, the charge read from the predicted article, and a model directory that names its encoder."""
    from legalrag.judgment.citesignal import train_cite
    from legalrag.retrieval.dense import DenseRetriever
    from legalrag.testing import FakeEncoder

    facts, gold = _cases()
    labels = label_cases(facts, gold)
    qrels = tmp_path / "train.jsonl"
    qrels.write_text("".join(json.dumps({"id": f"q{i}", "cited": c}) + "\n" for i, c in
                             enumerate([["264", "67", "52"], ["133", "67", "52"], ["264", "52"], ["133", "67"]] * 3)))
    enc = FakeEncoder()
    cite = train_cite(STATUTES, labels.cases, train_citations=qrels, retriever=DenseRetriever.build(STATUTES, enc),
                      encoder=enc)
    assert set(cite.fold_models) == set(range(5)) and cite.set_model is not None
    case = labels.cases[0]
    own = cite.predict_case(case.facts, case.id).pools["learned-set"]
    fold = cite.fold_of_case[case.id]
    assert case.id not in cite.fold_models[fold].trained_on  # its fold's set model never learned from it
    assert case.id in cite.set_model.trained_on
    model = StructurePredictor(labels.cases, STATUTES, cite=cite, encoder=enc, select=False).train()
    new = "公诉机关指控：被告人周某在超市盗窃商品，价值人民币5000元。被告人周某如实供述。"
    s = model.predict(new)
    assert s.charges[0].name == "盗窃罪" and own and s.prison.value >= 1
    model.save(tmp_path / "m")
    names = {p.name for p in (tmp_path / "m").iterdir()}
    assert {"neighbours.npy", "citepred", "citepred-articles"} <= names
    assert (tmp_path / "m" / "citepred" / "setmodel" / "spec.json").exists()
    again = StructurePredictor.load(tmp_path / "m", STATUTES, enc)
    assert again.predict(new).to_dict() == s.to_dict()
    with pytest.raises(InputError, match="reads encoder 'fake-hash-encoder'"):
        StructurePredictor.load(tmp_path / "m", STATUTES)

    # saved without the case texts (as a shipped model is): the same predictions, for a new case and for a
    # training case (never its own neighbour: its digest matches), and no fact of any labelled case on disk
    model.save(tmp_path / "bare", case_texts=False)
    on_disk = "".join(p.read_text(encoding="utf-8", errors="ignore") for p in (tmp_path / "bare").rglob("*")
                      if p.is_file() and p.suffix in (".jsonl", ".json"))
    assert not any(c.facts[:30] in on_disk for c in labels.cases)
    bare = StructurePredictor.load(tmp_path / "bare", STATUTES, enc)
    assert bare.predict(new).to_dict() == s.to_dict()
    own_case = labels.cases[3]
    assert bare.predict(own_case.facts).to_dict() == again.predict(own_case.facts).to_dict()
    assert own_case.id not in [n.id for n in bare.context(own_case.facts).neighbours]
    # used with another statute corpus, the citation first stage is encoded afresh rather than refused
    other = StructurePredictor.load(tmp_path / "bare", STATUTES[:3], enc)
    assert other.predict(new).charges[0].name == "盗窃罪"
    rows = (tmp_path / "bare" / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    (tmp_path / "bare" / "cases.jsonl").write_text("\n".join([rows[0].replace('"facts_sha256"', '"x"')] + rows[1:]),
                                                   encoding="utf-8")
    with pytest.raises(InputError, match="facts_sha256.*retrain or restore"):
        StructurePredictor.load(tmp_path / "bare", STATUTES, enc)
    with pytest.raises(ValueError, match="without the case texts"):
        StructurePredictor(labels.cases, STATUTES, select=False).save(tmp_path / "bm25", case_texts=False)


# ---------------------------------------------------------------------------- unknown charges, short facts, drafts

def test_a_charge_never_seen_in_training_is_reported_as_unknown_not_mapped(model):
    s = model.predict("公诉机关指控：被告人王某非法运输核材料出境，构成走私核材料罪。被告人王某到案后如实供述。")
    unknown = [c for c in s.charges if c.name == "走私核材料罪"]
    assert unknown and not unknown[0].listed and unknown[0].evidence["flag"].startswith("unknown")
    assert unknown[0].evidence["nearest_known"] and \
        {d["name"] for d in unknown[0].evidence["nearest_known"]} <= {"盗窃罪", "危险驾驶罪"}
    assert s.low_confidence and any("never seen in training" in n for n in s.notes)
    assert "走私核材料罪" not in [c.name for c in s.charges if c.listed]


def test_facts_too_short_give_the_top_charges_and_no_sentence(model):
    from legalrag.judgment.reasoned import ReasonedDrafter

    s = model.predict("张某偷了东西。")
    assert s.undecided and s.low_confidence and any("too short" in n for n in s.notes)
    assert s.prison.value is None and s.fine.value is None and s.probation.value is None and not s.articles
    assert s.charges and all(0.0 <= c.prob <= 1.0 for c in s.charges)
    with pytest.raises(InputError, match="too short"):
        ReasonedDrafter(model).draft("张某偷了东西。")


def test_a_draft_never_states_zishou_when_neither_facts_nor_structure_hold_it(model):
    from legalrag.judgment.grounding import repeated_paragraphs
    from legalrag.judgment.reasoned import ReasonedDrafter
    from legalrag.testing import ScriptedLLM

    facts = "公诉机关指控：被告人张某于2023年5月在某超市盗窃价值3000元的商品，到案后如实供述。"
    reply = json.dumps({"reasoning": "本院认为，被告人张某以非法占有为目的秘密窃取他人财物，其行为已构成盗窃罪。其主动投案，"
                                     "系自首，可以从轻处罚；被告人系累犯，应当从重处罚；到案后如实供述，系坦白。\n判决结果：被告人张某"
                                     "犯盗窃罪，判处有期徒刑六个月，并处罚金人民币二千元。"}, ensure_ascii=False)
    structure = model.predict(facts)
    assert not structure.features.present("自首")
    d = ReasonedDrafter(model, ScriptedLLM([reply])).draft(facts, structure=structure)
    assert d.source == "llm" and "自首" not in d.document and "累犯" not in d.document and "坦白" in d.document
    assert any("自首" in n for n in d.notes)
    assert repeated_paragraphs(d.document) == 0 and d.document.count("判处") == 1
    assert "公诉机关XX人民检察院" in d.document  # the facts name no procuratorate: a marked placeholder
    assert "自首" not in ReasonedDrafter(model).draft(facts, structure=structure).document  # the template too
