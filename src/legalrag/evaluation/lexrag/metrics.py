"""Every generation metric of one consultation answer: those of ``evaluation.generation`` plus METEOR and the
BERTScore-style F1 of ``judgment.textmetrics`` (reused as they are, on the same tokens and characters)."""

from __future__ import annotations

from typing import Iterable, Sequence

from legalrag.evaluation.generation import normalise_text, pair_scores, tokenize


def meteor_tokens(reference: Sequence[str], candidate: Sequence[str]) -> float:
    from legalrag.judgment.textmetrics import meteor

    return meteor(reference, candidate)


def bertscore_f1(reference: str, candidate: str, embedder) -> float:
    """BERTScore-style greedy F1 over non-space characters with ``embedder`` (a ``textmetrics.WordEmbedder``)."""
    from legalrag.judgment.textmetrics import greedy_f1

    ref = [c for c in normalise_text(reference) if not c.isspace()]
    hyp = [c for c in normalise_text(candidate) if not c.isspace()]
    if not ref or not hyp:
        return 0.0
    return greedy_f1(embedder.matrix(hyp), embedder.matrix(ref))[2]


def answer_scores(reference: str, response: str, keywords: Iterable[str] = (), *, tokenizer: str = "word",
                  meteor: bool = True, embedder=None) -> dict[str, float | None]:
    """Keyword accuracy, ROUGE, BLEU, METEOR and (with an ``embedder``) the BERTScore-style F1."""
    out = pair_scores(reference, response, keywords, tokenizer=tokenizer)
    if meteor:
        out["meteor"] = meteor_tokens(tokenize(reference, tokenizer), tokenize(response, tokenizer))
    if embedder is not None:
        out["bertscore_f1"] = bertscore_f1(reference, response, embedder)
    return out
