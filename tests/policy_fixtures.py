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
