"""The citation pipeline end to end on a tiny English corpus with a real BM25 index (no LLM here)."""

import pytest
from support.citepred_corpus import PENAL_CODE

from legalrag.citepredict.cocitation import CoCitationGraph
from legalrag.citepredict.codefilter import filter_report, match_codes
from legalrag.citepredict.pipeline import STAGES, CitationPredictor, CiteConfig
from legalrag.citepredict.rules import learn_rules
from legalrag.citepredict.select import calibrate_threshold, calibrate_top_k, select
from legalrag.corpora.statutes import statute_document
from legalrag.errors import InputError
from legalrag.retrieval.index import build_index

DOCS = [
    *PENAL_CODE,
    statute_document("9", "Traffic on public roads is regulated by the road code.", "Road Code Art. 9"),
]
# Theft decisions cite 1, 3 and usually 4; fraud decisions cite 2, 3 and often 5. Article 3 is in all six.
TRAIN = {"t1": {"1", "3", "4"}, "t2": {"1", "3", "4"}, "t3": {"1", "3"},
         "f1": {"2", "3", "5"}, "f2": {"2", "3"}, "f3": {"2", "3", "5"}}


@pytest.fixture(scope="module")
def predictor_parts(tmp_path_factory):
    index = build_index(tmp_path_factory.mktemp("idx") / "i", DOCS, ["bm25"], lang="en")
    rules = learn_rules(TRAIN, always_share=0.5, min_support=2, min_confidence=0.6)
    return index, rules, CoCitationGraph.build(TRAIN)


def test_stages_and_provenance(predictor_parts):
    index, rules, graph = predictor_parts
    p = CitationPredictor(index.documents, index.retriever("bm25"), rules, graph,
                          config=CiteConfig(core_k=1, threshold=0.5, rerank_top=0))
    r = p.predict("He steals a bicycle, the property of another person.")
    assert r.ranking[0] == "1" and "9" not in r.ranking  # 9 is never cited in training: seen_only drops it
    assert r.pools["retrieval"] == {"1": 1.0} and r.pools["rerank"] == {"1": 1.0}
    assert r.pools["always-add"] == {"1": 1.0, "3": 1.0}
    # Cluster: 4 is cited in 2 of the 3 decisions citing 1.
    assert r.pools["clusters"] == {"1": 1.0, "3": 1.0, "4": pytest.approx(0.6667)}
    # The nearest training decisions (t1, t2, t3) cite nothing beyond {1, 3, 4}.
    assert r.pools["co-citation"] == r.pools["clusters"] == r.pools["verification"]
    assert r.provisions == ["1", "3", "4"]
    by = {c.provision: c for c in r.predictions}
    assert [v.stage for v in by["1"].provenance] == ["retrieval"]
    assert [v.stage for v in by["3"].provenance] == ["always-add"]
    assert by["4"].provenance[0].detail.startswith("cited in 67% of the 3 decisions citing 1")
    assert by["4"].title == "Penal Code Art. 4" and all(c.resolved for c in r.predictions)
    assert r.llm_calls == 0 and set(r.pools) == set(STAGES)


def test_cocitation_stage_adds_what_rules_miss(predictor_parts):
    index, _, graph = predictor_parts
    strict = learn_rules(TRAIN, always_share=0.5, min_support=2, min_confidence=0.9)  # no cluster for 2
    p = CitationPredictor(index.documents, index.retriever("bm25"), strict, graph,
                          config=CiteConfig(core_k=1, threshold=0.5, rerank_top=0))
    r = p.predict("She deceives a shop to obtain property by fraud.")
    assert r.ranking[0] == "2"
    assert "5" not in r.pools["clusters"]
    # Neighbours f1, f3 (cosine 1) and f2 both cite 2; 5 is co-cited by f1 and f3: 2 / (2 + cos(f2)).
    assert r.pools["co-citation"]["5"] > 0.5 and "5" in r.provisions
    assert [v.stage for v in r.predictions[[c.provision for c in r.predictions].index("5")].provenance] == \
        ["co-citation"]


def test_llm_stages_need_an_llm(predictor_parts):
    index, rules, graph = predictor_parts
    with pytest.raises(InputError, match="need an LLM"):
        CitationPredictor(index.documents, index.retriever("bm25"), rules, graph, config=CiteConfig(verify=True))
    with pytest.raises(Exception, match="extra"):
        CiteConfig(bogus=1)


