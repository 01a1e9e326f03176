"""Metrics for generated answers against a reference answer, as plain functions.

Conventions (what each function promises, so figures can be compared):

- **Tokenisation for Chinese** (:func:`tokenize`): ``"word"`` (default) cuts with jieba and drops whitespace
  tokens; ``"char"`` makes every CJK character a token and keeps runs of Latin letters or digits together.
  Text is NFKC-normalised and lower-cased first, so full-width and half-width forms match.
- **Keyword accuracy** (:func:`keyword_accuracy`): the share of the reference keywords that occur in the
  response. Matching rule: after NFKC normalisation, lower-casing and removing all whitespace from both
  sides, a keyword counts when it occurs as a contiguous substring of the response. No synonyms, no
  partial credit. Duplicate keywords count once; a turn with no keywords has no score (``None``).
- **ROUGE-N / ROUGE-L** (:func:`rouge`): F-measure (with precision and recall) of clipped n-gram overlap and
  of the longest common subsequence over the tokens, as rouge-score computes them on the same tokens.
- **BLEU** (:func:`bleu`): BLEU-4 over tokens with clipped n-gram precisions, the brevity penalty against the
  reference length, and the "exp" smoothing of mteval (an order with no match gets 1 / (2^j * total), j
  counting the empty orders so far); a candidate with no match at any order scores 0. Scale 0-1 (sacreBLEU
  reports the same value times 100). ``effective_order`` drops orders longer than the candidate, as
  sacreBLEU's sentence-level BLEU does.
- **METEOR** and the **BERTScore-style F1** are those of :mod:`legalrag.judgment.textmetrics`; the
  capability layer applies them (``legalrag.evaluation.lexrag.metrics``), since this layer sits below judgment.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from typing import Callable, Iterable, Mapping, Sequence

from legalrag.errors import InputError

TOKENIZERS = ("word", "char")
_CHUNK = re.compile(r"[a-z0-9]+|[^\sa-z0-9]", re.IGNORECASE)


def normalise_text(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").lower()


def tokenize(text: str, mode: str = "word") -> list[str]:
    """Tokens of ``text``: jieba words (``word``) or characters with Latin/digit runs kept whole (``char``)."""
    text = normalise_text(text)
    if mode == "char":
        return _CHUNK.findall(text)
    if mode == "word":
        from legalrag._optional import require

        jieba = require("jieba", "zh")
        return [t.strip() for t in jieba.cut(text) if t.strip()]
    raise InputError(f"unknown tokenizer {mode!r}; use one of {', '.join(TOKENIZERS)}")


# -- keywords ---------------------------------------------------------------------------------------------

def _squash(text: str) -> str:
    return "".join(normalise_text(text).split())


def keyword_hits(response: str, keywords: Iterable[str]) -> dict[str, bool]:
    """Each distinct non-empty keyword -> whether it occurs in the response (the rule in the module docstring)."""
    body = _squash(response)
    out: dict[str, bool] = {}
    for kw in keywords:
        key = _squash(kw)
        if key and kw not in out:
            out[kw] = key in body
    return out


def keyword_accuracy(response: str, keywords: Iterable[str]) -> float | None:
    hits = keyword_hits(response, keywords)
    return sum(hits.values()) / len(hits) if hits else None


# -- ROUGE ------------------------------------------------------------------------------------------------

def ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def _prf(overlap: float, n_hyp: int, n_ref: int) -> tuple[float, float, float]:
    p = overlap / n_hyp if n_hyp else 0.0
    r = overlap / n_ref if n_ref else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def rouge_n(reference: Sequence[str], candidate: Sequence[str], n: int) -> tuple[float, float, float]:
    """(precision, recall, F) of clipped n-gram overlap."""
    ref, hyp = ngrams(reference, n), ngrams(candidate, n)
    return _prf(sum((ref & hyp).values()), sum(hyp.values()), sum(ref.values()))


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    if len(a) < len(b):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def rouge_l(reference: Sequence[str], candidate: Sequence[str]) -> tuple[float, float, float]:
    return _prf(lcs_length(reference, candidate), len(candidate), len(reference))


def rouge(reference: Sequence[str], candidate: Sequence[str]) -> dict[str, float]:
    """F-measures ``rouge1``, ``rouge2``, ``rougeL`` of token lists."""
    return {"rouge1": rouge_n(reference, candidate, 1)[2], "rouge2": rouge_n(reference, candidate, 2)[2],
            "rougeL": rouge_l(reference, candidate)[2]}


# -- BLEU -------------------------------------------------------------------------------------------------

def bleu(references: Sequence[Sequence[str]], candidates: Sequence[Sequence[str]], max_n: int = 4,
         effective_order: bool = False) -> float:
    """Corpus BLEU of token lists (one reference per candidate); pass one pair for sentence BLEU."""
    if len(references) != len(candidates):
        raise InputError(f"{len(candidates)} candidates for {len(references)} references; they must pair up")
    correct, total = [0] * max_n, [0] * max_n
    hyp_len = ref_len = 0
    for ref, hyp in zip(references, candidates):
        hyp_len, ref_len = hyp_len + len(hyp), ref_len + len(ref)
        for n in range(1, max_n + 1):
            h, r = ngrams(hyp, n), ngrams(ref, n)
            correct[n - 1] += sum((h & r).values())
            total[n - 1] += sum(h.values())
    if not any(correct):
        return 0.0
    brevity = 1.0 if hyp_len >= ref_len else math.exp(1 - ref_len / hyp_len)
    log_sum, orders, halvings = 0.0, max_n, 1.0
    for n in range(1, max_n + 1):
        if total[n - 1] == 0:  # the candidates are shorter than n tokens
            if effective_order:
                orders = n - 1
                break
            return 0.0
        if correct[n - 1]:
            log_sum += math.log(correct[n - 1] / total[n - 1])
        else:
            halvings *= 2
            log_sum += math.log(1 / (halvings * total[n - 1]))
    return brevity * math.exp(log_sum / orders)


# -- one pair, many pairs ---------------------------------------------------------------------------------

def pair_scores(reference: str, response: str, keywords: Iterable[str] = (), *,
                tokenizer: str = "word") -> dict[str, float | None]:
    """Keyword accuracy, ROUGE-1/2/L and sentence BLEU of one response against its reference."""
    ref, hyp = tokenize(reference, tokenizer), tokenize(response, tokenizer)
    return {"keyword_accuracy": keyword_accuracy(response, keywords), **rouge(ref, hyp),
            "bleu": bleu([ref], [hyp], effective_order=True)}


def mean_scores(rows: Iterable[Mapping[str, float | None]]) -> dict[str, float]:
    """Per-metric means over rows, leaving out ``None`` (e.g. turns without keywords); adds ``n``."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    n = 0
    for row in rows:
        n += 1
        for key, value in row.items():
            if value is None or not isinstance(value, (int, float)):
                continue
            sums[key] = sums.get(key, 0.0) + float(value)
            counts[key] = counts.get(key, 0) + 1
    return {**{k: sums[k] / counts[k] for k in sums}, "n": n}


def corpus_bleu(references: Sequence[str], responses: Sequence[str], tokenizer: str = "word",
                tokenize_fn: Callable[[str, str], list[str]] = tokenize) -> float:
    """Corpus-level BLEU of texts (tokenised with ``tokenizer``)."""
    return bleu([tokenize_fn(r, tokenizer) for r in references], [tokenize_fn(h, tokenizer) for h in responses])
