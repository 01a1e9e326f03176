"""The epoch loop the encoder and reranker trainers share: a run's identity (data hashes and the fingerprint a
checkpoint must match), optimiser steps under a progress bar, a checkpoint every N steps and at each epoch's end
(so a kill resumes mid-epoch), the per-epoch history with its dev figures, and the best epoch kept.
What a step computes (its loss) and what an epoch is evaluated on stay with each trainer."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

import numpy as np

from legalrag.training import checkpoint as ckpt
from legalrag.types import Query

T = TypeVar("T")


def sha256_json(obj) -> str:
    return hashlib.sha256(json.dumps(obj, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def run_identity(start: str | Path, settings, queries: Sequence[Query], texts: Mapping[str, str],
                 train: Sequence[Query], dev: Sequence[Query], rankers: Mapping, **data_extra) -> tuple[dict, str]:
    """The record's ``data`` block and the fingerprint of the run: a checkpoint resumes only the very run
    (start model, settings, queries, corpus text and mining sources) that wrote it."""
    data = {"queries_sha256": sha256_json([[q.id, q.text, list(q.gold_ids)] for q in queries]),
            "corpus_sha256": sha256_json([[i, t] for i, t in texts.items()]), "n_train": len(train),
            "n_dev": len(dev), "dev_ids": [q.id for q in dev], **data_extra}
    fingerprint = sha256_json({"start": str(Path(start).resolve()), "settings": asdict(settings), "data": data,
                               "mining": sorted(rankers)})
    return data, fingerprint


def freeze_word_embeddings(module) -> None:
    """The vocabulary matrix dominates a small encoder's parameters and so the cost of a step."""
    for name, p in module.named_parameters():
        if "word_embeddings" in name:
            p.requires_grad_(False)


def dev_score(entry: dict, select_by: str) -> tuple[float, float]:
    d = entry.get("dev") or {}
    return d.get(select_by, 0.0), d.get("mrr@10", 0.0)


class EpochLoop:
    """Where a run stands (epoch, step in the epoch, global step, this epoch's losses, the history) and the
    tail every optimiser step and every epoch share. ``state`` is a loaded checkpoint's progress (or None
    for a fresh run: then the trainer appends the epoch-0 entry to ``history``); ``extra_state()`` returns
    the trainer's own part of each checkpoint (its fingerprint, its negatives)."""

    def __init__(self, work: Path, model, optimizer, scheduler, state: dict | None, *,
                 extra_state: Callable[[], dict], checkpoint_every: int, stop_after_steps: int | None,
                 progress: bool, rate_keys: tuple[str, str] = ("ex_s", "examples_per_s")):
        self.work, self.model, self.optimizer, self.scheduler = work, model, optimizer, scheduler
        self.extra_state, self.checkpoint_every, self.stop_after_steps = extra_state, checkpoint_every, stop_after_steps
        self.progress, self.rate_keys = progress, rate_keys  # (progress-bar key, history key) of the throughput
        if state:
            ckpt.restore_optimiser(work, optimizer, scheduler)
            self.history: list[dict] = state["history"]
            self.epoch, self.done, self.step = state["epoch"], state["step_in_epoch"], state["step"]
            self.losses: list[float] = state["epoch_losses"]
            self.resumed_from: int | None = self.step
        else:
            self.history, self.epoch, self.done, self.step, self.losses, self.resumed_from = [], 1, 0, 0, [], None
        self._bar = None
        self._t0, self._seen, self._n_batches = 0.0, 0, 0

    def save(self) -> None:
        ckpt.save_checkpoint(self.work, self.model, self.optimizer, self.scheduler, {
            **self.extra_state(), "epoch": self.epoch, "step_in_epoch": self.done, "step": self.step,
            "history": self.history, "epoch_losses": self.losses})

    def batches(self, batches: Sequence[T], epochs: int) -> Iterator[T]:
        """This epoch's batches from where the run stands, under a progress bar."""
        from tqdm import tqdm

        self._bar = tqdm(total=len(batches), initial=self.done, desc=f"epoch {self.epoch}/{epochs}", unit="step",
                         disable=not self.progress)
        self._t0, self._seen, self._n_batches = time.perf_counter(), 0, len(batches)
        yield from batches[self.done:]
        self._bar.close()

    def stepped(self, loss, examples: int) -> bool:
        """After ``loss.backward()``: the optimiser step, the bookkeeping, the checkpoint when due. True when the
        run must stop now (``stop_after_steps`` reached, checkpoint saved, as a kill would leave it)."""
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.done, self.step, self._seen = self.done + 1, self.step + 1, self._seen + examples
        self.losses.append(float(loss.detach()))
        self._bar.update(1)
        self._bar.set_postfix({"loss": f"{self.losses[-1]:.4f}",
                               self.rate_keys[0]: f"{self._seen / (time.perf_counter() - self._t0):.1f}"})
        stopping = self.stop_after_steps is not None and self.step >= self.stop_after_steps
        if self.done % self.checkpoint_every == 0 or stopping:
            self.save()
        if stopping:
            self._bar.close()
        return stopping

    def interrupted(self) -> dict:
        return {"interrupted": True, "step": self.step, "work": str(self.work)}

    def end_epoch(self, dev: dict[str, float], select_by: str) -> dict:
        """Record the finished epoch and keep the model when it is the best so far by dev ``select_by`` (ties:
        MRR@10; every epoch when there is no dev set). Returns the epoch's history entry."""
        seconds = time.perf_counter() - self._t0
        entry = {"epoch": self.epoch, "dev": dev, "loss_mean": float(np.mean(self.losses)),
                 "losses": [round(x, 5) for x in self.losses], "steps": self._n_batches,
                 "seconds_this_process": round(seconds, 2),
                 self.rate_keys[1]: round(self._seen / seconds, 2) if seconds > 0 and self._seen else None}
        self.history.append(entry)
        if not dev or self.best(select_by)["epoch"] == self.epoch:
            ckpt.save_best(self.work, self.model)
        return entry

    def next_epoch(self) -> None:
        self.epoch, self.done, self.losses = self.epoch + 1, 0, []
        self.save()

    def against_start(self, select_by: str) -> dict[str, Any] | None:
        """The best trained epoch's dev ``select_by`` against epoch 0's (the starting model, or the first stage
        a reranker reorders): ``below_start`` says training made the dev ranking worse, so the trained model
        should not replace what it started from. None without dev figures."""
        start = next((h for h in self.history if h["epoch"] == 0), None)
        best = self.best(select_by)
        if not start or not start.get("dev") or not best.get("dev") or best["epoch"] == 0:
            return None
        a, b = dev_score(start, select_by), dev_score(best, select_by)
        return {"metric": select_by, "start": a[0], "best": b[0], "below_start": b < a}

    def best(self, select_by: str) -> dict:
        """The best trained epoch by dev ``select_by``; the last epoch when there is no dev set."""
        trained = [h for h in self.history if h["epoch"] > 0]
        if not trained or not trained[-1]["dev"]:
            return self.history[-1]
        return max(trained, key=lambda h: dev_score(h, select_by))
