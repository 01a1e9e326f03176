"""Rollouts as data: the planner loop on real BM25 with a scripted LLM whose replies depend on the seed
(the LLM is an external dependency; the loop, recording, reward and resumable file are ours)."""

from __future__ import annotations

import json

import pytest

from legalrag.agents.planner import PlannerConfig, PlannerLoop
from legalrag.errors import InputError
from legalrag.testing import ScriptedLLM
from legalrag.training.policy.reward import reward_of
from legalrag.training.policy.rollouts import collect_rollouts, read_rollouts
from legalrag.training.policy.trajectory import RecordingLLM, run_rollout
from legalrag.types import Query
from support.policy_fixtures import QUERY, QUERY2, bm25, seeded_reply


def loop(replies=seeded_reply):
    cfg = PlannerConfig(lang="zh", max_rounds=3, first_stage_k=3, pool_k=3, min_new_fraction=0.0)
    return PlannerLoop(RecordingLLM(ScriptedLLM(replies, supports_json_schema=True)), bm25(), config=cfg)


def test_a_rollout_records_calls_retrievals_and_gold_gain():
    good = run_rollout(loop(), QUERY, rollout=0, seed=0)
    bad = run_rollout(loop(), QUERY, rollout=1, seed=1)
    assert good.actions == ("single_element", "exit") and good.planner_iterations == 2
    assert [r["source"] for r in good.retrieved] == ["original", "single_element"]
    assert len(good.calls) == 3 and all(c["messages"] and c["reply"] for c in good.calls)
    assert good.calls[1]["reply"].startswith('{"queries"')
    assert sum(good.gold_gain) == len(set(QUERY.gold_ids) & set(good.pool))
    assert good.pool_recall > bad.pool_recall
    assert reward_of(good).total > reward_of(bad).total


def test_unparsable_replies_are_counted_and_penalised_never_raised():
    t = run_rollout(loop(["no json here", "still not json"]), QUERY, rollout=0, seed=0)
    assert t.failures >= 1
    r = reward_of(t)
    assert r.failures > 0 and r.total < r.pool_recall


def test_collect_rollouts_resumes_after_a_kill(tmp_path):
    out = tmp_path / "r.jsonl"
    first = collect_rollouts(loop(), [QUERY], out, n=2)
    assert len(first) == 2 and {t.seed for t in first} == {0, 1000}
    # a kill during the second query: one of its rollouts written, the next line torn
    line = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    line.update(query_id=QUERY2.id, query=QUERY2.text)
    with open(out, "a", encoding="utf-8") as f:
        f.write(json.dumps(line, ensure_ascii=False) + "\n" + '{"query_id": "q2", "rollo')
    llm_loop = loop()
    done = collect_rollouts(llm_loop, [QUERY, QUERY2], out, n=2)
    assert sorted((t.query_id, t.rollout) for t in read_rollouts(out)) == [("q1", 0), ("q1", 1), ("q2", 0), ("q2", 1)]
    assert len(done) == 4 and all(t.reward for t in done)
    assert all(QUERY.text not in str(c["messages"]) for c in llm_loop.llm.calls)  # q1 was not redone


def test_rollouts_need_gold(tmp_path):
    with pytest.raises(InputError, match="gold"):
        collect_rollouts(loop(), [Query(text="问题", id="x")], tmp_path / "r.jsonl", n=2)
