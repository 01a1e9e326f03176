"""GRPO over whole planner trajectories, with our own loss on transformers + peft.

Why not TRL's ``GRPOTrainer``: it samples one completion per prompt and scores that completion. A planner
trajectory is many calls (planner decisions, rewrites, re-asks), each with its own prompt that depends on
what earlier calls retrieved, and the reward belongs to the whole trajectory. So sampling happens outside
(the embedded llama.cpp runtime with the current adapter, :mod:`legalrag.training.policy.trajectory`),
and this module scores the recorded replies:

    log pi(trajectory) = sum over its calls of sum over the reply's tokens of log pi(token | prompt, prefix)
    advantage_i       = (R_i - mean_group(R)) / (std_group(R) + eps), 0 for a group whose rewards are equal
    loss              = - mean over the mini-batch's trajectories of advantage_i * log pi(trajectory_i)

Each batch of samples is used for exactly one update, so the importance ratio pi/pi_old is 1 at the update
and PPO-style clipping would never act: it is left out (no KL term either, as in LegalMALR's setting
with LoRA on a frozen base). The sampler decodes under a JSON grammar and a 4-bit base; the learner scores
the same tokens under the dequantised base without the grammar, a small mismatch accepted for speed.
Gradients are accumulated call by call, so memory holds one sequence's activations at a time.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

from legalrag.errors import InputError

Encoded = tuple[list[int], list[int]]  # (prompt token ids, reply token ids)
Encoder = Callable[[Sequence[dict], str], Encoded]


@dataclass(frozen=True)
class GRPOSettings:
    group_size: int = 4  # G trajectories per query
    groups_per_step: int = 2  # mini-batch of groups per optimiser step
    epochs: int = 1
    learning_rate: float = 5e-5
    warmup_steps: int = 0
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    adv_eps: float = 1e-4
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.0
    target_modules: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")
    max_prompt_tokens: int = 2048  # longer prompts keep their last tokens (the reply's context)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.group_size < 2:
            raise InputError(f"GRPO needs a group: -o group_size must be >= 2, got {self.group_size}",
                             field="group_size")
        if self.groups_per_step < 1 or self.epochs < 1:
            raise InputError("--groups-per-step and --epochs must be >= 1")
        if self.learning_rate <= 0 or self.lora_r < 1:
            raise InputError("-o learning_rate must be > 0 and -o lora_r >= 1")

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["target_modules"] = list(self.target_modules)
        return d


def group_advantages(rewards: Sequence[float], eps: float = 1e-4) -> list[float]:
    """Rewards normalised within their group; a group without spread teaches nothing (all zeros)."""
    if len(rewards) < 2:
        raise InputError("a GRPO group needs at least two trajectories")
    mean = statistics.fmean(rewards)
    std = statistics.pstdev(rewards)
    if std < eps:
        return [0.0] * len(rewards)
    return [(r - mean) / (std + eps) for r in rewards]


def chat_encoder(tokenizer: Any, max_prompt_tokens: int = 2048) -> Encoder:
    """Prompt ids through the model's own chat template (as llama.cpp renders it), reply ids + end of turn."""
    end = tokenizer.convert_tokens_to_ids("<|im_end|>") if "<|im_end|>" in tokenizer.get_vocab() \
        else tokenizer.eos_token_id

    def encode(messages: Sequence[dict], reply: str) -> Encoded:
        ids = tokenizer.apply_chat_template([dict(m) for m in messages], add_generation_prompt=True,
                                            tokenize=True)
        if hasattr(ids, "keys"):  # a BatchEncoding in newer transformers
            ids = ids["input_ids"]
        reply_ids = tokenizer(reply, add_special_tokens=False)["input_ids"]
        if end is not None:
            reply_ids = reply_ids + [end]
        return list(ids)[-max_prompt_tokens:], list(reply_ids)

    return encode


def reply_logprob(model: Any, prompt_ids: Sequence[int], reply_ids: Sequence[int]):
    """Sum of log pi(reply token | everything before it), a scalar tensor with a graph."""
    import torch

    if not reply_ids:
        return torch.zeros((), requires_grad=False)
    device = next(model.parameters()).device
    ids = torch.tensor([list(prompt_ids) + list(reply_ids)], device=device)
    logits = model(input_ids=ids, logits_to_keep=len(reply_ids) + 1).logits[0, :-1].float()
    target = torch.tensor(list(reply_ids), device=device)
    return torch.log_softmax(logits, dim=-1).gather(-1, target[:, None]).sum()


def trajectory_logprob(model: Any, encode: Encoder, calls: Sequence[dict]) -> float:
    """log pi of a whole trajectory (no graph): for checks and reports."""
    import torch

    with torch.no_grad():
        return float(sum(reply_logprob(model, *encode(c["messages"], c["reply"])) for c in calls))


def policy_gradient_step(model: Any, optimizer: Any, scheduler: Any, encode: Encoder,
                         batch: Sequence[tuple[float, Sequence[dict]]], max_grad_norm: float = 1.0) -> dict[str, float]:
    """One update on ``batch`` = [(advantage, the trajectory's calls)]: loss = -mean(A * log pi(traj)).
    Trajectories with advantage 0 are skipped (their gradient term is zero)."""
    import torch

    model.train()
    optimizer.zero_grad(set_to_none=True)
    n = len(batch)
    loss_value, tokens = 0.0, 0
    for advantage, calls in batch:
        if advantage == 0.0:
            continue
        for call in calls:
            prompt_ids, reply_ids = encode(call["messages"], call["reply"])
            loss = -advantage * reply_logprob(model, prompt_ids, reply_ids) / n
            loss.backward()
            loss_value += float(loss.detach())
            tokens += len(reply_ids)
    params = [p for p in model.parameters() if p.requires_grad]
    grad_norm = float(torch.nn.utils.clip_grad_norm_(params, max_grad_norm)) if tokens else 0.0
    if tokens:
        optimizer.step()
    scheduler.step()
    return {"loss": loss_value, "grad_norm": grad_norm, "reply_tokens": tokens}


def cosine_schedule(optimizer: Any, warmup: int, total: int):
    import torch

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / (warmup + 1)
        progress = (step - warmup) / max(1, total - warmup)
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def make_optimizer(model: Any, settings: GRPOSettings, total_steps: int):
    import torch

    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise InputError("the model has no trainable parameters (LoRA adapters expected)")
    opt = torch.optim.AdamW(params, lr=settings.learning_rate, weight_decay=settings.weight_decay)
    return opt, cosine_schedule(opt, settings.warmup_steps, total_steps)
