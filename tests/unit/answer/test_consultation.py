"""The fused processor: one search per turn, weighted reciprocal-rank fusion, the earlier turns' laws as a
prior, searches remembered across turns, and its place in `eval conversation`."""

from __future__ import annotations

from pathlib import Path

import pytest

from legalrag.answer.processors import ContextFusion, make_processor, retrieve_turn
from legalrag.answer.carry import fuse_turns
from legalrag.errors import InputError
from legalrag.types import Document, Hit, Turn

SAMPLE = Path(__file__).resolve().parents[3] / "src" / "legalrag" / "data" / "statutes_sample.jsonl"
DIALOGUE = [Turn("user", "同事借了我一万元不还"), Turn("assistant", "借款合同成立，可以催告返还。"),
            Turn("user", "没约定还款时间怎么办"), Turn("assistant", "可以随时要求返还。"),
            Turn("user", "那利息呢？")]


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory):
    from legalrag.corpora.statutes import load_statutes
    from legalrag.retrieval.index import build_index

    return build_index(tmp_path_factory.mktemp("idx") / "index", load_statutes(SAMPLE), ["bm25", "qld"], lang="zh")


def _doc(i: str, law: str) -> Document:
    return Document(i, f"text {i}", title=f"{law}第{i}条", metadata={"law": law})


def test_queries_weigh_earlier_questions_and_answers_by_distance():
    proc = ContextFusion(question_decay=0.5, answer_weight=0.2, law_prior=0.0)
    assert proc.queries(DIALOGUE) == [("那利息呢？", 1.0, True), ("没约定还款时间怎么办", 0.5, False),
                                      ("同事借了我一万元不还", 0.25, False), ("可以随时要求返还。", 0.2, False),
                                      ("借款合同成立，可以催告返还。", 0.1, False)]
    assert proc(DIALOGUE) == "同事借了我一万元不还 没约定还款时间怎么办 那利息呢？"  # the text evidence is matched to
    assert ContextFusion(question_decay=0.0, answer_weight=0.0).queries(DIALOGUE) == [("那利息呢？", 1.0, True)]
    assert len(ContextFusion(max_turns=1).queries(DIALOGUE)) == 3  # the last question, one earlier question, one answer


def test_fusion_weights_ranks_and_the_law_prior_keeps_the_topic():
    a, b, c = _doc("1", "民法典"), _doc("2", "刑法"), _doc("3", "民法典")
    last = [Hit(b, 9.0, 1), Hit(a, 8.0, 2)]
    earlier = [Hit(c, 5.0, 1)]
    plain = fuse_turns([(last, 1.0, True), (earlier, 0.5, False)], k=3, rrf_k=60)
    assert [h.id for h in plain] == ["2", "1", "3"]
    assert plain[0].score == pytest.approx(1 / 61) and plain[2].score == pytest.approx(0.5 / 61)
    assert plain[0].sources == {"last": 1} and plain[2].sources == {"turn-1": 1}
    # the earlier turn's top hit is in 民法典: with the prior, 民法典 articles rise above 刑法's
    prior = fuse_turns([(last, 1.0, True), (earlier, 0.5, False)], k=3, rrf_k=60, law_prior=1.0)
    assert [h.id for h in prior] == ["1", "2", "3"]
    assert prior[0].score == pytest.approx(2 / 62)  # (1 / 62) * (1 + 1.0 * share 1.0)
    assert [h.rank for h in prior] == [1, 2, 3]


