"""A policy directory run by the embedded runtime (the real 0.5B): llama.cpp loads our LoRA GGUF, a zero
adapter leaves replies unchanged, a non-zero one changes them, and the policy LLM drives the planner."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("gguf", reason="gguf is in the train extra: pip install 'legalrag[train]'")

from legalrag.llm.base import ChatRequest  # noqa: E402
from legalrag.training.policy.lora_gguf import write_lora_gguf  # noqa: E402
from legalrag.training.policy.store import FORMAT, base_identity  # noqa: E402

PROMPT = (ChatRequest(messages=({"role": "user", "content": "用一句话说明什么是合同。"},), max_tokens=12, temperature=0.0))


def policy_dir(path, scale_b: float):
    """A policy for the 0.5B with r=2 adapters on every block's q and v projections (896 -> 896 / 128)."""
    import torch

    g = torch.Generator().manual_seed(0)
    state = {}
    for layer in range(24):
        for module, out in (("q_proj", 896), ("v_proj", 128)):
            key = f"base_model.model.model.layers.{layer}.self_attn.{module}"
            state[f"{key}.lora_A.weight"] = torch.randn(2, 896, generator=g) * 0.05
            state[f"{key}.lora_B.weight"] = torch.randn(out, 2, generator=g) * scale_b
    path.mkdir()
    write_lora_gguf(path / "adapter.gguf", state, alpha=4)
    (path / "policy.json").write_text(json.dumps({"format": FORMAT, "base": base_identity("qwen2.5-0.5b")}))
    return path


@pytest.mark.llm
def test_the_embedded_runtime_applies_a_policy_adapter(small_llm, tmp_path):
    from legalrag.agents.planner import PlannerConfig, PlannerLoop
    from legalrag.wiring import make_policy_llm
    from support.policy_fixtures import QUERY, bm25

    base_reply = small_llm.chat(PROMPT).text
    zero = make_policy_llm(policy_dir(tmp_path / "zero", 0.0), cache=False, threads=1)
    try:
        assert "+lora:" in zero.model_id
        assert zero.chat(PROMPT).text == base_reply
        cfg = PlannerConfig(lang="zh", script=("single_element",), rewriter_max_tokens=48, first_stage_k=3, pool_k=3)
        result = PlannerLoop(zero, bm25(), config=cfg).run(QUERY.text)
        assert result.rounds == 1 and result.usage.calls >= 1 and result.pool
    finally:
        zero.close()
    strong = make_policy_llm(policy_dir(tmp_path / "strong", 2.0), cache=False, threads=1)
    try:
        assert strong.chat(PROMPT).text != base_reply
    finally:
        strong.close()
