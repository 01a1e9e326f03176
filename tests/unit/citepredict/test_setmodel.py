"""The learned set decision of citation prediction and the dense similar-case memory: cross-fitting (a case is
never scored by a model that learned from it; excluded cases give no rows at all), the decision rule, the model
directory, and the pipeline stage."""

from types import SimpleNamespace

import numpy as np
import pytest
from support.citepred_corpus import PENAL_CODE

from legalrag.citepredict.cases import CaseMemory
from legalrag.citepredict.cocitation import CoCitationGraph
from legalrag.citepredict.data import Case
from legalrag.citepredict.pipeline import CitationPredictor, CiteConfig
from legalrag.citepredict.rules import learn_rules
from legalrag.citepredict.setmodel import COLUMNS, SetModel, cross_fit, decide, fit_booster, fold_of
from legalrag.errors import InputError
from legalrag.retrieval.index import build_index
from legalrag.testing import FakeEncoder
from legalrag.types import Document, Hit

CASES = [
    Case("c1", "The accused stole a bicycle from a parking lot and confessed on arrest.", frozenset({"1", "3"})),
    Case("c2", "The accused stole a phone from a shop, confessed, and was fined.", frozenset({"1", "3", "4"})),
    Case("c3", "The accused deceived a buyer online and obtained money by fraud.", frozenset({"2"})),
    Case("c4", "The accused deceived an old woman and obtained her savings by fraud; the attempt failed.",
         frozenset({"2", "5"})),
]
TOP = COLUMNS.index("top_score")


def result_for(case_no: int, labels: dict[str, float]) -> SimpleNamespace:
    """A pipeline result whose best retrieval score is ``case_no`` (a marker for the case in every feature row)."""
    hits = [Hit(document=Document(id=p, text=p), score=float(case_no) - i * 0.01, rank=i + 1, retriever="x")
            for i, p in enumerate(labels)]
    return SimpleNamespace(sources=hits, pools={"case-votes": dict(labels), "similar-cases": dict(labels)})


def make_training(n: int):
    rng = np.random.default_rng(3)
    results, gold = [], []
    for i in range(n):
        votes = {str(p): float(rng.uniform()) for p in range(1, 7)}
        results.append(result_for(i + 1, votes))
        gold.append({p for p, v in votes.items() if v > 0.5})
    return results, gold, [f"case{i + 1:03d}" for i in range(n)]


class Spy:
    """Records the case markers of the rows each fit learns from, then fits for real."""

    def __init__(self):
        self.calls: list[set[int]] = []

    def __call__(self, X, y):
        self.calls.append({int(round(v)) for v in X[:, TOP]})
        return fit_booster(X, y)


def test_cross_fit_never_scores_a_case_with_a_model_that_saw_it():
    ids = [f"k{i}" for i in range(12)]
    rows = [np.full((3, len(COLUMNS)), float(i + 1)) for i in range(12)]
    labels = [np.array([1, 0, i % 2]) for i in range(12)]
    spy = Spy()
    oof = cross_fit(ids, rows, labels, spy, folds=4)
    assign = fold_of(ids, 4)
    assert len(spy.calls) == 4 and len(oof) == 12
    for f, seen in enumerate(spy.calls):
        own = {i + 1 for i, c in enumerate(ids) if assign[c] == f}
        assert own and not (own & seen) and seen == set(range(1, 13)) - own


def test_set_model_never_learns_from_excluded_cases():
    results, gold, ids = make_training(40)
    excluded = set(ids[:15])  # e.g. the cases the retriever's encoder was trained on
    spy = Spy()
    model = SetModel.train(results, gold, ids, prior={}, exclude=excluded, fit=spy)
    markers_excluded = {i + 1 for i, c in enumerate(ids) if c in excluded}
    assert len(spy.calls) == 6  # five folds and the final model
    assert all(not (seen & markers_excluded) for seen in spy.calls)
    assert set(model.trained_on) == set(ids) - excluded and model.cv["excluded"] == 15
    assert model.rule in ("threshold", "size") and 0 < model.cv["oof_micro_f1"] <= 1
    with pytest.raises(InputError, match="at least 5 training cases"):
        SetModel.train(results, gold, ids, prior={}, exclude=set(ids[:37]))


def test_the_votes_carry_the_decision():
    results, gold, ids = make_training(120)
    model = SetModel.train(results, gold, ids, prior={})
    assert model.cv["oof_micro_f1"] > 0.8  # the gold set is the votes above 0.5: learnable out of fold
    new = result_for(500, {"1": 0.9, "2": 0.1, "3": 0.8, "4": 0.05})
    kept = {p for p, s in model.decision(new).items() if s >= 0.5}
    assert kept == {"1", "3"}


def test_decide_keeps_at_least_one_and_cuts_at_one_half():
    probs = np.array([0.2, 0.05, 0.1])
    assert list(decide(probs, "threshold", 0.5) >= 0.5) == [True, False, False]
    s = decide(np.array([0.9, 0.6, 0.3, 0.2]), "size", 0.0)  # sum 2.0: the top two
    assert list(s >= 0.5) == [True, True, False, False] and all(np.diff(s) < 0)


