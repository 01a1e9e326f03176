"""The trajectory reward, group normalisation and the stability categories, on hand-made values."""

from __future__ import annotations

import pytest

from legalrag.errors import InputError
from legalrag.training.policy.grpo import GRPOSettings, group_advantages
from legalrag.training.policy.reward import RewardSettings, gold_gains, trajectory_reward
from legalrag.training.policy.rollouts import Stability, stability, summarise, variability
from legalrag.training.policy.trajectory import Trajectory


def test_reward_adds_recall_shaping_and_penalties():
    # original query finds gold a; round 1 finds b (and a again); round 2 finds nothing new; c is never found
    retrieved = [["a", "x"], ["a", "b"], ["y"]]
    gains = gold_gains(retrieved, ["a", "b", "c"])
    assert gains == [1, 1, 0]
    s = RewardSettings(recall_weight=1.0, step_penalty=0.05, gain_bonus=0.3, early_exit_penalty=0.2,
                       failure_penalty=0.1)
    r = trajectory_reward(pool=["a", "x", "b", "y"], gold=["a", "b", "c"], planner_iterations=3,
                          step_gains=gains, agent_steps=[False, True, True], refused_exits=1, failures=2, settings=s)
    assert r.pool_recall == pytest.approx(2 / 3)
    assert r.gain == pytest.approx(0.3 * 1 / 3)  # the original query's own gold earns no shaping bonus
    assert r.step_cost == pytest.approx(0.15)
    assert r.early_exit == pytest.approx(0.2) and r.failures == pytest.approx(0.2)
    assert r.total == pytest.approx(2 / 3 + 0.1 - 0.15 - 0.2 - 0.2)


def test_fewer_rounds_to_the_same_pool_score_higher():
    common = dict(pool=["a"], gold=["a"], refused_exits=0, failures=0)
    fast = trajectory_reward(planner_iterations=1, step_gains=[0, 1], agent_steps=[False, True], **common)
    slow = trajectory_reward(planner_iterations=4, step_gains=[0, 1, 0, 0, 0],
                             agent_steps=[False, True, True, True, True], **common)
    assert fast.total > slow.total


def test_reward_needs_gold_and_nonnegative_coefficients():
    with pytest.raises(InputError, match="gold"):
        trajectory_reward(pool=["a"], gold=[], planner_iterations=1, step_gains=[0], agent_steps=[False],
                          refused_exits=0, failures=0)
    with pytest.raises(InputError, match="step_penalty"):
        RewardSettings(step_penalty=-1)


def test_group_advantages_are_normalised_and_flat_groups_teach_nothing():
    adv = group_advantages([1.0, 0.0, 0.5, 0.5])
    assert sum(adv) == pytest.approx(0.0, abs=1e-9)
    assert adv[0] > adv[2] == adv[3] > adv[1]
    assert adv[0] == pytest.approx(0.5 / (0.3535534 + 1e-4), rel=1e-4)  # population std of the group
    assert group_advantages([0.3, 0.3, 0.3]) == [0.0, 0.0, 0.0]
    with pytest.raises(InputError):
        group_advantages([1.0])


def test_a_group_of_one_is_refused():
    with pytest.raises(InputError, match="group"):
        GRPOSettings(group_size=1)


@pytest.mark.parametrize("recalls,category", [
    ([1.0, 1.0, 1.0], Stability.ALWAYS_FULL),
    ([1.0, 0.5, 1.0], Stability.OCCASIONALLY_FULL),
    ([0.5, 0.0, 0.5], Stability.NEVER_FULL_UNSTABLE),
    ([0.5, 0.5, 0.5], Stability.CONSISTENTLY_PARTIAL),
    ([0.0, 0.0], Stability.CONSISTENTLY_PARTIAL),
])
def test_stability_categories(recalls, category):
    assert stability(recalls) is category


def _traj(qid, rollout, pool):
    return Trajectory(query_id=qid, query="q", gold_ids=("a", "b"), rollout=rollout, seed=rollout, actions=(),
                      reformulations=(), retrieved=(), pool=tuple(pool), gold_gain=(), planner_iterations=1,
                      refused_exits=0, failures=0, repairs=0, stop_reason="", tokens=0, seconds=0.0)


def test_variability_summary_over_queries():
    trajs = [_traj("1", 0, ["a", "b"]), _traj("1", 1, ["a"]), _traj("2", 0, ["a"]), _traj("2", 1, ["a"])]
    rows = variability(trajs)
    s = summarise(rows)
    assert s["max"] == pytest.approx((1.0 + 0.5) / 2) and s["min"] == pytest.approx(0.5)
    assert s["mean"] == pytest.approx((0.75 + 0.5) / 2)
    assert s["categories"][Stability.OCCASIONALLY_FULL.value] == 1
    assert s["categories"][Stability.CONSISTENTLY_PARTIAL.value] == 1
