"""int8 ONNX export: the exported encoder ranks like the fp32 model, and its cache key follows its weights."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("onnxruntime")

from legalrag.retrieval.encoders_onnx import OnnxEncoder  # noqa: E402
from legalrag.training.encoder import EncoderSettings, encode, load_encoder_model, train_encoder  # noqa: E402
from legalrag.training.export import export_onnx  # noqa: E402
from support.training_fixtures import tiny_corpus, tiny_encoder  # noqa: E402


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    start = tiny_encoder(root / "start")
    docs, queries = tiny_corpus()
    trained = root / "trained"
    train_encoder(start, trained, queries, docs, {}, EncoderSettings(epochs=2, batch_size=8, lr=3e-3,
                  dev_share=0.25, freeze_embeddings=False, checkpoint_every=1000), progress=False)
    return start, trained, export_onnx(trained, root / "onnx")


def test_the_int8_export_ranks_like_the_fp32_model(models):
    _, trained, onnx_dir = models
    docs, queries = tiny_corpus()
    fp32 = load_encoder_model(trained, 32)
    d32 = encode(fp32, [f"{d.title}\n{d.text}" for d in docs], "passage: ")
    q32 = encode(fp32, [q.text for q in queries], "query: ")
    enc = OnnxEncoder(onnx_dir, cache=False, progress=False)
    d8 = enc.encode_documents([f"{d.title}\n{d.text}" for d in docs])
    q8 = enc.encode_queries([q.text for q in queries])
    assert np.min((d8 * d32).sum(1)) > 0.98 and np.min((q8 * q32).sum(1)) > 0.98
    top32, top8 = (q32 @ d32.T).argmax(1), (q8 @ d8.T).argmax(1)
    assert np.mean(top32 == top8) >= 0.9


def test_wiring_opens_the_export_and_the_cache_key_follows_the_weights(models, tmp_path):
    from legalrag.wiring import make_encoder

    start, trained, onnx_dir = models
    enc = make_encoder(str(onnx_dir), cache=tmp_path / "vectors", progress=False)
    assert isinstance(enc, OnnxEncoder) and enc.dimension == 32
    enc.encode_documents(["topic1 detail1 law"])
    assert len(enc.vector_cache()) == 1
    other = export_onnx(start, tmp_path / "onnx")  # same directory name, other weights
    assert OnnxEncoder(other, cache=False).model_id != enc.model_id


def test_matrix_products_kept_in_fp32_are_left_out_of_quantisation_and_named_in_the_settings(models, tmp_path):
    import json

    import onnx

    from legalrag.errors import InputError

    _, trained, onnx_dir = models
    kept = export_onnx(trained, tmp_path / "kept", keep_fp32=[r"layer\.\d+/output/dense"])
    settings = json.loads((kept / "onnx_encoder.json").read_text())
    assert settings["quantised"] == r"int8-dynamic (fp32: layer\.\d+/output/dense)"

    def int8_products(d):
        return sum(n.op_type in ("MatMulInteger", "DynamicQuantizeMatMul") for n in onnx.load(str(d / "model.onnx")).graph.node)

    assert 0 < int8_products(kept) < int8_products(onnx_dir)
    docs, _ = tiny_corpus()
    texts = [f"{d.title}\n{d.text}" for d in docs]
    fp32 = encode(load_encoder_model(trained, 32), texts, "passage: ")
    mixed = OnnxEncoder(kept, cache=False, progress=False).encode_documents(texts)
    assert np.min((mixed * fp32).sum(1)) > 0.98
    with pytest.raises(InputError, match="matches none of the"):
        export_onnx(trained, tmp_path / "none", keep_fp32=["no-such-node"])
    assert not (tmp_path / "none").exists()