def test_dense_case_memory_votes_saves_and_checks_its_encoder(tmp_path):
    enc = FakeEncoder()
    mem = CaseMemory.build(CASES, encoder=enc)
    assert mem.dense
    votes = {v.provision: v for v in mem.propose("Someone stole a bicycle from a parking lot and confessed.", k=2)}
    assert {"1", "3"} <= set(votes) and votes["1"].cases[0] in ("c1", "c2")
    assert all("c1" not in v.cases for v in mem.propose(CASES[0].facts, k=3))  # never its own neighbour
    mem.save(tmp_path / "mem")
    assert CaseMemory.encoder_of(tmp_path / "mem") == enc.model_id
    q = "A fraud: she deceived a buyer to obtain money."
    assert CaseMemory.load(tmp_path / "mem", enc).propose(q, k=3) == mem.propose(q, k=3)
    with pytest.raises(InputError, match="built with encoder 'fake-hash-encoder'"):
        CaseMemory.load(tmp_path / "mem", FakeEncoder(model_id="other"))
    with pytest.raises(InputError, match="no encoder"):
        CaseMemory.load(tmp_path / "mem")


def test_a_dense_case_memory_saved_without_texts_votes_the_same_and_still_skips_its_own_case(tmp_path):
    enc = FakeEncoder()
    mem = CaseMemory.build(CASES, encoder=enc)
    mem.save(tmp_path / "mem", texts=False)
    stored = (tmp_path / "mem" / "cases.jsonl").read_text(encoding="utf-8")
    assert "bicycle" not in stored and "facts_sha256" in stored  # the facts are not shipped
    again = CaseMemory.load(tmp_path / "mem", enc)
    for q in ("A fraud: she deceived a buyer to obtain money.", CASES[0].facts, "  " + CASES[2].facts + "\n"):
        assert again.propose(q, k=3) == mem.propose(q, k=3)
    assert all("c1" not in v.cases for v in again.propose(CASES[0].facts, k=3))
    with pytest.raises(ValueError, match="only a dense case memory"):
        CaseMemory.build(CASES, lang="en").save(tmp_path / "bm25", texts=False)


def test_partial_label_cases_vote_only_for_what_their_labels_cover_and_int8_memories_load_as_built(tmp_path):
    """A case whose list holds only the specific-part articles (CAIL) votes for them, and a general-part article's
    share is taken over the complete neighbours only; an int8 memory is saved as codes and votes the same loaded."""
    enc = FakeEncoder()
    facts = "Someone stole a bicycle from a parking lot and confessed."
    judge = Case("j1", facts + " He returned it.", frozenset({"67", "264"}))  # general part 67, specific 264
    cail = Case("c1", facts + " At night.", frozenset({"264"}))
    plain = {v.provision: v.score for v in CaseMemory.build([judge, cail], encoder=enc).propose(facts, k=2)}
    mem = CaseMemory.build([judge, cail], encoder=enc, partial=["c1"], partial_above=101, int8=True)
    votes = {v.provision: v.score for v in mem.propose(facts, k=2)}
    assert plain["67"] < 1.0 and votes["67"] == pytest.approx(1.0)  # not diluted by the CAIL neighbour
    assert votes["264"] == pytest.approx(1.0) == plain["264"]
    mem.save(tmp_path / "mem", texts=False)
    assert (tmp_path / "mem" / "dense" / "vectors.i8.npy").exists()
    assert np.load(tmp_path / "mem" / "dense" / "vectors.i8.npy").dtype == np.int8
    again = CaseMemory.load(tmp_path / "mem", enc)
    assert again.partial == {"c1"} and again.partial_above == 101
    for q in (facts, "A fraud: she deceived a buyer to obtain money."):
        assert again.propose(q, k=2) == mem.propose(q, k=2)


def test_pipeline_stage_and_model_directory(tmp_path):
    from legalrag.citepredict.model import save_model
    from legalrag.citepredict.service import build_predictor

    index = build_index(tmp_path / "i", PENAL_CODE, ["bm25"], lang="en")
    train = {"t1": {"1", "3"}, "t2": {"2", "3"}, "t3": {"1", "4"}, "t4": {"2", "5"}}
    rules = learn_rules(train, always_share=0.9, min_support=5, min_confidence=0.9)
    cfg = CiteConfig(core_k=1, threshold=0.5, rerank_top=0, case_neighbours=2)
    mem = CaseMemory.build(CASES, lang="en")
    p = CitationPredictor(index.documents, index.retriever("bm25"), rules, CoCitationGraph.build(train), config=cfg,
                          cases=mem)
    train_res = [p.predict(c.facts) for c in CASES * 2]
    ids = [f"{c.id}-{k}" for k in range(2) for c in CASES]
    model = SetModel.train(train_res, [c.gold for c in CASES * 2], ids, prior={"1": 0.5, "2": 0.5})
    p.set_model = model
    r = p.predict("The accused deceived a buyer and obtained money by fraud.")
    dec = r.pools["learned-set"]
    assert set(r.provisions) == {q for q, s in dec.items() if s >= 0.5} and r.provisions
    assert any(v.stage == "learned-set" for c in r.predictions for v in c.provenance)
    save_model(tmp_path / "m", rules, p.graph, cfg.model_copy(update={"retriever": "bm25"}), mem, model)
    again = build_predictor(index, model_dir=tmp_path / "m")
    assert again.set_model is not None and again.set_model.rule == model.rule
    assert again.predict("The accused deceived a buyer and obtained money by fraud.").provisions == r.provisions