def test_each_text_is_searched_once_per_consultation(sample_index):
    from legalrag.retrieval.pipeline import build_pipeline

    pipe = build_pipeline(sample_index, retriever="bm25")
    calls = []

    def search(query, k):
        calls.append(query)
        return pipe.search(query, k=k)

    proc = ContextFusion()
    for n in (1, 3, 5):  # the consultation grows turn by turn
        query, hits = retrieve_turn(proc, search, DIALOGUE[:n], 5)
        assert 0 < len(hits) <= 5 and [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert len(calls) == len(set(calls)) == 5  # three questions and two answers, each searched once
    assert proc.searches == 5
    # a plain processor's query is searched as it is
    query, hits = retrieve_turn(make_processor("last"), search, DIALOGUE, 3)
    assert query == "那利息呢？" and calls[-1] == "那利息呢？" and len(hits) <= 3


def test_bad_settings_are_refused():
    with pytest.raises(InputError, match="question_decay must be 0 or more"):
        ContextFusion(question_decay=-1)
    with pytest.raises(InputError, match="depth must be at least 1"):
        ContextFusion(depth=0)
    with pytest.raises(InputError, match="no user question"):
        ContextFusion()([Turn("assistant", "你好")])
    assert isinstance(make_processor("fused", law_prior=2.0), ContextFusion)


def test_fused_in_eval_conversation_scores_what_the_processor_retrieves(test_data, sample_index):
    from legalrag.evaluation.lexrag.data import load_consultations
    from legalrag.evaluation.lexrag.gold import resolve_gold
    from legalrag.evaluation.lexrag.retrieval import evaluate_conversation
    from legalrag.evaluation.metrics import recall_at_k
    from legalrag.retrieval.pipeline import build_pipeline

    turns, _ = resolve_gold(load_consultations(test_data / "consultation" / "turns"), sample_index.documents)
    searchers = {r: build_pipeline(sample_index, retriever=r) for r in ("bm25", "qld")}
    result = evaluate_conversation(turns, {"fused": make_processor("fused"), "last": make_processor("last")},
                                   searchers)
    pair = next(p for p in result.pairs if p.name == "fused+qld")
    fresh = ContextFusion()
    for t in turns:
        expected = fresh.retrieve(lambda q, n: searchers["qld"].search(q, k=n), t.turns, 10)
        assert [h.id for h in pair.hits[t.id]] == [h.id for h in expected]
    scored = [t for t in turns if t.gold_ids]
    assert pair.metrics["recall@10"] == pytest.approx(
        sum(recall_at_k([h.id for h in pair.hits[t.id]], t.gold_ids, 10) for t in scored) / len(scored))
    # turn 1 has no history: fused retrieves exactly what the last question does
    last = next(p for p in result.pairs if p.name == "last+qld")
    for t in turns:
        if t.turn == 1:
            assert [h.id for h in pair.hits[t.id]] == [h.id for h in last.hits[t.id]]


def test_cli_eval_conversation_takes_fused(test_data, sample_index, tmp_path, monkeypatch, capsys):
    from support.cli_runner import run_cli

    code, out, err = run_cli(monkeypatch, capsys, "eval", "conversation", "--data", test_data / "consultation" / "turns",
                             "--index", sample_index.path, "--retriever", "bm25", "--processor", "fused",
                             "--processor", "last", "--no-progress")
    assert code == 0, err
    assert "fused" in out and "last" in out


def test_a_consultation_with_fused_answers_from_the_fused_articles(sample_index):
    from legalrag.answer.consultation import Consultation
    from legalrag.retrieval.pipeline import build_pipeline
    from legalrag.testing import ScriptedLLM

    pipe = build_pipeline(sample_index, retriever="bm25")
    search = lambda q, k: pipe.search(q, k=k)  # noqa: E731
    llm = ScriptedLLM(["可以要求返还。", "没有约定的，视为没有利息。"])
    chat = Consultation(search, llm, documents=sample_index.documents, processor="fused", k=3)
    chat.ask("同事借了我一万元不还，可以要求返还吗？")
    answer = chat.ask("那利息呢？")
    expected = ContextFusion().retrieve(search, chat.turns[:3], 3)
    assert [h.id for h in answer.sources] == [h.id for h in expected]
    fused_step = next(s for s in answer.steps if s.agent == "retriever")
    assert fused_step.action == "fused" and fused_step.output == [h.id for h in expected]
    assert "那利息呢？" in llm.last_prompt()


@pytest.mark.parametrize("name", ["last", "all_questions", "full_context", "rewrite", "fused", "carry"])
def test_chat_retrieves_each_turn_as_the_benchmark_measures(sample_index, name):
    """`chat` (a Consultation) and the consultation benchmark (`retrieve_turn` over the same dialogue, a fresh
    processor per consultation) search the same text and get the same articles, turn by turn, processor by
    processor: the retrieval the benchmark reports is the one chat answers from."""
    from legalrag.answer.consultation import Consultation
    from legalrag.retrieval.pipeline import build_pipeline
    from legalrag.testing import ScriptedLLM

    pipe = build_pipeline(sample_index, retriever="bm25")
    search = lambda q, k: pipe.search(q, k=k)  # noqa: E731
    questions = ["同事借了我一万元不还，可以要求返还吗？", "没约定还款时间怎么办", "那利息呢？"]
    rewrites = ["没有约定还款时间的借款，出借人怎么要求返还？", "没有约定利息的借款，出借人能要求支付利息吗？"]
    answers = ["可以要求返还。", "可以随时催告返还。", "没有约定的，视为没有利息。"]
    script = [answers[0]] + [x for pair in zip(rewrites, answers[1:]) for x in pair] if name == "rewrite" else answers
    chat = Consultation(search, ScriptedLLM(script), documents=sample_index.documents, processor=name, k=5)
    chatted = [chat.ask(q) for q in questions]

    bench = make_processor(name, ScriptedLLM(rewrites))
    for i, answer in enumerate(chatted):
        query, hits = retrieve_turn(bench, search, chat.turns[:2 * i + 1], 5)
        assert answer.steps[0].output == query, f"turn {i + 1}: chat made another query than the benchmark"
        assert [h.id for h in answer.sources] == [h.id for h in hits], f"turn {i + 1}: chat retrieved other articles"
        assert hits, f"turn {i + 1}: nothing retrieved, so nothing compared"


@pytest.mark.parametrize("name", ["fused", "carry"])
def test_a_new_search_function_with_a_reused_id_gets_its_own_results(name, monkeypatch):
    """The processors cache searches per search function. A function made per call (the consultation benchmark
    makes one per retriever) can be given the id of one already freed; its searches must not be answered from
    the other's cache. Here every object shares one id, as after such a reuse."""
    import legalrag.answer.processors as conversation
    import legalrag.answer.carry as followup

    for module in (conversation, followup):
        monkeypatch.setattr(module, "id", lambda obj: 7, raising=False)
    proc = make_processor(name)

    def searcher(law: str):
        return lambda q, n: [Hit(_doc(f"{law}-{i}", law), 1.0 / i, i, "bm25") for i in range(1, n + 1)]

    first = proc.retrieve(searcher("民法典"), DIALOGUE, 3)
    second = proc.retrieve(searcher("劳动合同法"), DIALOGUE, 3)
    assert [h.id for h in first] == ["民法典-1", "民法典-2", "民法典-3"]
    assert [h.id for h in second] == ["劳动合同法-1", "劳动合同法-2", "劳动合同法-3"]
