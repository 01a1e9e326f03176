"""The LLM stages of the citation pipeline with the real embedded 0.5B model (``small_llm``); kept short."""

import pytest

from legalrag.citepredict.cocitation import CoCitationGraph
from legalrag.citepredict.pipeline import CitationPredictor, CiteConfig
from legalrag.citepredict.rules import learn_rules
from legalrag.citepredict.verify import Proposal, verify_all
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


def predictor(tmp_path, llm, reranker=None, **config) -> CitationPredictor:
    """The pipeline over the four-article corpus and TRAIN's rules, with the given CiteConfig settings."""
    index = build_index(tmp_path / "i", DOCS, ["bm25"], lang="en")
    rules = learn_rules(TRAIN, always_share=0.5, min_support=2, min_confidence=0.6)
    return CitationPredictor(index.documents, index.retriever("bm25"), rules, CoCitationGraph.build(TRAIN),
                             config=CiteConfig(verify=True, verify_below=1.01, threshold=0.5, language="en", **config),
                             llm=llm, reranker=reranker)


def test_verification_concurrent_and_in_order(small_llm):
    lookup = {d.id: d for d in DOCS}.get
    out = verify_all(small_llm, FACTS, [Proposal("4", "cluster"), Proposal("2", "co-citation")], lookup,
                     concurrency=2)
    assert [v.provision for v, _ in out] == ["4", "2"]
    for verdict, step in out:
        assert verdict.decision in ("accept", "reject", "correct") and verdict.calls >= 1
        assert step.agent == "cite-verify" and step.action == verdict.decision


def test_pipeline_with_analysis_and_verification(small_llm, tmp_path):
    p = predictor(tmp_path, small_llm, analysis=True, rerank_top=0)
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


def test_batched_verification_one_call_in_order(small_llm):
    from legalrag.citepredict.verify import verify_batch

    lookup = {d.id: d for d in DOCS}.get
    verdicts, step = verify_batch(small_llm, FACTS, [Proposal("4", "cluster"), Proposal("2", "co-citation")], lookup)
    # the schema fixes the ids and the count, so the 0.5B's reply parses and covers both, in the input order
    assert [v.provision for v in verdicts] == ["4", "2"] and all(v.parsed for v in verdicts)
    assert all(v.decision in ("accept", "reject", "correct") for v in verdicts)
    assert [v.calls for v in verdicts][1] == 0 and verdicts[0].calls >= 1  # one call, counted once
    assert step.agent == "cite-verify" and step.action == "batch" and step.input == ["4", "2"]
    assert [o["decision"] for o in step.output] == [v.decision for v in verdicts] and step.error is None


def test_pipeline_batched_verification_same_steps_as_additions(small_llm, tmp_path):
    p = predictor(tmp_path, small_llm, verify_batch=True, rerank_top=0)
    r = p.predict(FACTS)
    batch = [s for s in r.steps if s.agent == "cite-verify"]
    additions = [x for x in r.pools["co-citation"] if x not in r.pools["rerank"] and r.pools["co-citation"][x] >= 0.5]
    assert additions and len(batch) == 1 and sorted(batch[0].input) == sorted(additions)
    assert r.llm_calls == sum(1 for _ in batch) + (batch[0].error is not None)  # one call (a re-ask only on error)
    for out in batch[0].output:  # a rejected or corrected provision leaves the pool under its own id
        assert (out["decision"] in ("reject", "correct")) == (out["provision"] not in r.pools["verification"])
        if out["decision"] == "correct" and out["resolved"]:
            assert out["corrected"] in r.pools["verification"]


def test_case_first_layout_shares_the_facts_prefix():
    from legalrag.citepredict.prompting import stage_prompt

    facts = FACTS * 3
    stages = {"analysis": {"language": "English", "codes": "Penal Code"}, "rerank": {"article": "Art. 1 ..."},
              "verify": {"provision_id": "4", "provision": "Art. 4 ...", "reason": "cluster"},
              "verify_batch": {"proposals": "[1] id 4\nArt. 4 ..."}}
    first = {s: stage_prompt(s, facts, case_first=True, **v) for s, v in stages.items()}
    systems = {m[0]["content"] for m in first.values()}
    assert len(systems) == 1 and facts.strip() in systems.pop()  # one identical opening holding the facts
    assert all(facts.strip() not in m[1]["content"] for m in first.values())  # and the facts only there
    # the per-stage layout opens each stage differently (no rerank template of its own: the reranker's)
    per_stage = {s: stage_prompt(s, facts, case_first=False, **v) for s, v in stages.items() if s != "rerank"}
    assert len({m[0]["content"] for m in per_stage.values()}) == 3


def test_case_first_calls_reuse_the_runtime_prompt_cache(small_llm):
    from legalrag.citepredict.prompting import stage_prompt
    from legalrag.llm.base import ChatRequest

    facts = FACTS * 6
    a = small_llm.chat(ChatRequest(messages=tuple(stage_prompt("analysis", facts, case_first=True,
                                                               language="English", codes="Penal Code")), max_tokens=2))
    v = small_llm.chat(ChatRequest(messages=tuple(stage_prompt("verify", facts, case_first=True, provision_id="4",
                                                               provision="Art. 4 ...", reason="cluster")), max_tokens=2))
    shared = small_llm.count_tokens(stage_prompt("verify", facts, case_first=True, provision_id="4",
                                                 provision="", reason="")[:1])
    assert a.prompt_tokens > shared > 100
    # the runtime evaluated only what follows the shared system message (give or take the chat template)
    assert v.timings["prompt_n"] <= v.prompt_tokens - shared + 8


def test_case_first_pipeline_reranks_in_the_case_layout(small_llm, tmp_path):
    from legalrag.rerank.llm_pointwise import LLMPointwiseReranker

    reranker = LLMPointwiseReranker(small_llm, prompts=("en",))
    p = predictor(tmp_path, small_llm, reranker, case_first=True, verify_batch=True, rerank_top=2)
    # facts that retrieve the two provisions outside the always-add set (1 and 3 are always added here)
    r = p.predict("The accused deceived another to obtain property; a fine is set for the crime.")
    rerank = next(s for s in r.steps if s.action == "rerank")
    assert len(rerank.input) == 2 and reranker.stats.usage.calls == 2 and reranker.stats.unscored == 0
    assert r.reranked[:2] == tuple(h for h, _ in rerank.output)
