"""The LLM stages of the citation pipeline with the real embedded 0.5B model (``small_llm``); kept short."""

import pytest

from legalrag.citepred.cocitation import CoCitationGraph
from legalrag.citepred.pipeline import CitationPredictor, CiteConfig
from legalrag.citepred.rules import learn_rules
from legalrag.citepred.verify import Proposal, verify_all
from legalrag.corpora.statutes import statute_document
from legalrag.retrieval.index import build_index

pytestmark = pytest.mark.llm

DOCS = [
    statute_document("1", "Whoever steals property of another shall be punished for theft.", "Penal Code Art. 1"),
    statute_document("2", "Whoever deceives another to obtain property shall be punished for fraud.", "Penal Code Art. 2"),
    statute_document("3", "An offender who confesses truthfully may receive a lighter punishment.", "Penal Code Art. 3"),
    statute_document("4", "A fine is set according to the circumstances of the crime.", "Penal Code Art. 4"),
]
TRAIN = {"t1": {"1", "3", "4"}, "t2": {"1", "3", "4"}, "t3": {"1", "3"}, "f1": {"2", "3"}, "f2": {"2", "3"}}
FACTS = "On 3 May the accused stole a bicycle worth 900 euros from a shop and later confessed to the police."


def test_verification_concurrent_and_in_order(small_llm):
    lookup = {d.id: d for d in DOCS}.get
    out = verify_all(small_llm, FACTS, [Proposal("4", "cluster"), Proposal("2", "co-citation")], lookup,
                     concurrency=2)
    assert [v.provision for v, _ in out] == ["4", "2"]
    for verdict, step in out:
        assert verdict.decision in ("accept", "reject", "correct") and verdict.calls >= 1
        assert step.agent == "cite-verify" and step.action == verdict.decision


def test_pipeline_with_analysis_and_verification(small_llm, tmp_path):
    index = build_index(tmp_path / "i", DOCS, ["bm25"], lang="en")
    rules = learn_rules(TRAIN, always_share=0.5, min_support=2, min_confidence=0.6)
    p = CitationPredictor(index.documents, index.retriever("bm25"), rules, CoCitationGraph.build(TRAIN),
                          config=CiteConfig(analysis=True, verify=True, verify_below=1.01, threshold=0.5,
                                            rerank_top=0, language="en"), llm=small_llm)
    r = p.predict(FACTS)
    assert r.analysis is not None and [s.action for s in r.steps][:2] == ["analyse", "retrieve"]
    # The analysis reply is constrained to the schema, so it parses into lists of strings.
    assert r.steps[0].error is None and r.analysis.calls >= 1
    assert all(isinstance(x, str) and x for x in r.analysis.issues + r.analysis.codes + r.analysis.keywords)
    verified = [s for s in r.steps if s.agent == "cite-verify"]
    additions = [x for x in r.pools["co-citation"] if x not in r.pools["rerank"] and r.pools["co-citation"][x] >= 0.5]
    assert sorted(s.input for s in verified) == sorted(additions) and additions
    assert r.llm_calls >= 1 + len(additions)
    # What verification rejected is gone; everything kept has a verification provenance entry.
    for s in verified:
        if s.action == "reject":
            assert s.input not in r.pools["verification"]
    for c in r.predictions:
        if c.provision in additions and c.provision in r.pools["verification"]:
            assert c.provenance[-1].stage == "verification"
