"""The trajectory reward (LegalMALR's shaped pool-recall reward), with its coefficients as settings.

``R = recall_weight * recall(pool) - step_penalty * planner_iterations
      + gain_bonus * sum over agent rounds of (new gold articles retrieved in that round / |gold|)
      - early_exit_penalty * exits attempted before any reformulation was retrieved
      - failure_penalty * replies that stayed unusable after the re-asks``

The shaping term pays each round that brings gold into the pool (the original query's own retrieval is not
an action of the policy and earns nothing); the step penalty prices every planner decision, so a policy that
finds the same gold in fewer rounds scores higher.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

from legalrag.errors import InputError


@dataclass(frozen=True)
class RewardSettings:
    recall_weight: float = 1.0
    step_penalty: float = 0.02
    gain_bonus: float = 0.1
    early_exit_penalty: float = 0.2
    failure_penalty: float = 0.1

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value < 0:
                raise InputError(f"reward coefficient {name} must be >= 0, got {value}", field=name)

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class RewardBreakdown:
    total: float
    pool_recall: float
    step_cost: float
    gain: float
    early_exit: float
    failures: float

    def as_dict(self) -> dict[str, float]:
        return {k: round(v, 6) for k, v in asdict(self).items()}


def pool_recall(pool: Sequence[str], gold: Sequence[str]) -> float:
    gold_set = set(gold)
    if not gold_set:
        raise InputError("a reward needs gold articles: this query has none")
    return len(gold_set & set(pool)) / len(gold_set)


def gold_gains(retrieved: Sequence[Sequence[str]], gold: Sequence[str]) -> list[int]:
    """New gold articles each retrieval step added to the pool (steps in order)."""
    gold_set, seen, out = set(gold), set(), []
    for ids in retrieved:
        new = (set(ids) & gold_set) - seen
        seen |= new
        out.append(len(new))
    return out


def trajectory_reward(*, pool: Sequence[str], gold: Sequence[str], planner_iterations: int,
                      step_gains: Sequence[int], agent_steps: Sequence[bool], refused_exits: int, failures: int,
                      settings: RewardSettings = RewardSettings()) -> RewardBreakdown:
    """``step_gains[i]`` is retrieval step i's new gold; ``agent_steps[i]`` says it retrieved a reformulation
    (False for the original query)."""
    if len(step_gains) != len(agent_steps):
        raise InputError("step_gains and agent_steps must have one entry per retrieval step")
    s = settings
    recall = pool_recall(pool, gold)
    gain = sum(g for g, by_agent in zip(step_gains, agent_steps) if by_agent) / len(set(gold))
    parts = dict(pool_recall=recall, step_cost=s.step_penalty * planner_iterations, gain=s.gain_bonus * gain,
                 early_exit=s.early_exit_penalty * refused_exits, failures=s.failure_penalty * failures)
    total = (s.recall_weight * recall - parts["step_cost"] + parts["gain"] - parts["early_exit"]
             - parts["failures"])
    return RewardBreakdown(total=total, **parts)


def reward_of(trajectory: Any, settings: RewardSettings = RewardSettings()) -> RewardBreakdown:
    """The reward of a :class:`~legalrag.training.policy.trajectory.Trajectory`."""
    t = trajectory
    return trajectory_reward(pool=t.pool, gold=t.gold_ids, planner_iterations=t.planner_iterations,
                             step_gains=gold_gains([r["ids"] for r in t.retrieved], t.gold_ids),
                             agent_steps=[r["source"] != "original" for r in t.retrieved],
                             refused_exits=t.refused_exits, failures=t.failures, settings=settings)
