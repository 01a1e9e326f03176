"""GRPO on a tiny randomly initialised Qwen2 (no download): one step moves the adapters towards the
higher-reward trajectory; the training loop checkpoints, resumes and saves a policy directory whose
llama.cpp adapter holds peft's tensors."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft", reason="peft is in the train extra: pip install 'legalrag[train]'")
pytest.importorskip("gguf", reason="gguf is in the train extra: pip install 'legalrag[train]'")

from legalrag.agents.planner import PlannerConfig, PlannerLoop  # noqa: E402
from legalrag.errors import InputError  # noqa: E402
from legalrag.testing import ScriptedLLM  # noqa: E402
from legalrag.training.policy.grpo import (GRPOSettings, make_optimizer, policy_gradient_step,  # noqa: E402
                                           trajectory_logprob)
from legalrag.training.policy.lora_gguf import read_lora_gguf  # noqa: E402
from legalrag.training.policy.model import add_lora, adapter_state, save_policy  # noqa: E402
from legalrag.training.policy.reward import RewardSettings  # noqa: E402
from legalrag.training.policy.store import check_base, read_policy  # noqa: E402
from legalrag.training.policy.trainer import fingerprint_of, train_policy  # noqa: E402
from legalrag.training.policy.trajectory import RecordingLLM, run_rollout  # noqa: E402
from support.policy_fixtures import QUERY, QUERY2, bm25, char_encode, seeded_reply, tiny_qwen2  # noqa: E402

SETTINGS = GRPOSettings(group_size=4, groups_per_step=1, learning_rate=5e-2, lora_r=4, lora_alpha=8, seed=0)
PROMPT = [{"role": "system", "content": "planner"}, {"role": "user", "content": "离婚 孩子"}]
GOOD = [{"messages": PROMPT, "reply": '{"action": "multi_element"}'}]
BAD = [{"messages": PROMPT, "reply": '{"action": "exit"}'}]


def test_one_step_raises_the_better_trajectory_and_changes_only_the_adapter():
    import torch

    model = add_lora(tiny_qwen2(), SETTINGS)
    frozen = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    lora_before = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
    assert lora_before and all("lora_" in n for n in lora_before)
    good0, bad0 = (trajectory_logprob(model, char_encode, t) for t in (GOOD, BAD))
    opt, sched = make_optimizer(model, SETTINGS, total_steps=1)
    stats = policy_gradient_step(model, opt, sched, char_encode, [(1.0, GOOD), (-1.0, BAD)])
    assert stats["reply_tokens"] > 0 and stats["grad_norm"] > 0
    good1, bad1 = (trajectory_logprob(model, char_encode, t) for t in (GOOD, BAD))
    # the better trajectory gains, and gains on the worse one (they share the prompt and the reply's prefix)
    assert good1 > good0 and good1 - bad1 > good0 - bad0
    assert any(not torch.equal(p, lora_before[n]) for n, p in model.named_parameters() if n in lora_before)
    assert all(torch.equal(p, frozen[n]) for n, p in model.named_parameters() if n in frozen)


def test_zero_advantages_leave_the_adapter_alone():
    import torch

    model = add_lora(tiny_qwen2(), SETTINGS)
    before = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
    opt, sched = make_optimizer(model, SETTINGS, total_steps=1)
    assert policy_gradient_step(model, opt, sched, char_encode, [(0.0, GOOD), (0.0, BAD)])["reply_tokens"] == 0
    assert all(torch.equal(p, before[n]) for n, p in model.named_parameters() if n in before)


def scripted_sampler(model):
    cfg = PlannerConfig(lang="zh", max_rounds=3, first_stage_k=3, pool_k=3, min_new_fraction=0.0)
    loop = PlannerLoop(RecordingLLM(ScriptedLLM(seeded_reply, supports_json_schema=True)), bm25(), config=cfg)
    return lambda q, seed: run_rollout(loop, q, rollout=seed, seed=seed)


def test_training_checkpoints_resumes_and_saves_a_policy(tmp_path):
    queries = [QUERY, QUERY2]
    reward = RewardSettings()
    fp = fingerprint_of("tiny", queries, SETTINGS, reward)
    work = tmp_path / ".work"
    model = add_lora(tiny_qwen2(), SETTINGS)
    first = train_policy(model, char_encode, queries, scripted_sampler, settings=SETTINGS, reward_settings=reward,
                         work=work, fingerprint=fp, progress=False, max_steps=1)
    assert first["completed_steps"] == 1
    # "killed" after step 1: a fresh process (new model object) resumes from the checkpoint
    resumed_model = add_lora(tiny_qwen2(), SETTINGS)
    record = train_policy(resumed_model, char_encode, queries, scripted_sampler, settings=SETTINGS,
                          reward_settings=reward, work=work, fingerprint=fp, progress=False)
    assert [r["step"] for r in record["steps"]] == [1, 2]
    row = record["steps"][0]
    assert {"mean_reward", "reward_std", "pool_recall", "seconds", "peak_memory_gib", "unusable_replies"} <= set(row)
    assert (work / "trajectories" / "step-00002.jsonl").exists()
    saved = {k: v.clone() for k, v in adapter_state(resumed_model).items()}
    with pytest.raises(InputError, match="another run"):
        train_policy(add_lora(tiny_qwen2(), SETTINGS), char_encode, queries, scripted_sampler, settings=SETTINGS,
                     reward_settings=reward, work=work, fingerprint="other", progress=False)

    out = save_policy(tmp_path / "policy", resumed_model, base={"name": "tiny", "id": "tiny:1"},
                      settings=SETTINGS, reward=reward.as_dict(), record=record)
    meta = read_policy(out)
    assert meta["base"] == {"name": "tiny", "id": "tiny:1"} and meta["lora"]["r"] == 4
    assert json.loads((out / "training.json").read_text())["completed_steps"] == 2
    gmeta, tensors = read_lora_gguf(out / "adapter.gguf")
    assert gmeta["general.type"] == "adapter" and gmeta["adapter.type"] == "lora"
    assert gmeta["adapter.lora.alpha"] == pytest.approx(8.0)
    a = saved["base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight"].numpy()
    b = saved["base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight"].numpy()
    assert tensors["blk.1.attn_q.weight.lora_a"].shape == a.shape == (4, 32)
    assert (tensors["blk.1.attn_q.weight.lora_a"] == a).all() and (tensors["blk.1.attn_v.weight.lora_b"] == b).all()
    assert len(tensors) == 2 * 4 * 2  # 2 layers x q/k/v/o x (a, b)

    # the adapters reload into a fresh base and give the same log-probabilities
    from legalrag.training.policy.model import load_adapter_weights

    again = add_lora(tiny_qwen2(), SETTINGS)
    load_adapter_weights(again, out / "adapter")
    assert trajectory_logprob(again, char_encode, GOOD) == pytest.approx(
        trajectory_logprob(resumed_model, char_encode, GOOD), rel=1e-5)
    with pytest.raises(InputError, match="tiny.*other-model|other-model.*tiny"):
        check_base(meta, "other-model", "other:2", out)


def test_training_refuses_queries_without_gold(tmp_path):
    from legalrag.types import Query

    with pytest.raises(InputError, match="gold"):
        train_policy(add_lora(tiny_qwen2(), SETTINGS), char_encode, [Query(text="问题", id="x")], scripted_sampler,
                     settings=SETTINGS, reward_settings=RewardSettings(), work=tmp_path / "w", fingerprint="f",
                     progress=False)
