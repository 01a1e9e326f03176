"""Shared pieces of the policy-training tests: a tiny statute corpus with BM25, a scripted planner whose
replies depend on the rollout seed (so a group of rollouts has spread), a tiny Qwen2 model, a char encoder."""

from __future__ import annotations

import json

from legalrag.llm.base import ChatRequest
from legalrag.types import Document, Query

CORPUS = [
    ("1", "中华人民共和国民法典第一千零七十九条", "夫妻一方要求离婚的，可以向人民法院提起离婚诉讼。实施家庭暴力的，应当准予离婚。"),
    ("2", "中华人民共和国民法典第一千零八十四条", "离婚后，不满两周岁的子女，以由母亲直接抚养为原则。"),
    ("3", "中华人民共和国反家庭暴力法第二十三条", "当事人因遭受家庭暴力，向人民法院申请人身安全保护令的，人民法院应当受理。"),
    ("4", "中华人民共和国刑法第二百六十四条", "盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制。"),
    ("5", "中华人民共和国民法典第五百七十七条", "当事人一方不履行合同义务的，应当承担继续履行、赔偿损失等违约责任。"),
    ("6", "中华人民共和国劳动合同法第四十七条", "经济补偿按劳动者在本单位工作的年限，每满一年支付一个月工资。"),
]
QUERY = Query(text="老公打我，我想离婚，孩子归谁？", id="q1", gold_ids=("1", "2", "3"))
QUERY2 = Query(text="公司不给我发补偿金怎么办", id="q2", gold_ids=("6",))


def bm25():
    from legalrag.retrieval.bm25 import BM25Retriever

    return BM25Retriever.from_documents([Document(i, text, title) for i, title, text in CORPUS], lang="zh")


def seeded_reply(request: ChatRequest) -> str:
    """Planner: one agent, then exit. Rewriter: a good reformulation for odd seeds, a useless one for even."""
    props = (request.json_schema or {}).get("properties", {})
    if "action" in props:
        asked_before = any("single_element" in str(m.get("content", "")) for m in request.messages[1:]) \
            or "1. " in str(request.messages[-1].get("content", ""))
        return json.dumps({"action": "exit" if asked_before else "single_element", "reason": "r"})
    if (request.seed or 0) % 2 == 1:  # the rewriter seed is the rollout seed + round
        return json.dumps({"queries": ["家庭暴力 离婚 子女抚养 人身安全保护令"]})
    return json.dumps({"queries": ["盗窃 刑法"]})


def tiny_qwen2(seed: int = 0):
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    cfg = Qwen2Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024)
    return Qwen2ForCausalLM(cfg)


def char_encode(messages, reply):
    """A stand-in tokenizer: characters mod the tiny vocabulary (the prompt keeps its last 200)."""
    prompt = "".join(f"<{m['role']}>{m['content']}" for m in messages)
    return [ord(c) % 64 for c in prompt][-200:], [ord(c) % 64 for c in reply] + [1]


# -- a tiny Qwen2 GGUF that both transformers (training) and llama.cpp (sampling) load ----------------------

_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q",
                 12: "<d"}


def gguf_metadata(path, prefix: str = "tokenizer.") -> dict:
    """The key/value metadata of a GGUF file whose key starts with ``prefix`` (strings as bytes), read with
    ``struct``: gguf.GGUFReader makes a numpy view per string, minutes for a 151k-token vocabulary here."""
    import struct

    out: dict = {}
    with open(path, "rb") as fh:
        def unpack(fmt):
            return struct.unpack(fmt, fh.read(struct.calcsize(fmt)))[0]

        def string():
            return fh.read(unpack("<Q"))

        def value(kind):
            if kind == 8:
                return string()
            if kind == 9:
                item, n = unpack("<I"), unpack("<Q")
                return [value(item) for _ in range(n)]
            return unpack(_GGUF_SCALARS[kind])

        assert fh.read(4) == b"GGUF" and unpack("<I") >= 2
        unpack("<Q")  # tensor count
        for _ in range(unpack("<Q")):
            key = string().decode("utf-8")
            v = value(unpack("<I"))
            if key.startswith(prefix):
                out[key] = v
    return out


def tiny_qwen2_gguf(path, base_gguf, *, vocab: int = 8192, hidden: int = 32, layers: int = 2, seed: int = 0):
    """Write a random Qwen2 GGUF (f32, tied embeddings, 4 heads / 2 kv heads) with the tokenizer of
    ``base_gguf`` (a Qwen2.5 GGUF) cut to its first ``vocab`` tokens and their merges, plus its special
    tokens renumbered after them: a BPE vocabulary's token 256 + i is merge i's result, so the cut keeps a
    consistent tokenizer (rarer text falls back to byte tokens) while transformers and llama.cpp load it in
    a second instead of converting 151k tokens."""
    import gguf
    import numpy as np

    meta = gguf_metadata(base_gguf)
    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    special = [i for i, t in enumerate(types) if t in (3, 4) and i >= vocab]  # control, user-defined
    renumber = {old: vocab + j for j, old in enumerate(special)}
    kept = list(range(vocab)) + special
    n_vocab = len(kept)
    rng = np.random.default_rng(seed)
    heads, kv_heads, ffn = 4, 2, 2 * hidden
    head_dim = hidden // heads

    def w(*shape):
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    writer = gguf.GGUFWriter(str(path), "qwen2")
    writer.add_name("tiny-qwen2-test")
    writer.add_block_count(layers)
    writer.add_context_length(4096)
    writer.add_embedding_length(hidden)
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_freq_base(1_000_000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(0)  # all f32
    writer.add_tokenizer_model(meta["tokenizer.ggml.model"].decode())
    writer.add_tokenizer_pre(meta["tokenizer.ggml.pre"].decode())
    writer.add_token_list([tokens[i] for i in kept])
    writer.add_token_types([types[i] for i in kept])
    writer.add_token_merges(meta["tokenizer.ggml.merges"][: vocab - 256])
    for key, add in (("eos", writer.add_eos_token_id), ("bos", writer.add_bos_token_id),
                     ("padding", writer.add_pad_token_id)):
        old = meta[f"tokenizer.ggml.{key}_token_id"]
        add(renumber.get(old, old))
    writer.add_add_bos_token(bool(meta.get("tokenizer.ggml.add_bos_token", False)))
    writer.add_chat_template(meta["tokenizer.chat_template"].decode("utf-8"))
    writer.add_tensor("token_embd.weight", w(n_vocab, hidden))
    writer.add_tensor("output_norm.weight", np.ones(hidden, dtype=np.float32))
    for b in range(layers):
        for name, shape in (("attn_q.weight", (hidden, hidden)), ("attn_q.bias", (hidden,)),
                            ("attn_k.weight", (kv_heads * head_dim, hidden)), ("attn_k.bias", (kv_heads * head_dim,)),
                            ("attn_v.weight", (kv_heads * head_dim, hidden)), ("attn_v.bias", (kv_heads * head_dim,)),
                            ("attn_output.weight", (hidden, hidden)), ("ffn_gate.weight", (ffn, hidden)),
                            ("ffn_up.weight", (ffn, hidden)), ("ffn_down.weight", (hidden, ffn))):
            writer.add_tensor(f"blk.{b}.{name}", w(*shape))
        writer.add_tensor(f"blk.{b}.attn_norm.weight", np.ones(hidden, dtype=np.float32))
        writer.add_tensor(f"blk.{b}.ffn_norm.weight", np.ones(hidden, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