def test_selection_calibration():
    pools = [{"a": 1.0, "b": 0.6, "c": 0.3}, {"a": 1.0, "d": 0.4}]
    gold = [{"a", "b"}, {"a", "d"}]
    # t = 0.4 keeps a, b | a, d: perfect; t = 0.3 adds the wrong c.
    assert calibrate_threshold(pools, gold) == (0.4, 1.0)
    # ties (0.3, 0.5 and 0.6 all perfect) go to the highest threshold
    assert calibrate_threshold([{"a": 1.0, "b": 0.6}], [{"a", "b"}], grid=[0.3, 0.5, 0.6]) == (0.6, 1.0)
    assert select(pools[0], 0.5) == {"a", "b"}
    assert calibrate_top_k([["a", "b", "c"], ["a", "d", "x"]], gold, max_k=3) == (2, 1.0)


def test_code_filter_report():
    titles = ["Penal Code", "Road Code"]
    assert match_codes(["penal"], titles) == []  # containment is case-sensitive, exact strings only
    assert match_codes(["Penal Code Art. 1"], titles) == ["Penal Code"]
    assert match_codes(["Penal Code", "Road"], titles) == ["Penal Code", "Road Code"]
    rep = filter_report(DOCS, [["Penal Code"], ["nothing"]], [{"1", "9"}, {"2"}])
    # Case 1: filtered to 5 of 6 documents, keeps gold 1 but not 9; case 2: unfiltered.
    assert rep.filtered_cases == 1 and rep.gold_kept == pytest.approx(2 / 3)
    assert rep.space_kept == pytest.approx((5 / 6 + 1) / 2)


def test_core_max_share_leaves_widely_cited_provisions_to_the_rules(predictor_parts):
    index, rules, graph = predictor_parts
    p = CitationPredictor(index.documents, index.retriever("bm25"), rules, graph,
                          config=CiteConfig(core_k=1, threshold=0.5, rerank_top=0, core_max_share=0.4))
    r = p.predict("He steals a bicycle, the property of another person; an attempted crime.")
    # 1 and 2 are each cited by 3 of 6 decisions (> 40%), 3 by all: the core is 5, the best of the rest.
    assert r.ranking[0] == "1" and r.pools["retrieval"] == {"5": 1.0}


def test_compare_stages_pairs_the_same_cases(predictor_parts):
    from legalrag.citepredict.evaluate import ROWS, compare_stages, report

    index, rules, graph = predictor_parts
    facts = ["He steals a bicycle, the property of another person.", "She deceives a shop to obtain property by fraud."]
    gold = [{"1", "3", "4"}, {"2", "3", "5"}]
    full = CitationPredictor(index.documents, index.retriever("bm25"), rules, graph,
                             config=CiteConfig(core_k=1, threshold=0.5, rerank_top=0))
    strict = learn_rules(TRAIN, always_share=0.5, min_support=2, min_confidence=0.9)
    thin = CitationPredictor(index.documents, index.retriever("bm25"), strict,
                             CoCitationGraph.build({"t1": TRAIN["t1"], "f2": TRAIN["f2"]}),
                             config=CiteConfig(core_k=1, threshold=0.5, rerank_top=0))
    a, b = [full.predict(f) for f in facts], [thin.predict(f) for f in facts]
    sel = {row: (("top", 1.0) if src in ("ranking", "reranked") else ("threshold", 0.5)) for row, src in ROWS}
    same = compare_stages(a, a, gold, sel, trials=200)
    assert all(v == {"macro_f1_diff": 0.0, "p": 1.0} for v in same.values())
    diff = compare_stages(a, b, gold, sel, trials=200)
    ra, rb = report(a, gold, sel), report(b, gold, sel)
    for row_a, row_b in zip(ra.rows, rb.rows):
        assert diff[row_a.stage]["macro_f1_diff"] == pytest.approx(row_a.macro_f1 - row_b.macro_f1, abs=1e-3)
        assert 0.0 < diff[row_a.stage]["p"] <= 1.0
    assert diff["+ co-citation"]["macro_f1_diff"] > 0  # the graph adds 5 to the fraud case; the thin run has none
    with pytest.raises(ValueError, match="must match"):
        compare_stages(a, b[:1], gold, sel)
