"""Similar-case votes: a real BM25 case memory, its directory format, and the pipeline stage that uses it."""

import json

import pytest
from support.citepred_corpus import PENAL_CODE

from legalrag.citepredict.cases import CaseMemory
from legalrag.citepredict.cocitation import CoCitationGraph
from legalrag.citepredict.data import Case
from legalrag.citepredict.pipeline import STAGES, CitationPredictor, CiteConfig
from legalrag.citepredict.rules import learn_rules
from legalrag.errors import InputError
from legalrag.retrieval.index import build_index
from typer.testing import CliRunner

from legalrag.cli.apps import app

CASES = [
    Case("c1", "The accused stole a bicycle from a parking lot and confessed on arrest.", frozenset({"1", "3"})),
    Case("c2", "The accused stole a phone from a shop, confessed, and was fined.", frozenset({"1", "3", "4"})),
    Case("c3", "The accused deceived a buyer online and obtained money by fraud.", frozenset({"2"})),
    Case("c4", "The accused deceived an old woman and obtained her savings by fraud; the attempt failed.",
         frozenset({"2", "5"})),
]


@pytest.fixture(scope="module")
def memory():
    return CaseMemory.build(CASES, lang="en")


def test_neighbours_vote_with_relative_weights(memory):
    votes = memory.propose("Someone stole a bicycle and confessed.", k=2)
    by = {v.provision: v for v in votes}
    assert set(by) == {"1", "3", "4"}  # the two theft cases are the two nearest
    assert by["1"].score == pytest.approx(1.0) and by["3"].score == pytest.approx(1.0)
    assert 0 < by["4"].score < 1 and by["4"].cases == ("c2",)
    assert votes[-1].provision == "4"  # sorted by score


def test_a_case_never_votes_for_itself(memory):
    votes = memory.propose(CASES[0].facts, k=1)
    assert votes and all("c1" not in v.cases for v in votes)
    assert {v.provision for v in votes} == {"1", "3", "4"}  # its nearest other case is c2


def test_no_overlap_gives_no_votes(memory):
    assert memory.propose("zzz qqq", k=3) == []


def test_save_and_load_round_trip(memory, tmp_path):
    memory.save(tmp_path / "mem")
    assert json.loads((tmp_path / "mem" / "cases.jsonl").read_text().splitlines()[0])["cited"] == ["1", "3"]
    again = CaseMemory.load(tmp_path / "mem")
    q = "A fraud: she deceived a buyer to obtain money."
    assert again.propose(q, k=3) == memory.propose(q, k=3) and len(again) == 4


def test_bad_input(tmp_path):
    with pytest.raises(InputError, match="labelled cases"):
        CaseMemory.build([Case("x", "facts only", frozenset())])
    with pytest.raises(InputError, match="cases.jsonl missing"):
        CaseMemory.load(tmp_path)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "cases.jsonl").write_text('{"id": "a", "facts": "x"}\n')
    with pytest.raises(InputError) as err:
        CaseMemory.load(tmp_path / "m")
    assert "cases.jsonl:1:" in str(err.value) and "cited" in str(err.value)


DOCS = PENAL_CODE
TRAIN = {"t1": {"1", "3"}, "t2": {"2", "3"}, "t3": {"1", "4"}}


def test_pipeline_stage_mixes_votes_and_keeps_provenance(memory, tmp_path):
    index = build_index(tmp_path / "i", DOCS, ["bm25"], lang="en")
    rules = learn_rules(TRAIN, always_share=0.9, min_support=5, min_confidence=0.9)  # no rules fire
    p = CitationPredictor(index.documents, index.retriever("bm25"), rules, CoCitationGraph.build(TRAIN),
                          config=CiteConfig(core_k=1, threshold=0.5, rerank_top=0, use_cocitation=False,
                                            case_neighbours=2, case_weight=0.9), cases=memory)
    r = p.predict("The accused deceived a buyer and obtained money by fraud; the attempt failed.")
    assert "similar-cases" in STAGES and set(r.pools) == set(STAGES) | {"case-votes"}
    assert r.pools["co-citation"] == {"2": 1.0}
    # both fraud cases vote for 2; only c4 votes for 5, with its weight relative to the nearest case
    pool = r.pools["similar-cases"]
    assert pool["2"] == pytest.approx(0.1 + 0.9)
    assert 0 < pool["5"] < 0.9 and set(pool) == {"2", "5"}
    by = {c.provision: c for c in r.predictions}
    assert by["2"].provenance[-1].stage == "similar-cases"
    assert "most similar labelled cases (c" in by["2"].provenance[-1].detail
    without = CitationPredictor(index.documents, index.retriever("bm25"), rules, CoCitationGraph.build(TRAIN),
                                config=CiteConfig(core_k=1, threshold=0.5, rerank_top=0, use_cases=False),
                                cases=memory).predict("The accused deceived a buyer by fraud.")
    assert without.pools["similar-cases"] == without.pools["co-citation"]


def test_eval_cite_case_memory_dev_and_saved_model(tmp_path):
    build_index(tmp_path / "idx", DOCS, ["bm25"], lang="en")
    more = [Case("c5", "The accused stole a wallet and confessed.", frozenset({"1", "3"})),
            Case("c6", "The accused deceived a company and obtained goods by fraud.", frozenset({"2"}))]
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({"text_id": c.id, "text": c.facts, "la": sorted(c.gold)}) + "\n"
                             for c in CASES + more))
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps({"id": k, "cited": sorted(v)}) + "\n" for k, v in TRAIN.items()))
    args = ["eval", "cite", "--index", str(tmp_path / "idx"), "--cases", str(cases), "-o", f"train_citations={train}",
            "-o", "case_memory=dev", "--no-progress"]
    r = CliRunner().invoke(app, [*args, "-o", "dev=4", "--out", str(tmp_path / "model"), "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["n_cases"] == 2 and rep["n_dev"] == 4
    assert [s["stage"] for s in rep["stages"]][-3:] == ["+ similar cases", "+ learned set", "+ verification"]
    assert (tmp_path / "model" / "cases" / "cases.jsonl").exists()
    r = CliRunner().invoke(app, ["cite", "--index", str(tmp_path / "idx"), "--model-dir", str(tmp_path / "model"),
                                 "--json", "The accused stole a scooter and confessed at once."])
    assert r.exit_code == 0, r.output
    pred = json.loads(r.output)
    by = {p["id"]: [v["stage"] for v in p["provenance"]] for p in pred["provisions"]}
    assert "similar-cases" in by["1"] and "similar-cases" in by["3"]
    r = CliRunner().invoke(app, args)  # no --dev: nothing to build the memory from
    assert r.exit_code != 0 and "dev=N" in str(r.exception)
