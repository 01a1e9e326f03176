"""The fused planner (one call per round: the planner's reply carries the chosen agent's queries).

Retrieval is the real BM25 over the planner tests' inline corpus; the loop, its fallbacks, the trajectory, the
rollout recording and the CLI/HTTP wiring are the real ones. ``ScriptedLLM`` stands in for the model only
(an external dependency that cannot be made to misbehave on demand); its replies depend on which prompt asked:
the fused planner's schema has ``action`` and ``queries``, a rewriter's only ``queries``.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from legalrag.agents.fused import parse_fused
from legalrag.agents.planner import PlannerConfig, PlannerLoop
from legalrag.agents.rewrite import MAX_QUERIES, Agent
from legalrag.cli import app
from legalrag.llm.base import ChatRequest
from legalrag.llm.structured import CallRecord, ReplyError
from legalrag.testing import ScriptedLLM
from legalrag.types import Document
from legalrag.wiring import Root

from unit.agents.test_planner import CORPUS, QUERY

FUSED = PlannerConfig(fused=True, min_new_fraction=0.0, retries=1)


@pytest.fixture(scope="module")
def bm25():
    from legalrag.retrieval.bm25 import BM25Retriever

    return BM25Retriever.from_documents([Document(i, text, title) for i, title, text in CORPUS], lang="zh")


def is_fused(request: ChatRequest) -> bool:
    props = (request.json_schema or {}).get("properties", {})
    return "action" in props and "queries" in props


def script(fused_replies: list[dict | str], rewriter_reply: dict | str = '{"queries": ["离婚 子女抚养"]}'):
    """Fused calls take ``fused_replies`` in order (the last repeats); any other call gets ``rewriter_reply``."""
    fused = list(fused_replies)

    def reply(request: ChatRequest) -> str:
        if is_fused(request):
            r = fused.pop(0) if len(fused) > 1 else fused[0]
        else:
            r = rewriter_reply
        return r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)

    return ScriptedLLM(reply, supports_json_schema=True)


def decision(action: str, queries: list[str] | None = None, reason: str = "r") -> dict:
    return {"action": action, "reason": reason, "queries": queries or []}


# ---- parsing ----------------------------------------------------------------------------------------------

def test_an_exit_carries_no_queries_and_an_agent_needs_them():
    rec = CallRecord()
    assert parse_fused(decision("exit", ["离婚"]), rec, query=QUERY).queries == ()
    assert any("exit carries none" in r for r in rec.repairs)
    named: list[str] = []
    with pytest.raises(ReplyError, match="supportive_law needs 1 to 2 queries"):
        parse_fused(decision("supportive_law", ["", " "]), CallRecord(), query=QUERY, named=named)
    with pytest.raises(ReplyError, match='"queries" is missing'):
        parse_fused({"action": "single_element", "reason": "r"}, CallRecord(), query=QUERY, named=named)
    assert named == ["supportive_law", "single_element"]


@pytest.mark.parametrize("agent", [a.value for a in Agent])
def test_queries_are_capped_per_agent(agent):
    many = [f"查询{i} 离婚 家庭暴力" for i in range(6)]
    rec = CallRecord()
    reply = parse_fused(decision(agent, many), rec, query=QUERY)
    assert reply.action == agent and reply.queries == tuple(many[: MAX_QUERIES[Agent(agent)]])
    assert any(f"kept the first {MAX_QUERIES[Agent(agent)]}" in r for r in rec.repairs)


# ---- the loop ---------------------------------------------------------------------------------------------

def test_a_fused_run_makes_one_call_per_round(bm25):
    llm = script([decision("multi_element", ["家庭暴力 离婚", "子女 抚养", "人身安全保护令", "离婚诉讼", "赔偿"]),
                  decision("supportive_law", ["离婚诉讼 程序"]), decision("exit")])
    res = PlannerLoop(llm, bm25, config=FUSED).run(QUERY)
    assert res.rounds == 2 and res.stop_reason == "planner_exit" and res.failures == 0
    assert len(llm.requests) == 3 and all(is_fused(r) for r in llm.requests)  # no rewriter call at all
    assert res.llm_calls == 3 and res.tokens == 3 * (10 + 5)  # the fused calls are counted in usage
    assert res.reformulations == ("家庭暴力 离婚", "子女 抚养", "人身安全保护令", "离婚诉讼", "离婚诉讼 程序")
    assert res.retrieval_calls == 1 + 4 + 1
    system, user = (m["content"] for m in llm.requests[0].messages)
    assert "queries" in system and "用中文写查询" in user  # the fused prompt, with the language rule
    planner = [s for s in res.steps if s.agent == "planner" and "round" in (s.input or {})]
    assert [s.action for s in planner] == ["multi_element", "supportive_law", "exit"]
    assert all(s.output["fused"] and s.output["attempts"] == 1 and s.tokens == 15 for s in planner)
    rewrites = [s for s in res.steps if s.action == "rewrite"]
    assert [s.agent for s in rewrites] == ["multi_element", "supportive_law"]
    assert rewrites[0].output["queries"] == list(res.reformulations[:4]) and rewrites[0].tokens == 0
    assert "multi_element: r" in llm.requests[1].messages[-1]["content"]  # the decision is shown next round


def test_an_exit_before_any_reformulation_is_refused(bm25):
    llm = script([decision("exit", ["离婚"]), decision("exit")])
    res = PlannerLoop(llm, bm25, config=FUSED).run(QUERY)
    assert res.refused_exits == 1 and res.rounds == 1 and res.stop_reason == "planner_exit"
    refused = [s for s in res.steps if s.error and "exit refused" in s.error]
    assert refused and refused[0].action == "single_element"
    # the fallback agent's own rewriter writes its queries: fused, rewriter, fused
    assert [is_fused(r) for r in llm.requests] == [True, False, True]
    assert res.reformulations == ("离婚 子女抚养",) and res.retrieval_calls == 2
    rewrite = [s for s in res.steps if s.action == "rewrite"][0]
    assert rewrite.output["attempts"] == 1 and "fused" not in rewrite.output


def test_unusable_fused_replies_fall_back_and_are_counted(bm25):
    llm = script(["not json at all"])
    res = PlannerLoop(llm, bm25, config=PlannerConfig(fused=True, retries=1, max_rounds=3,
                                                        min_new_fraction=0.0)).run(QUERY)
    # round 1: two failed attempts, then the first fallback agent's rewriter; round 2: two failed attempts, and
    # with a reformulation retrieved the loop exits
    assert res.failures == 2 and res.rounds == 1 and len(llm.requests) == 5
    assert res.llm_calls == 5 and res.reformulations == ("离婚 子女抚养",)
    errors = [s.error for s in res.steps if s.agent == "planner" and "round" in (s.input or {})]
    assert "fell back to 'single_element'" in errors[0] and "fell back to 'exit'" in errors[1]


def test_an_agent_without_usable_queries_is_a_failed_rewrite(bm25):
    llm = script([decision("multi_element", []), decision("multi_element", ["  "]),
                  decision("supplementary_element", ["家庭暴力 离婚 不满两周岁 子女 抚养"]), decision("exit")])
    res = PlannerLoop(llm, bm25, config=FUSED).run(QUERY)
    assert res.failures == 1 and res.rounds == 2 and len(llm.requests) == 4
    failed = [s for s in res.steps if s.action == "rewrite"][0]
    assert failed.agent == "multi_element" and failed.output["queries"] == []
    assert "no usable queries after 2 attempts" in failed.error
    assert "multi_element needs 1 to 4 queries" in llm.requests[1].messages[-1]["content"]  # the re-ask says why
    assert res.reformulations == ("家庭暴力 离婚 不满两周岁 子女 抚养",) and res.retrieval_calls == 2


def test_other_language_queries_get_the_corpus_language_rule(bm25):
    llm = script([decision("single_element", ["离婚 子女抚养"]), decision("exit")])
    res = PlannerLoop(llm, bm25, config=FUSED).run("Can I get a divorce?")
    assert res.steps[0].action == "language"
    assert "法条库是中文的" in llm.requests[0].messages[-1]["content"]


def test_coverage_stop_and_max_rounds_hold(bm25):
    llm = script([decision("single_element", [QUERY])])
    res = PlannerLoop(llm, bm25, config=PlannerConfig(fused=True, min_new_fraction=0.5)).run(QUERY)
    assert res.stop_reason == "coverage" and res.rounds == 1 and len(llm.requests) == 1
    llm = script([decision("single_element", ["离婚 家庭暴力"])])
    res = PlannerLoop(llm, bm25, config=PlannerConfig(fused=True, min_new_fraction=0.0, max_rounds=3)).run(QUERY)
    assert res.stop_reason == "max_rounds" and res.rounds == 3 and len(llm.requests) == 3


# ---- rollouts (GRPO data) ---------------------------------------------------------------------------------

def test_a_fused_rollout_records_every_call_for_rescoring(bm25):
    from legalrag.training.policy.reward import reward_of
    from legalrag.training.policy.trajectory import RecordingLLM, run_rollout
    from legalrag.types import Query

    llm = script([decision("multi_element", ["家庭暴力 离婚", "子女 抚养"]), decision("exit")])
    loop = PlannerLoop(RecordingLLM(llm), bm25, config=FUSED)
    t = run_rollout(loop, Query(text=QUERY, id="q1", gold_ids=("1", "2", "3")), rollout=0, seed=5)
    assert t.actions == ("multi_element", "exit") and t.planner_iterations == 2
    assert [r["source"] for r in t.retrieved] == ["original", "multi_element", "multi_element"]
    assert len(t.calls) == 2 and json.loads(t.calls[0]["reply"])["queries"] == ["家庭暴力 离婚", "子女 抚养"]
    assert t.calls[0]["messages"] == [dict(m) for m in llm.requests[0].messages]  # exactly what was sent
    assert t.calls[0]["seed"] == 5 + 101 * 1  # the seed formula of the planner calls
    r = reward_of(t)
    assert r.pool_recall == pytest.approx(t.pool_recall) and r.step_cost == pytest.approx(0.02 * 2)
    assert r.failures == 0 and t.tokens == 2 * 15


# ---- wiring: CLI and HTTP -----------------------------------------------------------------------------------

NEW = "盗窃 公私财物 违约责任 经济补偿"  # finds articles the original query does not: no coverage stop


def one_round(request: ChatRequest) -> str:
    """A fused planner that runs single_element once, then exits (whatever the rollout)."""
    if not is_fused(request):
        return '{"queries": ["离婚 子女抚养"]}'
    if "1. single_element" in request.messages[-1]["content"]:
        return json.dumps(decision("exit"))
    return json.dumps(decision("single_element", [NEW]), ensure_ascii=False)


@pytest.fixture
def index_dir(tmp_path):
    from legalrag.retrieval.index import build_index

    build_index(tmp_path / "idx", [Document(i, text, title) for i, title, text in CORPUS], retrievers=["bm25"],
                lang="zh")
    return tmp_path / "idx"


def test_the_cli_flag_reaches_the_planner(index_dir, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query_id": "q1", "query": QUERY, "gold_ids": ["1", "2"]}, ensure_ascii=False)
                       + "\n", encoding="utf-8")
    trace, runs = tmp_path / "t.jsonl", tmp_path / "run"
    llm = ScriptedLLM(one_round, supports_json_schema=True)
    res = CliRunner().invoke(app, ["eval", "retrieval", "--index", str(index_dir), "--queries", str(queries),
                                   "--agents", "-o", "fused_planner=true", "-o", f"trace={trace}", "--out", str(runs),
                                   "--json", "--no-progress"], obj=Root(llm=llm))
    assert res.exit_code == 0, res.output
    assert len(llm.requests) == 2 and all(is_fused(r) for r in llm.requests)
    rows = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert rows[-1]["summary"]["llm_calls"] == 2 and any(r.get("output", {}).get("fused") for r in rows)
    manifest = json.loads((runs / "manifest.json").read_text(encoding="utf-8"))
    assert "fused_planner" in json.dumps(manifest)

    two_call = script([decision("single_element")], rewriter_reply='{"queries": ["离婚 子女抚养"]}')
    res = CliRunner().invoke(app, ["search", QUERY, "--index", str(index_dir), "--agents", "-o", "fused_planner=false",
                                   "--json"], obj=Root(llm=two_call))
    assert res.exit_code == 0, res.output
    assert not any(is_fused(r) for r in two_call.requests)

    res = CliRunner().invoke(app, ["search", QUERY, "--index", str(index_dir), "-o", "fused_planner=true"],
                             obj=Root(llm=llm))
    assert res.exit_code != 0 and "add --agents" in str(res.exception)


def test_rollouts_take_the_flag(index_dir, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query_id": "q1", "query": QUERY, "gold_ids": ["1", "2"]}, ensure_ascii=False)
                       + "\n", encoding="utf-8")
    out = tmp_path / "r.jsonl"
    llm = ScriptedLLM(one_round, supports_json_schema=True)
    res = CliRunner().invoke(app, ["agents", "rollouts", "--index", str(index_dir), "--queries", str(queries),
                                   "--out", str(out), "-o", "n=2", "-o", "fused_planner=true", "--json"], obj=Root(llm=llm))
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 2 and all(len(r["calls"]) == 2 and r["actions"] == ["single_element", "exit"] for r in rows)


def test_the_http_route_takes_fused(tmp_path):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from legalrag.server import ServerSettings, create_app
    from support.server_setup import sample_index

    llm = script([decision("single_element", ["用人单位 未订立 书面劳动合同 二倍工资"]), decision("exit")])
    client = TestClient(create_app(sample_index(tmp_path / "idx"), llm, ServerSettings(rate_limit=0)))
    body = client.post("/agents/search", json={"query": "公司不签合同能要双倍工资吗", "k": 5, "fused": True}).json()
    assert body["summary"]["llm_calls"] == 2 and body["summary"]["reformulations"] == ["用人单位 未订立 书面劳动合同 二倍工资"]
    assert all(is_fused(r) for r in llm.requests)


# ---- the real embedded model ---------------------------------------------------------------------------------

@pytest.mark.llm
def test_a_fused_run_with_the_embedded_model(llm, bm25):
    cfg = PlannerConfig(fused=True, max_rounds=2, fused_max_tokens=120, retries=1, seed=7)
    res = PlannerLoop(llm, bm25, config=cfg).run(QUERY)
    assert 1 <= res.rounds <= 2 and res.retrieval_calls >= 2  # the original query plus at least one reformulation
    planner = [s for s in res.steps if s.agent == "planner" and "round" in (s.input or {})]
    rewrites = [s for s in res.steps if s.action == "rewrite"]
    # one fused call per decision, re-asks and fallback rewrites aside
    assert res.llm_calls == sum(s.output["attempts"] for s in planner) + sum(s.output.get("attempts", 0)
                                                                             for s in rewrites)
    assert all(len(s.output["queries"]) <= MAX_QUERIES[Agent(s.agent)] for s in rewrites)
