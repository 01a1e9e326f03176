"""Generation in the three settings, resuming from the call cache after an endpoint failure, the LLM judge
(validated JSON, counted failures with raw text) and its reliability figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from legalrag.evaluation.lexrag.data import load_consultations
from legalrag.evaluation.lexrag.gold import resolve_gold
from legalrag.evaluation.lexrag.generate import Setting, parse_settings, run_generation
from legalrag.evaluation.lexrag.judge import DIMENSIONS, Judgement, agreement, judge_one, spread, summarise_judgements
from legalrag.errors import EndpointError, InputError
from legalrag.testing import ScriptedLLM
from legalrag.types import Document, Hit

SAMPLE = Path(__file__).resolve().parents[4] / "src" / "legalrag" / "data" / "statutes_sample.jsonl"
VERDICT = {"analysis": "与参考答案相比遗漏了催告的要点。", "factuality": 7, "user_satisfaction": 6, "clarity": 8,
           "logical_coherence": 7, "completeness": 5}


@pytest.fixture(scope="module")
def docs():
    from legalrag.corpora.statutes import load_statutes

    return {d.id: d for d in load_statutes(SAMPLE)}


@pytest.fixture
def turns(test_data, docs):
    rows, _ = resolve_gold(load_consultations(test_data / "consultation" / "dataset.json"), list(docs.values()))
    return rows


def _search(docs):
    def search(query: str, k: int) -> list[Hit]:
        picked = [docs["13578"], docs["13506"], docs["666"]][:k]  # fixed hits, so prompts can be checked
        return [Hit(d, 1.0 / r, r, "fixed") for r, d in enumerate(picked, 1)]
    return search


def _prompt(request) -> str:
    return "\n".join(m["content"] for m in request.messages)


def test_three_settings_put_the_right_articles_and_the_history_in_the_prompt(turns, docs):
    llm = ScriptedLLM(["答复"], cycle=True)
    turn = next(t for t in turns if t.id == "fx-2-t2")
    out = run_generation([turn], llm, list(Setting), documents=docs, search=_search(docs), k=2)
    assert [r.setting for r in out] == ["zero_shot", "retriever", "reference"]
    zero, retrieved, reference = (_prompt(r) for r in llm.requests)
    for prompt in (zero, retrieved, reference):
        assert "入职三个月公司还没和我签劳动合同" in prompt  # the earlier turn is in every setting's prompt
        assert "那我能要什么补偿？" in prompt
    assert "相关法条" not in zero
    assert "《劳动合同法》第八十二条" in retrieved and "《劳动合同法》第十条" in retrieved
    assert out[1].article_ids == ("13578", "13506")
    assert out[2].article_ids == ("13578",) and "二倍的工资" in reference
    assert {"processor_s", "retrieval_s", "model_seconds", "generation_s", "citation_check_s",
            "total_s"} <= set(out[1].timings)
    assert not {"processor", "retrieval", "generation", "seconds"} & set(out[1].timings)  # one spelling each
    assert all(r.usage.calls == 1 for r in out)  # one engine call per answer, its usage recorded
    assert out[0].usage.calls == 1 and out[0].text == "答复"


def test_reference_setting_without_resolved_gold(turns, docs):
    llm = ScriptedLLM(["答复"], cycle=True)
    no_gold = next(t for t in turns if t.id == "fx-1-t4")  # 刑法 is not in the sample
    with pytest.raises(InputError, match="fx-1-t4: no gold article resolved and no article_context"):
        run_generation([no_gold], llm, [Setting.REFERENCE], documents=docs)
    from dataclasses import replace

    with_context = replace(no_gold, article_context="盗窃公私财物，数额较大的，处三年以下有期徒刑。")
    out = run_generation([with_context], llm, [Setting.REFERENCE], documents=docs)
    assert "盗窃公私财物" in _prompt(llm.requests[-1]) and "article_context" in out[0].note
    with pytest.raises(InputError, match="unknown setting"):
        parse_settings(["few_shot"])
    with pytest.raises(InputError, match="search function"):
        run_generation(turns, llm, [Setting.RETRIEVER], documents=docs)


def test_an_endpoint_failing_mid_run_resumes_from_the_cache(turns, docs, tmp_path):
    from legalrag.llm.cache import CachedLLM

    calls = {"n": 0}

    def flaky(request):
        calls["n"] += 1
        if calls["n"] == 4:
            raise EndpointError("connection reset by peer")
        return f"答复{calls['n']}"

    jobs = turns[:3]
    first = CachedLLM(ScriptedLLM(flaky), tmp_path / "calls.sqlite")
    with pytest.raises(EndpointError):
        run_generation(jobs, first, [Setting.ZERO_SHOT, Setting.REFERENCE], documents=docs)
    first.close()
    fresh = ScriptedLLM(["新答复"], cycle=True)
    second = CachedLLM(fresh, tmp_path / "calls.sqlite")
    out = run_generation(jobs, second, [Setting.ZERO_SHOT, Setting.REFERENCE], documents=docs)
    assert fresh.calls == 3  # the 3 answers finished before the failure came from the cache
    assert [r.text.splitlines()[-1] for r in out][:3] == ["答复1", "答复2", "答复3"]  # (after a quoted basis)
    assert [r.text.splitlines()[-1] for r in out][3:] == ["新答复"] * 3
    assert second.hits == 3 and second.misses == 3


# -- the judge --------------------------------------------------------------------------------------------

def _judge(llm, response="回答"):
    return judge_one(llm, "x|retriever", history="用户: 问\n助手: 答", question="能要利息吗？",
                     reference="视为没有利息。", response=response)


def test_judge_prompt_and_a_valid_verdict():
    llm = ScriptedLLM([json.dumps(VERDICT, ensure_ascii=False)])
    j = _judge(llm)
    assert not j.failed and j.scores == {d: VERDICT[d] for d in DIMENSIONS} and j.attempts == 1
    assert j.analysis.startswith("与参考答案相比")
    prompt = _prompt(llm.requests[0])
    assert "回答越长不代表越好" in prompt and "8 分" in prompt and "先把待评回答与参考答案逐点比较" in prompt
    assert "视为没有利息。" in prompt and "能要利息吗？" in prompt and "用户: 问" in prompt
    # the analysis is asked for before the scores, so the model reasons first
    assert prompt.index('"analysis"') < prompt.index('"factuality"')


def test_judge_re_asks_an_out_of_range_score_then_counts_a_failure_with_raw_text():
    bad_range = json.dumps({**VERDICT, "clarity": 11})
    llm = ScriptedLLM([bad_range, json.dumps(VERDICT)])
    j = _judge(llm)
    assert not j.failed and j.attempts == 2 and llm.calls == 2
    never = ScriptedLLM(["我觉得还行，给 8 分。"])
    failed = _judge(never)
    assert failed.failed and failed.scores is None and failed.attempts == 3
    assert failed.raw == ("我觉得还行，给 8 分。",) * 3 and "could not be parsed" in failed.error
    assert failed.to_dict()["raw"] == list(failed.raw)
    s = summarise_judgements([j, failed])
    assert s["failures"] == 1 and s["judged"] == 1 and s["re_asked"] == 1
    assert s["factuality"] == 7  # the failure is left out, not averaged in as 0
    assert summarise_judgements([failed])["factuality"] is None


def _j(item: str, *scores: int) -> Judgement:
    return Judgement(item, dict(zip(DIMENSIONS, scores)))


def test_spread_and_agreement():
    a = [_j("1", 8, 8, 8, 8, 8), _j("2", 4, 5, 6, 5, 3), _j("3", 6, 6, 7, 6, 5), Judgement("4", None)]
    b = [_j("1", 9, 8, 8, 8, 7), _j("2", 4, 4, 6, 5, 3), _j("3", 5, 6, 7, 7, 5), _j("4", 5, 5, 5, 5, 5)]
    s = spread(a)
    assert s["factuality"]["distinct"] == 3 and s["clarity"]["min"] == 6 and s["clarity"]["max"] == 8
    constant = [_j(str(i), 8, 8, 8, 8, 8) for i in range(5)]
    flat = spread(constant)
    assert flat["factuality"] == {"std": 0.0, "distinct": 1, "mode_share": 1.0, "min": 8, "max": 8}
    ag = agreement(a, b)
    assert ag["factuality"]["n"] == 3  # item 4 failed in run a: not paired
    assert ag["factuality"]["mean_abs_diff"] == pytest.approx(2 / 3)
    assert ag["factuality"]["exact"] == pytest.approx(1 / 3) and ag["factuality"]["within_1"] == 1.0
    assert ag["clarity"]["pearson"] == pytest.approx(1.0) and ag["clarity"]["spearman"] == pytest.approx(1.0)
    import numpy as np

    assert ag["factuality"]["pearson"] == pytest.approx(np.corrcoef([8, 4, 6], [9, 4, 5])[0, 1])
    assert agreement(constant, constant)["factuality"]["pearson"] is None  # constant scores have no correlation


def test_generation_and_judge_runs_end_to_end(turns, docs, tmp_path):
    from legalrag.evaluation.lexrag.report import (
        load_judgements,
        plot_judge,
        run_judge,
        save_generation_run,
        save_judge_run,
        score_generations,
    )

    llm = ScriptedLLM(lambda req: "不能。自然人之间借款对利息没有约定的，视为没有利息。")
    picked = [t for t in turns if t.id in ("fx-1-t3", "fx-2-t2")]
    responses = run_generation(picked, llm, [Setting.ZERO_SHOT, Setting.REFERENCE], documents=docs)
    scored = score_generations(picked, responses, tokenizer="char")
    rows = {r["setting"]: r for r in scored["table"]}
    assert rows["zero_shot"]["answers"] == 2 and rows["zero_shot"]["keyword_accuracy"] == pytest.approx(0.5)
    gen = save_generation_run(tmp_path / "gen", picked, responses, scored, {"model": "scripted"})
    first = json.loads((gen / "generations.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["reference"] and first["history"] and "rougeL" in first["scores"]

    replies = iter([json.dumps({**VERDICT, "factuality": f}) for f in (3, 4, 5)] + ["坏"] * 3
                   + [json.dumps({**VERDICT, "factuality": 8})] * 2)
    judge = ScriptedLLM(lambda req: next(replies))
    result = run_judge(gen, judge, self_check=True)
    assert result["summary"]["failures"] == 1 and len(result["summary"]["failed_items"]) == 1
    assert result["summary"]["reference_self_score"]["factuality"] == 8
    out = save_judge_run(tmp_path / "judge", result, {"model": "scripted"})
    loaded = load_judgements(out)
    assert [j.failed for j in loaded].count(True) == 1
    assert next(j for j in loaded if j.failed).raw == ("坏",) * 3
    again = run_judge(gen, ScriptedLLM([json.dumps(VERDICT)]), against=out)
    assert again["summary"]["agreement"]["factuality"]["n"] == 3
    pytest.importorskip("matplotlib")
    assert plot_judge(result, tmp_path / "judge.png").stat().st_size > 1000


def test_a_saved_run_is_scored_again_with_bertscore_and_nothing_else_changes(turns, docs, tmp_path):
    import numpy as np

    from legalrag.evaluation.lexrag.report import rescore_generation_run, save_generation_run, score_generations
    from legalrag.judgment.textmetrics import WordEmbedder

    llm = ScriptedLLM(lambda req: "不能。自然人之间借款对利息没有约定的，视为没有利息。")
    picked = [t for t in turns if t.id in ("fx-1-t3", "fx-2-t2")]
    responses = run_generation(picked, llm, [Setting.ZERO_SHOT], documents=docs)
    scored = score_generations(picked, responses, tokenizer="char")
    gen = save_generation_run(tmp_path / "gen", picked, responses, scored, {"model": "scripted"})
    manifest = (gen / "manifest.json").read_text(encoding="utf-8")

    def one_hot(chars):  # a character's own axis: the F1 becomes exact character overlap, computable by hand
        out = np.zeros((len(chars), 4096), dtype=np.float32)
        for i, c in enumerate(chars):
            out[i, ord(c) % 4096] = 1.0
        return out

    again = rescore_generation_run(gen, tokenizer="char", embedder=WordEmbedder(one_hot))
    before, after = scored["table"][0], again["table"][0]
    assert {k: after[k] for k in before} == pytest.approx(before)  # same metrics, plus one column
    ref, hyp = picked[0].reference, responses[0].text
    p = sum(c in set(ref) for c in hyp) / len(hyp)
    r = sum(c in set(hyp) for c in ref) / len(ref)
    first = json.loads((gen / "generations.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["scores"]["bertscore_f1"] == pytest.approx(2 * p * r / (p + r), abs=1e-6)
    assert 0 < after["bertscore_f1"] < 1
    assert (gen / "manifest.json").read_text(encoding="utf-8") == manifest  # kept as it was
    assert json.loads((gen / "metrics.json").read_text(encoding="utf-8"))["rescored"]["bertscore"] is True


def test_a_missing_generation_run_is_a_clear_error(tmp_path):
    from legalrag.evaluation.lexrag.report import run_judge

    with pytest.raises(InputError, match="generations.jsonl missing"):
        run_judge(tmp_path, ScriptedLLM(["{}"]))


@pytest.mark.llm
def test_the_real_small_model_returns_a_validated_verdict_or_a_counted_failure(small_llm):
    j = judge_one(small_llm, "t|zero_shot", history="（无）", question="没写借条的借款算数吗？",
                  reference="算数。自然人之间借款可以不采用书面形式。", response="算数，转账记录可以证明借款。",
                  retries=1, max_tokens=200)
    if j.failed:
        assert j.raw and j.error  # never a silent 0
    else:
        assert set(j.scores) == set(DIMENSIONS) and all(1 <= v <= 10 for v in j.scores.values())


def test_documents_lookup_by_callable(turns):
    llm = ScriptedLLM(["答"])
    doc = Document("679", "借款合同对支付利息没有约定的，视为没有利息。", "中华人民共和国民法典第六百八十条",
                   metadata={"law": "中华人民共和国民法典", "article_label": "第六百八十条"})
    turn = next(t for t in turns if t.id == "fx-1-t3")
    run_generation([turn], llm, [Setting.REFERENCE], documents=lambda i: doc)
    assert "《中华人民共和国民法典》第六百八十条\n借款合同对支付利息没有约定的" in _prompt(llm.requests[0])


def test_cli_generate_then_judge_with_a_scripted_model(test_data, tmp_path):
    from typer.testing import CliRunner

    from legalrag.cli import app
    from legalrag.retrieval.index import build_index
    from legalrag.corpora.statutes import load_statutes
    from legalrag.wiring import Root

    index = build_index(tmp_path / "index", load_statutes(SAMPLE), ["bm25"], lang="zh")
    writer = Root(llm=ScriptedLLM(["不能。自然人之间借款没有约定利息的，视为没有利息。"], cycle=True))
    res = CliRunner().invoke(app, ["eval", "consultation-generate", "--data", str(test_data / "consultation" / "turns"),
                                   "--index", str(index.path), "--limit", "3", "-o", "setting=zero_shot,retriever", "--out", str(tmp_path / "gen"), "-o", "tokenizer=char",
                                   "--no-progress"], obj=writer)
    assert res.exit_code == 0, res.output
    assert len((tmp_path / "gen" / "generations.jsonl").read_text(encoding="utf-8").splitlines()) == 6
    assert len(writer.llm.requests) == 6
    judge = Root(llm=ScriptedLLM([json.dumps(VERDICT, ensure_ascii=False)], cycle=True))
    res = CliRunner().invoke(app, ["eval", "consultation-judge", "--generations", str(tmp_path / "gen"),
                                   "-o", "self_check=true", "--limit", "2", "--out", str(tmp_path / "judge"),
                                   "--no-progress"], obj=judge)
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "judge" / "summary.json").read_text(encoding="utf-8"))
    assert summary["all"]["judged"] == 4 and summary["reference_self_score"]["judged"] == 2
    assert summary["failures"] == 0


def test_consultation_score_command_rescores_a_run_in_place(turns, docs, tmp_path):
    from typer.testing import CliRunner

    from legalrag.cli import app
    from legalrag.evaluation.lexrag.report import save_generation_run, score_generations

    picked = [t for t in turns if t.id in ("fx-1-t3", "fx-2-t2")]
    responses = run_generation(picked, ScriptedLLM(lambda req: "视为没有利息。"), [Setting.ZERO_SHOT], documents=docs)
    gen = save_generation_run(tmp_path / "gen", picked, responses, score_generations(picked, responses), {})
    res = CliRunner().invoke(app, ["eval", "consultation-score", "--generations", str(gen), "-o", "bertscore=false",
                                   "-o", "tokenizer=char"])
    assert res.exit_code == 0, res.output
    metrics = json.loads((gen / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["rescored"] == {"tokenizer": "char", "bertscore": False} and metrics["table"][0]["answers"] == 2
    missing = CliRunner().invoke(app, ["eval", "consultation-score", "--generations", str(tmp_path / "nope")])
    assert missing.exit_code != 0 and "generations.jsonl missing" in str(missing.exception)


def test_evidence_budget_cuts_the_articles_to_matching_clauses(turns, docs):
    turn = next(t for t in turns if t.id == "fx-2-t2")
    whole_llm, evidence_llm = ScriptedLLM(["答复"], cycle=True), ScriptedLLM(["答复"], cycle=True)
    run_generation([turn], whole_llm, [Setting.RETRIEVER, Setting.REFERENCE], documents=docs,
                   search=_search(docs), k=3, article_chars=2000)
    out = run_generation([turn], evidence_llm, [Setting.RETRIEVER, Setting.REFERENCE], documents=docs,
                         search=_search(docs), k=3, article_chars=2000, evidence_tokens=60)
    whole, evidence = [_prompt(r) for r in whole_llm.requests], [_prompt(r) for r in evidence_llm.requests]
    for w, e in zip(whole, evidence):
        assert len(e) < len(w)
        assert "…" in e or "法律依据（法条原文）" in e  # left-out clauses are marked, or the basis is quoted
        assert "那我能要什么补偿？" in e and "入职三个月公司还没和我签劳动合同" in e
    assert "《劳动合同法》第八十二条" in evidence[0]  # every article keeps its title
    assert "二倍的工资" in evidence[1]  # the gold article's clause on the compensation asked about is kept
    assert out[0].article_ids == ("13578", "13506", "666")  # the citation check still sees every article
    with pytest.raises(InputError, match="--evidence-tokens"):
        run_generation([turn], evidence_llm, [Setting.REFERENCE], documents=docs, evidence_tokens=3)


def test_consultation_compare_pairs_two_runs_turn_by_turn(turns, docs, tmp_path):
    from typer.testing import CliRunner

    from legalrag.cli import app
    from legalrag.evaluation.lexrag.report import compare_generation_runs, save_generation_run, score_generations

    picked = [t for t in turns if t.turn in (1, 2, 3)]
    runs = {}
    def echo(req):  # the prompt holds the earlier questions too: the latest turn among those it holds
        return max((t for t in picked if t.question in _prompt(req)), key=lambda t: t.turn).reference

    for name, answer in (("echo", echo),
                         ("fixed", lambda req: "请咨询律师。")):
        responses = run_generation(picked, ScriptedLLM(answer), [Setting.ZERO_SHOT], documents=docs)
        runs[name] = save_generation_run(tmp_path / name, picked, responses,
                                         score_generations(picked, responses, tokenizer="char"), {})
    rows = compare_generation_runs(runs["echo"], runs["fixed"])
    by_metric = {r["metric"]: r for r in rows}
    assert all(r["turns"] == len(picked) and r["setting"] == "zero_shot" for r in rows)
    assert by_metric["rougeL"]["a"] == pytest.approx(1.0)  # the reference itself
    assert by_metric["rougeL"]["b_minus_a"] < -0.5 and by_metric["rougeL"]["b"] < 0.5
    assert by_metric["rougeL"]["p"] <= 2 / len(picked)  # every turn moved the same way
    same = {r["metric"]: r for r in compare_generation_runs(runs["fixed"], runs["fixed"])}
    assert same["rougeL"]["b_minus_a"] == 0.0 and same["rougeL"]["p"] == 1.0

    res = CliRunner().invoke(app, ["eval", "consultation-compare", str(runs["echo"]), str(runs["fixed"]),
                                   "--out", str(tmp_path / "cmp.json")])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "cmp.json").read_text(encoding="utf-8")) == rows

    other = [t for t in turns if t.turn == 4]
    responses = run_generation(other, ScriptedLLM(lambda req: "答复"), [Setting.ZERO_SHOT], documents=docs)
    disjoint = save_generation_run(tmp_path / "other", other, responses, score_generations(other, responses), {})
    with pytest.raises(InputError, match="share no"):
        compare_generation_runs(runs["echo"], disjoint)
