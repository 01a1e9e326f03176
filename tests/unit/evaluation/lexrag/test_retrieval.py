"""LexRAG consultation data (both dialogue forms, the law library, gold resolution, bad input) and
conversational retrieval (processor x retriever, per turn, runs that `eval compare` reads)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from legalrag.evaluation.lexrag.data import (
    load_consultations,
    load_dialogues,
    load_law_library,
    load_turn_file,
    sample_turns,
    write_turn_files,
)
from legalrag.evaluation.lexrag.gold import resolve_gold
from legalrag.errors import InputError
from legalrag.types import Turn

SAMPLE = Path(__file__).resolve().parents[4] / "src" / "legalrag" / "data" / "statutes_sample.jsonl"


@pytest.fixture(scope="module")
def sample_docs():
    from legalrag.corpora.statutes import load_statutes

    return load_statutes(SAMPLE)


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory, sample_docs):
    from legalrag.retrieval.index import build_index

    return build_index(tmp_path_factory.mktemp("idx") / "index", sample_docs, ["bm25", "qld"], lang="zh")


@pytest.fixture
def fixture_dir(test_data) -> Path:
    return test_data / "consultation"


def test_both_forms_load_to_the_same_turns(fixture_dir):
    whole = load_consultations(fixture_dir / "dataset.json")
    per_turn = load_consultations(fixture_dir / "turns")
    assert len(whole) == 10
    assert sorted(whole, key=lambda t: t.id) == sorted(per_turn, key=lambda t: t.id)
    t3 = next(t for t in whole if t.id == "fx-1-t3")
    assert t3.turn == 3 and t3.question == "那利息呢？我们也没说。"
    assert [h.role for h in t3.history] == ["user", "assistant"] * 2
    assert t3.history[0].content.startswith("同事借了我一万元")
    assert t3.turns[-1] == Turn("user", t3.question)
    assert t3.keywords == ("视为没有利息",) and t3.articles == ("《中华人民共和国民法典》第六百八十条",)


def test_turn_files_round_trip(fixture_dir, tmp_path):
    turns = load_dialogues(fixture_dir / "dataset.json")
    paths = write_turn_files(turns, tmp_path)
    assert [p.name for p in paths] == [f"turn_{n}.json" for n in range(1, 6)]
    items = json.loads(paths[1].read_text(encoding="utf-8"))
    assert set(items[0]) == {"id", "history", "current_question", "reference", "keywords", "article",
                             "article_context"}
    assert len(items[0]["history"]) == 1 and set(items[0]["history"][0]) == {"user", "assistant"}
    assert load_turn_file(paths[1]) == [t for t in turns if t.turn == 2]


def test_gold_resolves_through_the_citation_resolver_and_unresolved_names_are_reported(fixture_dir, sample_docs):
    turns, report = resolve_gold(load_consultations(fixture_dir / "dataset.json"), sample_docs)
    by_id = {t.id: t for t in turns}
    # 《中华人民共和国劳动合同法》 resolves to the corpus title 劳动合同法 through the alias table
    assert by_id["fx-2-t1"].gold_ids == ("13506",)
    assert by_id["fx-1-t3"].gold_ids == ("679",)
    assert report.names == 10 and report.resolved == 8 and len(report.unresolved) == 2
    assert "is not in the corpus" in report.unresolved["《中华人民共和国刑法》第二百六十四条"]
    assert "no article 900" in report.unresolved["《中华人民共和国劳动合同法》第九百条"]
    # a turn whose gold resolves to nothing is listed; a partly resolved turn keeps both sides
    assert report.turns_without_gold == ("fx-1-t4",)
    assert by_id["fx-2-t5"].gold_ids == ("13533",)
    assert by_id["fx-2-t5"].unresolved == ("《中华人民共和国劳动合同法》第九百条",)
    assert report.to_dict()["unresolved_count"] == 2


def test_law_library_articles_resolve(tmp_path):
    lib = tmp_path / "law_library.jsonl"
    lib.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in [
        {"name": "《中华人民共和国民法典》第六百六十七条", "content": "借款合同是借款人向贷款人借款的合同。"},
        {"name": "《中华人民共和国刑法》第二百六十四条", "content": "盗窃公私财物，数额较大的……"}]) + "\n",
        encoding="utf-8")
    docs = load_law_library(lib)
    assert docs[1].metadata == {"law": "中华人民共和国刑法", "article": "264", "article_label": "第二百六十四条"}
    turns = load_consultations(Path(__file__).parents[3] / "data" / "consultation" / "dataset.json")
    turns, report = resolve_gold(turns, docs)
    assert next(t for t in turns if t.id == "fx-1-t4").gold_ids == ("《中华人民共和国刑法》第二百六十四条",)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "x"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="bad.jsonl:1"):
        load_law_library(bad)


def _dialogue(n_turns: int, question: str = "问题") -> dict:
    return {"id": "d1", "conversation": [{"user": f"{question}{i}" if question else "", "assistant": f"答{i}",
                                          "article": [], "keywords": []} for i in range(n_turns)]}


def test_a_dialogue_with_fewer_turns_than_stated_is_refused_by_name(tmp_path):
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps([_dialogue(5), {**_dialogue(3), "id": "short one"}], ensure_ascii=False),
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"dialogue 'short_one' has 3 turns, fewer than the 5 stated"):
        load_dialogues(path)
    assert len(load_dialogues(path, turns=None)) == 8  # accepted when the length is not fixed


def test_a_turn_file_whose_history_is_shorter_than_its_turn_is_refused(tmp_path):
    path = tmp_path / "turn_3.json"
    path.write_text(json.dumps([{"id": 7, "history": [{"user": "q1", "assistant": "a1"}],
                                 "current_question": "q3", "reference": "", "keywords": [], "article": []}]),
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"item '7' has 1 history turns, fewer than the 2"):
        load_turn_file(path)


@pytest.mark.parametrize("make", [
    lambda p: p.write_text(json.dumps([{**_dialogue(5), "conversation": _dialogue(5)["conversation"][:2]
                                        + [{"user": "   ", "assistant": "a"}] + _dialogue(5)["conversation"][3:]}]),
                           encoding="utf-8"),
])
def test_an_empty_question_is_refused_naming_the_turn_and_field(tmp_path, make):
    path = tmp_path / "dataset.json"
    make(path)
    with pytest.raises(InputError, match=r"dialogue 'd1' turn 3 field 'user' is empty"):
        load_dialogues(path)
    turn_file = tmp_path / "turn_1.json"
    turn_file.write_text(json.dumps([{"id": 1, "history": [], "current_question": ""}]), encoding="utf-8")
    with pytest.raises(InputError, match="field 'current_question' is empty"):
        load_turn_file(turn_file)


def test_malformed_files_are_refused(tmp_path):
    path = tmp_path / "dataset.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        load_dialogues(path)
    path.write_text("42", encoding="utf-8")
    with pytest.raises(InputError, match="holds a JSON int; expected dialogues .* or per-turn items"):
        load_dialogues(path)
    with pytest.raises(InputError, match="no turn_N.json files"):
        load_consultations(tmp_path / "..")


def test_sample_turns_spreads_over_dialogues_and_positions(fixture_dir):
    turns = load_consultations(fixture_dir / "dataset.json")
    picked = sample_turns(turns, 4)
    assert [t.id for t in picked] == ["fx-1-t1", "fx-2-t2", "fx-1-t2", "fx-2-t3"]
    assert len(sample_turns(turns, 100)) == 10


# -- conversational retrieval ---------------------------------------------------------------------------------

def test_processor_by_retriever_scores_overall_and_per_turn(fixture_dir, sample_index):
    from legalrag.evaluation.lexrag.retrieval import evaluate_conversation
    from legalrag.answer.processors import make_processor
    from legalrag.evaluation.metrics import recall_at_k
    from legalrag.retrieval.pipeline import build_pipeline

    turns, _ = resolve_gold(load_consultations(fixture_dir / "turns"), sample_index.documents)
    processors = {p: make_processor(p) for p in ("last", "all_questions", "full_context")}
    searchers = {r: build_pipeline(sample_index, retriever=r) for r in ("bm25", "qld")}
    result = evaluate_conversation(turns, processors, searchers, ks=(1, 3, 5, 10))
    assert [p.name for p in result.pairs] == ["last+bm25", "last+qld", "all_questions+bm25", "all_questions+qld",
                                            "full_context+bm25", "full_context+qld"]
    pair = result.pairs[0]
    assert pair.metrics["n_queries"] == 9  # fx-1-t4's gold resolves to nothing: left out, not scored 0
    # per-turn means recomputed by hand from the ranked lists
    for n, metrics in pair.by_turn.items():
        values = [recall_at_k([h.id for h in pair.hits[t.id]], t.gold_ids, 10) for t in turns
                  if t.turn == n and t.gold_ids]
        assert metrics["recall@10"] == pytest.approx(sum(values) / len(values))
    # the last-question query of turn 3 is the question alone; all_questions joins every question so far
    t3 = next(t for t in turns if t.id == "fx-2-t3")
    assert result.queries["last"][t3.id] == t3.question
    assert result.queries["all_questions"][t3.id].startswith("入职三个月") and t3.question in \
        result.queries["all_questions"][t3.id]
    assert "助手" in result.queries["full_context"][t3.id]
    rows = result.table()
    assert set(rows[0]) >= {"processor", "retriever", "recall@1", "ndcg@3", "mrr@5", "precision@10"}
    assert [r["turn 1"] for r in result.turn_table()] == [p.by_turn[1]["recall@10"] for p in result.pairs]


def test_rewrite_runs_once_per_turn_whatever_the_number_of_retrievers(fixture_dir, sample_index):
    from legalrag.evaluation.lexrag.retrieval import evaluate_conversation
    from legalrag.answer.processors import make_processor
    from legalrag.retrieval.pipeline import build_pipeline
    from legalrag.testing import ScriptedLLM

    turns, _ = resolve_gold(load_consultations(fixture_dir / "turns"), sample_index.documents)
    llm = ScriptedLLM(lambda req: "未签书面劳动合同 二倍工资" if "劳动" in req.messages[-1]["content"] else "")
    searchers = {r: build_pipeline(sample_index, retriever=r) for r in ("bm25", "qld")}
    result = evaluate_conversation(turns, {"rewrite": make_processor("rewrite", llm)}, searchers)
    assert llm.calls == 8  # one per turn with history; turn 1 has nothing to resolve
    fx2 = next(t for t in turns if t.id == "fx-2-t3")
    assert result.queries["rewrite"][fx2.id] == "未签书面劳动合同 二倍工资"
    assert "对话历史" in llm.requests[0].messages[-1]["content"]
    # an empty rewrite falls back to all questions and is noted
    fx1 = next(t for t in turns if t.id == "fx-1-t2")
    assert result.queries["rewrite"][fx1.id].startswith("同事借了我一万元")
    assert any(n.startswith("fx-1-t2:") for n in result.processor_errors["rewrite"])


def test_saved_runs_are_read_by_eval_compare(fixture_dir, sample_index, tmp_path):
    from legalrag.evaluation.lexrag.retrieval import evaluate_conversation, plot_recall_by_turn, save_conversation_runs
    from legalrag.answer.processors import make_processor
    from legalrag.evaluation.compare import compare_runs
    from legalrag.evaluation.datasets import load_queries
    from legalrag.evaluation.runs import load_run
    from legalrag.retrieval.pipeline import build_pipeline

    turns, report = resolve_gold(load_consultations(fixture_dir / "turns"), sample_index.documents)
    result = evaluate_conversation(turns, {p: make_processor(p) for p in ("last", "full_context")},
                                   {"bm25": build_pipeline(sample_index, retriever="bm25")})
    out = save_conversation_runs(tmp_path / "conv", result, {"data": "fixture"}, report.to_dict(), index=sample_index)
    queries = load_queries(out / "queries.jsonl", sample_index)
    assert len(queries) == 9
    runs = dict(load_run(out / name) for name in ("last+bm25", "full_context+bm25"))
    comparison = compare_runs(runs, {q.id: set(q.gold_ids) for q in queries}, k=10, trials=200)
    assert comparison.runs[0].means["recall@10"] == pytest.approx(result.pairs[0].metrics["recall@10"])
    metrics = json.loads((out / "last+bm25" / "metrics.json").read_text(encoding="utf-8"))
    assert set(metrics["by_turn"]) == {"1", "2", "3", "4", "5"}
    manifest = json.loads((out / "last+bm25" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["parameters"]["processor"] == "last"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["gold"]["unresolved_count"] == 2
    pytest.importorskip("matplotlib")
    assert plot_recall_by_turn(result, tmp_path / "turns.png").stat().st_size > 1000


def test_cli_eval_conversation(fixture_dir, sample_index, tmp_path):
    from typer.testing import CliRunner

    from legalrag.cli import app

    res = CliRunner().invoke(app, ["eval", "conversation", "--data", str(fixture_dir / "turns"), "--index",
                                   str(sample_index.path), "--retriever", "bm25", "--processor", "last",
                                   "--out", str(tmp_path / "conv"), "--json", "--no-progress"])
    assert res.exit_code == 0, res.output
    payload = json.loads(res.stdout[res.stdout.index("{"):])
    assert payload["gold"]["unresolved_count"] == 2 and payload["table"][0]["turns"] == 9
    assert (tmp_path / "conv" / "last+bm25" / "run.trec").is_file()
    bad = CliRunner().invoke(app, ["eval", "conversation", "--data", str(fixture_dir / "turns"), "--index",
                                   str(sample_index.path), "--processor", "nope"])
    assert bad.exit_code != 0
