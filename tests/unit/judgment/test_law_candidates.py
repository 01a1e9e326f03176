"""Charges proposed from their law text: a charge no training case carries is found through its article."""

from __future__ import annotations

import pytest

from legalrag.judgment.charges import by_name
from legalrag.judgment.law_candidates import LawCandidates, recall
from legalrag.testing import FakeEncoder

ASSAULT = "公诉机关指控：被告人孙某暴力袭击正在依法执行职务的人民警察，致民警轻微伤。被告人孙某到案后如实供述。"
CHARGES = [by_name()[n] for n in ("盗窃罪", "危险驾驶罪", "袭警罪", "诈骗罪")]


def test_the_law_text_proposes_the_charge_and_names_it_as_the_labels_do():
    law = LawCandidates(FakeEncoder(1024), CHARGES, known={"盗窃罪"})
    top = law.propose(ASSAULT, k=2)
    assert top[0].name == "袭警罪" and top[0].article == "277" and top[0].rank == 0
    old = LawCandidates(FakeEncoder(1024), [by_name()["生产、销售、提供假药罪"]], known={"生产、销售假药罪"})
    assert old.propose("被告人销售假药", k=1)[0].name == "生产、销售假药罪"  # the name a 2018 case carries


def test_recall_split_into_seen_and_unseen():
    r = recall({"a": ["盗窃罪"], "b": ["袭警罪"]}, {"a": ["盗窃罪"], "b": ["袭警罪", "诈骗罪"]}, seen={"盗窃罪", "诈骗罪"})
    assert r["seen"] == {"gold": 2, "found": 1, "recall": 0.5} and r["unseen"]["recall"] == 1.0


class BigramEncoder:
    """Character bigrams hashed into 4,096 dimensions: texts that share words get near vectors."""

    def _vectors(self, texts):
        import hashlib

        import numpy as np

        out = np.zeros((len(texts), 4096), dtype=np.float32)
        for i, t in enumerate(texts):
            cs = [c for c in t if "\u4e00" <= c <= "\u9fff"]
            for a, b in zip(cs, cs[1:]):
                out[i, int(hashlib.md5((a + b).encode()).hexdigest(), 16) % 4096] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    encode_queries = encode_documents = _vectors


def test_an_unseen_charge_is_proposed_through_its_article_and_kept_with_it():
    pytest.importorskip("lightgbm")
    from legalrag.judgment.labels import label_cases
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.judgment.structure import Scored
    from unit.judgment.test_structure import STATUTES, _cases

    facts, gold = _cases()
    model = StructurePredictor(label_cases(facts, gold).cases, STATUTES, select=False).train()
    charges = CHARGES + [by_name()["高空抛物罪"]]
    model.retrain_charges(LawCandidates(BigramEncoder(), charges, known=model.charge_counts))
    throw = "公诉机关指控：被告人赵某从其居住的十二楼住宅窗口向楼下抛掷花盆、酒瓶等物品，砸坏停放的车辆，情节严重。"
    cands = model._charge_candidates(model.context(throw))
    assert "高空抛物罪" not in model.charge_counts  # no training case carries it
    assert cands["高空抛物罪"]["law_rank"] == 0 and cands["高空抛物罪"]["law_article"] == "291-2"
    assert model.CHARGE_COLUMNS[-2:] == ["law_rank", "law_cos"]
    # chosen, it is a known charge of the catalogue (listed) and brings its own article
    own = model._unseen_own_articles([Scored("高空抛物罪", 0.9, cands["高空抛物罪"])], {"67"})
    assert [a.name for a in own] == ["291"]
    s = model.predict(throw)
    assert all(c.listed for c in s.charges if "law_rank" in c.evidence)
