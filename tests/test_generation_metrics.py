"""Generation metrics: each checked against a reference implementation on the same tokens where one installs
(rouge-score for ROUGE, sacreBLEU for BLEU, nltk for METEOR), and the keyword rule on its edge cases."""

from __future__ import annotations

import random

import numpy as np
import pytest

from legalrag.consultation import metrics as cm
from legalrag.evaluation import generation as g
from legalrag.errors import InputError

PAIRS = [
    ("借款 合同 应当 采用 书面 形式 但是 自然人 之间 另有 约定 的 除外",
     "自然人 之间 借款 可以 不 采用 书面 形式 转账 记录 可以 证明 借款 合同"),
    ("用人单位 应当 每月 支付 二倍 的 工资", "公司 应当 每月 向 你 支付 二倍 工资"),
    ("a b c d e f", "a b c d e f"),
    ("一 二 三", "四 五 六 七"),
    ("违法 解除 劳动 合同 的 应当 支付 赔偿金", "赔偿金"),
]


def _random_pairs(n: int, seed: int = 0) -> list[tuple[list[str], list[str]]]:
    rng = random.Random(seed)
    vocab = list("法律合同借款工资赔偿金租赁房东继承遗嘱") + ["x", "y"]
    return [([rng.choice(vocab) for _ in range(rng.randint(1, 25))],
             [rng.choice(vocab) for _ in range(rng.randint(1, 25))]) for _ in range(n)]


class _Whitespace:
    def tokenize(self, text):
        return text.split()


def test_rouge_matches_rouge_score_on_the_same_tokens():
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=_Whitespace())
    pairs = [(r.split(), h.split()) for r, h in PAIRS] + _random_pairs(40)
    for ref, hyp in pairs:
        expected = scorer.score(" ".join(ref), " ".join(hyp))
        ours = g.rouge(ref, hyp)
        for key in ("rouge1", "rouge2", "rougeL"):
            assert ours[key] == pytest.approx(expected[key].fmeasure, abs=1e-12), (key, ref, hyp)
        p, r, _ = g.rouge_l(ref, hyp)
        assert (p, r) == pytest.approx((expected["rougeL"].precision, expected["rougeL"].recall))


def test_bleu_matches_sacrebleu_sentence_and_corpus():
    sacrebleu = pytest.importorskip("sacrebleu")
    pairs = [(r.split(), h.split()) for r, h in PAIRS] + _random_pairs(40, seed=1)
    for ref, hyp in pairs:
        expected = sacrebleu.sentence_bleu(" ".join(hyp), [" ".join(ref)], tokenize="none", smooth_method="exp").score
        assert 100 * g.bleu([ref], [hyp], effective_order=True) == pytest.approx(expected, abs=1e-9), (ref, hyp)
    refs, hyps = [p[0] for p in pairs], [p[1] for p in pairs]
    expected = sacrebleu.corpus_bleu([" ".join(h) for h in hyps], [[" ".join(r) for r in refs]], tokenize="none",
                                     smooth_method="exp").score
    assert 100 * g.bleu(refs, hyps) == pytest.approx(expected, abs=1e-9)


def test_bleu_edge_cases():
    assert g.bleu([["a", "b"]], [["c"]]) == 0.0  # no match at any order
    assert g.bleu([["a", "b", "c", "d"]], [["a", "b", "c", "d"]]) == pytest.approx(1.0)
    assert g.bleu([["a", "b", "c"]], [["a", "b"]]) == 0.0  # no 3-grams and no effective order: undefined -> 0
    with pytest.raises(InputError):
        g.bleu([["a"]], [])


def test_meteor_is_the_judgment_metric_on_the_same_tokens():
    pytest.importorskip("nltk")
    from legalrag.judgment.textmetrics import meteor

    ref, hyp = PAIRS[0][0].split(), PAIRS[0][1].split()
    assert cm.meteor_tokens(ref, hyp) == meteor(ref, hyp)
    assert cm.meteor_tokens(ref, ref) > 0.9
    assert cm.meteor_tokens(ref, []) == 0.0


def test_keyword_accuracy_rule():
    response = "根据法律，借款合同应当采用 书面 形式；ＡＢＣ公司须赔偿。"
    # whitespace inside the response is ignored, full-width letters match half-width, case is folded
    assert g.keyword_hits(response, ["书面形式", "abc公司", "利息"]) == {"书面形式": True, "abc公司": True, "利息": False}
    assert g.keyword_accuracy(response, ["书面形式", "abc公司", "利息"]) == pytest.approx(2 / 3)
    assert g.keyword_accuracy(response, ["书面形式", "书面形式"]) == 1.0  # a repeated keyword counts once
    assert g.keyword_accuracy(response, []) is None  # no keywords: no score, not 0
    assert g.keyword_accuracy(response, ["  "]) is None
    assert g.keyword_accuracy("", ["利息"]) == 0.0


def test_tokenizers():
    assert g.tokenize("民法典 Art 12条", "char") == ["民", "法", "典", "art", "12", "条"]
    words = g.tokenize("借款合同应当采用书面形式", "word")
    assert "".join(words) == "借款合同应当采用书面形式" and len(words) < 12
    with pytest.raises(InputError):
        g.tokenize("x", "bpe")


def test_bertscore_style_f1_reuses_greedy_matching():
    from legalrag.judgment.textmetrics import WordEmbedder

    rng = np.random.default_rng(0)
    table: dict[str, np.ndarray] = {}

    def embed(words):
        out = []
        for w in words:
            if w not in table:
                v = rng.normal(size=16)
                table[w] = v / np.linalg.norm(v)
            out.append(table[w])
        return np.stack(out)

    emb = WordEmbedder(embed)
    assert cm.bertscore_f1("借款合同", "借款合同", emb) == pytest.approx(1.0)
    partial = cm.bertscore_f1("借款合同", "借款协议", emb)
    assert 0.0 < partial < 1.0
    assert cm.bertscore_f1("借款", "", emb) == 0.0


def test_pair_scores_and_means():
    s = cm.answer_scores("应当支付二倍的工资。", "公司应当支付二倍工资。", ["二倍", "赔偿金"], tokenizer="char")
    assert s["keyword_accuracy"] == 0.5
    assert 0 < s["rougeL"] < 1 and 0 < s["bleu"] < 1 and "meteor" in s
    m = g.mean_scores([{"keyword_accuracy": None, "rougeL": 0.5}, {"keyword_accuracy": 1.0, "rougeL": 0.0}])
    assert m == {"keyword_accuracy": 1.0, "rougeL": 0.25, "n": 2}
