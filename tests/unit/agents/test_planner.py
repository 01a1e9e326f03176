"""The planner loop: bounds, refusal of an early exit, bad-reply repair, language handling, trajectory output.

Retrieval is the real BM25 over a small inline corpus. The LLM is the real embedded 0.5B (``small_llm``) for the
end-to-end run. ``ScriptedLLM`` below returns fixed malformed replies: it is used ONLY to drive the repair and
retry paths of our own loop (invalid JSON, unknown agents, empty queries, early exits), because the LLM is an
external dependency there and a real model cannot be made to misbehave on demand.
"""

from __future__ import annotations

import json

import pytest

from legalrag.llm.structured import CallRecord, ReplyError, extract_json
from legalrag.agents.planner import (
    MASRetriever,
    PlannerConfig,
    PlannerLoop,
    detect_language,
    normalise_action,
)
from legalrag.errors import InputError
from legalrag.retrieval.base import Retriever
from legalrag.types import Document
from legalrag.testing import ScriptedLLM

CORPUS = [
    ("1", "中华人民共和国民法典第一千零七十九条", "夫妻一方要求离婚的，可以由有关组织进行调解或者直接向人民法院提起离婚诉讼。有下列情形之一，调解无效的，应当准予离婚：实施家庭暴力或者虐待、遗弃家庭成员。"),
    ("2", "中华人民共和国民法典第一千零八十四条", "离婚后，不满两周岁的子女，以由母亲直接抚养为原则。已满两周岁的子女，父母双方对抚养问题协议不成的，由人民法院根据双方的具体情况，按照最有利于未成年子女的原则判决。"),
    ("3", "中华人民共和国反家庭暴力法第二十三条", "当事人因遭受家庭暴力或者面临家庭暴力的现实危险，向人民法院申请人身安全保护令的，人民法院应当受理。"),
    ("4", "中华人民共和国刑法第二百六十四条", "盗窃公私财物，数额较大的，或者多次盗窃、入户盗窃、携带凶器盗窃、扒窃的，处三年以下有期徒刑、拘役或者管制。"),
    ("5", "中华人民共和国民法典第五百七十七条", "当事人一方不履行合同义务或者履行合同义务不符合约定的，应当承担继续履行、采取补救措施或者赔偿损失等违约责任。"),
    ("6", "中华人民共和国劳动合同法第四十七条", "经济补偿按劳动者在本单位工作的年限，每满一年支付一个月工资的标准向劳动者支付。"),
    ("7", "中华人民共和国刑法第二百三十四条", "故意伤害他人身体的，处三年以下有期徒刑、拘役或者管制。"),
    ("8", "中华人民共和国民事诉讼法第一百二十二条", "起诉必须符合下列条件：原告是与本案有直接利害关系的公民、法人和其他组织；有明确的被告；有具体的诉讼请求和事实、理由。"),
]
QUERY = "老公打我，我想离婚，孩子归谁？"


@pytest.fixture(scope="module")
def bm25():
    from legalrag.retrieval.bm25 import BM25Retriever

    docs = [Document(i, text, title) for i, title, text in CORPUS]
    return BM25Retriever.from_documents(docs, lang="zh")


# ---- pure parsing --------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw,expected", [
    ("exit", "exit"), ("EXIT", "exit"), ("finish", "exit"), ("结束", "exit"), ("Single-Element", "single_element"),
    ("multi element", "multi_element"), ("decompose", "multi_element"), ("supportive_laws", "supportive_law"),
    ("semantic_abnormality_agent", "semantic_abnormality"), ("suplementary_element", "supplementary_element"),
])
def test_actions_are_normalised(raw, expected):
    assert normalise_action(raw, CallRecord()) == expected


@pytest.mark.parametrize("raw", ["", None, 3, "search the web", "translate"])
def test_unknown_actions_are_rejected(raw):
    with pytest.raises(ReplyError):
        normalise_action(raw, CallRecord())


def test_extract_json_from_fences_and_chatter():
    assert extract_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert extract_json('Sure! {"action": "exit", "reason": "ok"} Hope this helps.') == {"action": "exit", "reason": "ok"}
    with pytest.raises(ValueError):
        extract_json("no json here")


def test_detect_language():
    assert detect_language(QUERY) == "zh"
    assert detect_language("Can I divorce my husband?") == "en"
    assert detect_language("我的iPhone被偷了") == "zh"


def test_config_checks():
    with pytest.raises(InputError):
        PlannerConfig(max_rounds=0)
    with pytest.raises(InputError):
        PlannerConfig(pool_k=40, first_stage_k=30)
    with pytest.raises(InputError, match="unknown agent"):
        PlannerConfig(script=("translate",))


# ---- repair and retry paths (scripted replies) -----------------------------------------------------------

def test_early_exit_is_refused_and_counted(bm25):
    llm = ScriptedLLM(['{"action": "exit", "reason": "enough"}',  # refused: nothing rewritten yet
                       '{"queries": ["家庭暴力 离婚 子女抚养"]}',
                       '{"action": "exit", "reason": "covered"}'])
    res = PlannerLoop(llm, bm25, config=PlannerConfig(min_new_fraction=0.0)).run(QUERY)
    assert res.refused_exits == 1 and res.rounds == 1 and res.stop_reason == "planner_exit"
    refused = [s for s in res.steps if s.error and "exit refused" in s.error]
    assert refused and refused[0].action == "single_element"
    assert res.reformulations == ("家庭暴力 离婚 子女抚养",)
    assert res.retrieval_calls == 2


