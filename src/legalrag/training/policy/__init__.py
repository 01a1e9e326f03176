"""Training the statute agents' policy (the planner and every rewriting agent: one model, several prompts)
with GRPO over whole planner trajectories, as LegalMALR does.

- ``trajectory``: one rollout of the planner loop as data (every LLM call's prompt and reply, the actions,
  reformulations, retrieved ids, pool, per-step gold gain) and the recording LLM wrapper that captures it;
- ``reward``: the trajectory reward (pool recall, step penalty, gold-gain shaping, early-exit and
  unusable-reply penalties);
- ``rollouts``: N seeded rollouts per query, written resumably, and the stability analysis;
- ``grpo``: group-normalised advantages and the policy-gradient update on LoRA adapters;
- ``lora_gguf``: the adapters as a llama.cpp LoRA GGUF, so the embedded runtime samples with them;
- ``store``: the policy directory (manifest naming its base model, adapters, training record).

Nothing below ``training`` imports this package.
"""
