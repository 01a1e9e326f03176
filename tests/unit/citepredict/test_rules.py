"""Rules and co-citation on a tiny synthetic citation set whose expected outputs are worked out by hand.

Training decisions (N = 4):
    d1 {A, B, X}   d2 {A, B, Y}   d3 {A, C, X}   d4 {A, B, X, Z}
Counts: A 4, B 3, X 3, C 1, Y 1, Z 1.
"""

import json
import math

import numpy as np
import pytest

from legalrag.citepredict.cocitation import CoCitationGraph
from legalrag.citepredict.data import Case, load_cases, load_citation_sets, split_dev_eval
from legalrag.citepredict.rules import apply_rules, learn_rules, load_rules, natural_key, save_rules
from legalrag.errors import IndexError_, InputError

SETS = {"d1": {"A", "B", "X"}, "d2": {"A", "B", "Y"}, "d3": {"A", "C", "X"}, "d4": {"A", "B", "X", "Z"}}


def test_learn_rules_by_hand():
    r = learn_rules(SETS, always_share=0.9, min_support=2, min_confidence=0.6)
    assert r.n_decisions == 4
    # A is cited by 4/4 > 90%: always-add. B and X co-occur in d1, d4: support 2, confidence 2/3 either way.
    assert [(a.provision, a.share) for a in r.always_add] == [("A", 1.0)]
    got = {c.trigger: [(m.provision, m.confidence, m.support) for m in c.members] for c in r.clusters}
    assert got == {"B": [("X", 0.6667, 2)], "X": [("B", 0.6667, 2)]}
    # Confidence 2/3 is below a 0.7 threshold: no clusters at all.
    assert learn_rules(SETS, always_share=0.9, min_support=2, min_confidence=0.7).clusters == []


def test_apply_rules():
    r = learn_rules(SETS, always_share=0.9, min_support=2, min_confidence=0.6)
    props = apply_rules(r, ["B"])
    assert [(p.provision, p.score, p.rule) for p in props] == [("A", 1.0, "always-add"), ("X", 0.6667, "cluster:B")]
    assert [p.provision for p in apply_rules(r, ["B"], use_always=False)] == ["X"]
    assert apply_rules(r, ["C"], use_always=False) == []


def test_charge_trigger_from_edited_file(tmp_path):
    r = learn_rules(SETS, always_share=0.9, min_support=2, min_confidence=0.6)
    path = tmp_path / "rules.json"
    save_rules(path, r)
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw["_comment"] and raw["_always_add_comment"] and raw["format"] == "legalrag-cite-rules"
    raw["clusters"].append({"trigger": "theft", "trigger_kind": "charge",
                            "members": [{"provision": "Z", "confidence": 0.9, "support": 0}]})
    path.write_text(json.dumps(raw), encoding="utf-8")
    edited = load_rules(path)
    assert [p.provision for p in apply_rules(edited, [], charges=["theft"], use_always=False)] == ["Z"]


def test_rules_round_trip_and_bad_files(tmp_path):
    r = learn_rules(SETS, always_share=0.9, min_support=2, min_confidence=0.6)
    path = tmp_path / "rules.json"
    save_rules(path, r)
    assert load_rules(path) == r
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["always_add"][0]["share"] = 1.5
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(InputError, match=r"rules.json \(field 'always_add.0.share'\)"):
        load_rules(path)
    raw["always_add"][0]["share"] = 1.0
    raw["clusters"][0]["bogus"] = 1
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(InputError, match="clusters.0.bogus"):
        load_rules(path)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        load_rules(path)
    path.write_text('{"always_add": []}', encoding="utf-8")
    with pytest.raises(InputError, match="not a rules file"):
        load_rules(path)
    with pytest.raises(InputError, match="not found"):
        load_rules(tmp_path / "missing.json")


def test_cocitation_by_hand():
    g = CoCitationGraph.build(SETS)
    b, y, z = math.log(4 / 3), math.log(4), math.log(4)
    assert g.idf[g.index["A"]] == 0.0 and g.idf[g.index["B"]] == pytest.approx(b)
    # Query {B}: cosine with d1 {A,B,X} = b^2 / (b * sqrt(b^2 + b^2)) = 1/sqrt(2); with d2 {A,B,Y} = b / sqrt(b^2 + y^2);
    # with d4 {A,B,X,Z} = b / sqrt(2 b^2 + z^2); d3 has no B.
    s1, s2, s4 = 1 / math.sqrt(2), b / math.sqrt(b * b + y * y), b / math.sqrt(2 * b * b + z * z)
    near = g.nearest(["B"], k=3)
    assert [d for d, _ in near] == ["d1", "d2", "d4"]
    assert [s for _, s in near] == pytest.approx([s1, s2, s4])
    props = g.propose(["B"], k=2)  # neighbours d1, d2
    total = s1 + s2
    assert [p.provision for p in props] == ["A", "X", "Y"]
    assert [p.score for p in props] == pytest.approx([1.0, s1 / total, s2 / total], abs=1e-6)
    assert [p.neighbours for p in props] == [2, 1, 1]
    # A alone has IDF 0: it says nothing about which decisions are alike.
    assert g.propose(["A"]) == []
    assert g.related("B") == [("A", 1.0), ("X", pytest.approx(2 / 3)), ("Y", pytest.approx(1 / 3)),
                              ("Z", pytest.approx(1 / 3))]


def test_cocitation_round_trip_and_corruption(tmp_path):
    g = CoCitationGraph.build(SETS)
    g.save(tmp_path / "g")
    assert sorted(p.name for p in (tmp_path / "g").iterdir()) == ["indices.npy", "indptr.npy", "meta.json"]
    h = CoCitationGraph.load(tmp_path / "g")
    assert h.propose(["B", "Z"], k=3) == g.propose(["B", "Z"], k=3)
    np.save(tmp_path / "g" / "indptr.npy", np.array([0, 1], dtype=np.int64))
    with pytest.raises(IndexError_, match="do not match"):
        CoCitationGraph.load(tmp_path / "g")
    (tmp_path / "g" / "indices.npy").unlink()
    with pytest.raises(IndexError_, match="indices.npy missing"):
        CoCitationGraph.load(tmp_path / "g")


def test_citation_and_case_files(tmp_path):
    q = tmp_path / "qrels"
    q.write_text("d1 0 10 1\nd1 0 2 1\nd2 0 3 0\nd2 0 4 1\n", encoding="utf-8")
    assert load_citation_sets(q) == {"d1": frozenset({"10", "2"}), "d2": frozenset({"4"})}
    q.write_text("d1 0 10 1\nd1 10\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"qrels:2: expected 4 columns"):
        load_citation_sets(q)
    j = tmp_path / "sets.jsonl"
    j.write_text('{"id": "x", "cited": ["1", 2]}\n{"id": "y", "cited": "oops"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"sets.jsonl:2 \(field 'cited'\)"):
        load_citation_sets(j)
    c = tmp_path / "cases.jsonl"
    c.write_text('{"text_id": "b", "text": "f2", "la": "[1, 2]"}\n{"text_id": "a", "text": "f1", "la": [3]}\n',
                 encoding="utf-8")
    cases = load_cases(c)
    assert cases[1] == Case("a", "f1", frozenset({"3"}))
    dev, ev = split_dev_eval(cases, n_dev=1)
    assert [x.id for x in dev] == ["a"] and [x.id for x in ev] == ["b"]
    c.write_text('{"text_id": "b", "text": "f2"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="no gold citations"):
        load_cases(c)


def test_natural_key():
    assert sorted(["10", "2", "10-1", "a", "1"], key=natural_key) == ["1", "2", "10", "10-1", "a"]