def test_bad_replies_are_repaired_or_retried_and_never_crash(bm25):
    llm = ScriptedLLM([
        "I think we should decompose.",                          # not JSON -> re-ask
        '{"action": "translate", "reason": "x"}',               # unknown agent -> re-ask
        '{"action": "Multi-Element", "reason": "two issues"}',  # repaired spelling
        '{"queries": []}',                                       # empty -> re-ask
        '{"queries": ["", "   "]}',                              # still empty -> re-ask
        '["家暴 离婚", "子女 抚养"]',                              # bare list -> repaired
        '{"action": "exit", "reason": "done"}',
    ])
    res = PlannerLoop(llm, bm25, config=PlannerConfig(min_new_fraction=0.0, retries=2)).run(QUERY)
    planner = [s for s in res.steps if s.agent == "planner" and s.action == "multi_element"][0]
    assert planner.output["attempts"] == 3 and len(planner.output["errors"]) == 2
    assert any("read as 'multi_element'" in r for r in planner.output["repairs"])
    rewrite = [s for s in res.steps if s.action == "rewrite"][0]
    assert rewrite.output["queries"] == ["家暴 离婚", "子女 抚养"] and rewrite.output["attempts"] == 3
    assert res.failures == 0 and res.repairs >= 2 and res.llm_calls == 7


def test_unusable_replies_fall_back_within_bounds(bm25):
    llm = ScriptedLLM(["not json at all"])
    res = PlannerLoop(llm, bm25, config=PlannerConfig(max_rounds=2, retries=1)).run(QUERY)
    # every call fails: the planner falls back to the first agent, whose rewrite fails too; then it exits
    assert res.failures >= 2 and res.rounds <= 2
    assert len(llm.requests) <= (2 + 2 * 2) * 2  # bounded: (planner + rewriter) calls x attempts per round
    assert [h.id for h in res.hits] == [h.id for h in bm25.retrieve(QUERY, k=10)]  # original retrieval survives
    assert all(s.error for s in res.steps if s.action == "rewrite")


def test_rounds_are_bounded_and_pool_is_deduplicated(bm25, tmp_path):
    llm = ScriptedLLM(['{"action": "single_element", "reason": "r"}', '{"queries": ["离婚 家庭暴力"]}'], cycle=True)
    res = PlannerLoop(llm, bm25, config=PlannerConfig(max_rounds=3, min_new_fraction=0.0)).run(QUERY)
    assert res.rounds == 3 and res.stop_reason == "max_rounds"
    ids = [h.id for h in res.pool]
    assert len(ids) == len(set(ids)) and [h.rank for h in res.hits] == list(range(1, len(res.hits) + 1))
    path = tmp_path / "trace.jsonl"
    res.write_trajectory(path)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert rows[-1]["summary"]["rounds"] == 3 and rows[0]["action"] == "retrieve"
    assert {"agent", "action", "input", "output", "seconds", "tokens", "error"} <= set(rows[1])


def test_coverage_stop(bm25):
    llm = ScriptedLLM(['{"action": "single_element", "reason": "r"}', '{"queries": ["' + QUERY + '"]}'], cycle=True)
    res = PlannerLoop(llm, bm25, config=PlannerConfig(max_rounds=4, min_new_fraction=0.5)).run(QUERY)
    assert res.stop_reason == "coverage" and res.rounds == 1


def test_other_language_is_refused_or_handled(bm25):
    llm = ScriptedLLM(['{"action": "exit", "reason": "r"}', '{"queries": ["离婚 子女抚养"]}'], cycle=True)
    with pytest.raises(InputError, match="corpus is Chinese"):
        PlannerLoop(llm, bm25, config=PlannerConfig(on_language_mismatch="refuse")).run("Can I get a divorce?")
    res = PlannerLoop(llm, bm25, config=PlannerConfig(max_rounds=1)).run("Can I get a divorce?")
    assert res.steps[0].action == "language" and res.steps[0].output["corpus_lang"] == "zh"
    assert "法条库是中文的" in llm.requests[1].messages[0]["content"]  # rewriter told to write Chinese
    with pytest.raises(InputError, match="empty"):
        PlannerLoop(llm, bm25).run("   ")


def test_scripted_agents_skip_the_planner(bm25):
    llm = ScriptedLLM(['{"queries": ["离婚 抚养"]}'])
    res = PlannerLoop(llm, bm25, config=PlannerConfig(script=("single_element",))).run(QUERY)
    assert res.rounds == 1 and len(llm.requests) == 1 and res.retrieval_calls == 2


# ---- the real embedded model ---------------------------------------------------------------------------


@pytest.mark.llm
def test_planner_loop_end_to_end_with_the_embedded_model(llm, bm25, tmp_path):
    cfg = PlannerConfig(max_rounds=2, planner_max_tokens=60, rewriter_max_tokens=60, retries=1, seed=7)
    mas = MASRetriever(PlannerLoop(llm, bm25, config=cfg))
    assert isinstance(mas, Retriever)
    hits = mas.retrieve(QUERY, k=5)
    res = mas.last
    assert 1 <= len(hits) <= 5 and len({h.id for h in hits}) == len(hits)
    assert 1 <= res.rounds <= 2 and res.retrieval_calls >= 2  # the original query plus at least one rewrite
    assert res.llm_calls >= 2 and res.tokens > 0
    planner_steps = [s for s in res.steps if s.agent == "planner" and s.action not in ("stop", "language")]
    assert len(planner_steps) <= cfg.max_rounds + 1
    res.write_trajectory(tmp_path / "t.jsonl")
    assert (tmp_path / "t.jsonl").stat().st_size > 0
