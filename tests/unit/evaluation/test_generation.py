"""Generation metrics: each checked against a reference implementation on the same tokens where one installs
(rouge-score for ROUGE, sacreBLEU for BLEU, nltk for METEOR), and the keyword rule on its edge cases."""

from __future__ import annotations

import random

import numpy as np
import pytest

from legalrag.evaluation.lexrag import metrics as cm
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


def _meteor_by_formula(ref: list[str], hyp: list[str], alpha=0.9, beta=3.0, gamma=0.5) -> float:
    """METEOR (Banerjee & Lavie 2005, nltk's parameters) for tokens that occur once per side, where exact
    matching has one alignment: F_mean = PR / (alpha P + (1 - alpha) R), penalty gamma (chunks/matches)^beta."""
    where = {t: i for i, t in enumerate(ref)}
    aligned = [(i, where[t]) for i, t in enumerate(hyp) if t in where]  # (hypothesis, reference) positions
    if not aligned:
        return 0.0
    chunks = 1 + sum(1 for (h0, r0), (h1, r1) in zip(aligned, aligned[1:]) if (h1, r1) != (h0 + 1, r0 + 1))
    p, r = len(aligned) / len(hyp), len(aligned) / len(ref)
    return (1 - gamma * (chunks / len(aligned)) ** beta) * p * r / (alpha * p + (1 - alpha) * r)


def test_meteor_matches_nltk_and_the_formula_on_the_same_tokens():
    """Against nltk's METEOR called directly on the same tokens, and against the formula on unique-token pairs
    (Chinese tokens: no stem or WordNet match, so the exact alignment is the whole alignment)."""
    score = pytest.importorskip("nltk.translate.meteor_score")
    from legalrag.judgment.textmetrics import meteor

    class NoSynonyms:  # WordNet's data cannot be downloaded here; it has no Chinese entries anyway
        def synsets(self, word):
            return []

    rng = random.Random(2)
    vocab = [f"词{i}" for i in range(30)]
    pairs = [(rng.sample(vocab, rng.randint(1, 20)), rng.sample(vocab, rng.randint(1, 20))) for _ in range(60)]
    pairs += [(r.split(), h.split()) for r, h in PAIRS[1:]]  # PAIRS[0] repeats a token
    for ref, hyp in pairs:
        ours = cm.meteor_tokens(ref, hyp)
        assert ours == meteor(ref, hyp)  # consultation and judgment report the same METEOR
        assert ours == pytest.approx(score.meteor_score([ref], hyp, wordnet=NoSynonyms()), abs=1e-12), (ref, hyp)
        assert ours == pytest.approx(_meteor_by_formula(ref, hyp), abs=1e-12), (ref, hyp)
    # recall weighs nine times precision: the argument order matters and is (reference, hypothesis)
    long, short = "一 二 三 四 五 六".split(), "一 二".split()
    assert cm.meteor_tokens(long, short) == pytest.approx(_meteor_by_formula(long, short))
    assert cm.meteor_tokens(long, short) < cm.meteor_tokens(short, long)
    # English tokens also match on Porter stems, as in nltk
    assert cm.meteor_tokens(["the", "courts", "ruled"], ["the", "court", "ruling"]) == pytest.approx(
        score.meteor_score([["the", "courts", "ruled"]], ["the", "court", "ruling"], wordnet=NoSynonyms()))
    assert cm.meteor_tokens(["courts"], ["court"]) > 0.4
    ref = PAIRS[0][0].split()
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
