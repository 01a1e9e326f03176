"""The scope decision (answer.scope): an off-topic message is declined before the model is called, a legal
question about Chinese law is answered, ``force`` answers anyway; the shipped model, its features and its
bad input."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from legalrag.answer.engine import engine_for
from legalrag.answer.scope import (answer_anyway, declined_text, features, load_scope_models, scope_verdict)
from legalrag.errors import InputError
from legalrag.testing import ScriptedLLM
from legalrag.types import Document, Hit

ARTICLES = [
    Document("1", "用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。",
             title="劳动合同法第八十二条"),
    Document("2", "以暴力、威胁或者其他方法强奸妇女的，处三年以上十年以下有期徒刑。", title="刑法第二百三十六条"),
    Document("3", "屠宰生猪应当在定点屠宰场所进行，具体办法由国务院规定。", title="畜牧法第六十五条"),
]
REPLY = "依据《劳动合同法》第八十二条，可以要求二倍工资。"


def search(query: str, k: int) -> list[Hit]:
    """A tiny lexical search over ARTICLES (character overlap), as any index of a user's Chinese corpus."""
    scored = sorted(ARTICLES, key=lambda d: -len(set(query) & set(d.text)))
    return [Hit(d, float(len(set(query) & set(d.text))), i + 1, retriever="bm25") for i, d in enumerate(scored[:k])]


def engine(llm):
    return engine_for(llm, search=search, documents=ARTICLES)


@pytest.mark.parametrize("message", ["红烧肉怎么做？", "How do I reverse a linked list in Java?", "你好",
                                     "Write a short poem about the sea."])
def test_an_off_topic_message_is_declined_without_calling_the_model(message):
    llm = ScriptedLLM([REPLY])
    answer = engine(llm).answer(message)
    lang_zh = any("\u4e00" <= ch <= "\u9fff" for ch in message)
    # no call at all: an English message is judged on its words before the model would translate it
    assert llm.calls == 0
    assert [s.action for s in answer.steps if s.agent == "answer"] == []
    guard = [s for s in answer.steps if s.agent == "guard"]
    assert [s.action for s in guard] == ["not_covered"] and "scope model" in guard[0].input
    assert answer.text.startswith("legalrag 只回答中华人民共和国" if lang_zh else "legalrag answers legal questions")
    assert ("不是法律问题" if lang_zh else "does not look like a legal question") in answer.text
    assert "\n" not in answer.text and not answer.citations


def test_foreign_law_is_declined_naming_who_would_answer_it():
    llm = ScriptedLLM([REPLY])
    answer = engine(llm).answer("Can my landlord in Texas evict me without notice?")
    assert llm.calls == 0 and [s.action for s in answer.steps if s.agent == "answer"] == []  # no call at all
    assert "law of Texas" in answer.text and "lawyer qualified in Texas" in answer.text
    calls = llm.calls
    hk = engine(llm).answer("香港的离婚需要分居多久？")
    assert llm.calls == calls and "香港特别行政区的法律" in hk.text and "律师" in hk.text


@pytest.mark.parametrize("question", ["用人单位一直不签书面劳动合同，劳动者能要求支付二倍工资吗？",
                                      "邻居家装修把我家的墙震裂了，可以要求赔偿吗？",
                                      "What compensation can an employee claim if the employer never signed a written "
                                      "labour contract?"])
def test_a_stard_style_question_is_answered(question):
    llm = ScriptedLLM([REPLY])
    answer = engine(llm).answer(question)
    assert llm.calls == 1 + (question.isascii())  # an English question is translated for the search first
    assert not [s for s in answer.steps if s.agent == "guard"]


def test_force_answers_a_declined_message_anyway():
    llm = ScriptedLLM([REPLY])
    assert engine(llm).answer("红烧肉怎么做？").steps[-1].action == "not_covered"
    with answer_anyway():
        answer = engine(llm).answer("红烧肉怎么做？")
    assert llm.calls == 1 and answer.text.endswith(REPLY)
    with answer_anyway(False):  # force=false declines as before
        assert engine(llm).answer("红烧肉怎么做？").steps[-1].action == "not_covered"
    assert llm.calls == 1


def test_the_shipped_model_reads_the_scores_of_its_own_scorer_only():
    models = load_scope_models()
    assert models.scorer.startswith("dense:") and models.full.uses_scores and not models.text.uses_scores
    q = "盗窃公私财物数额较大的，怎么处罚？"
    ours = [Hit(ARTICLES[1], 0.72 - i / 100, i + 1, retriever=models.scorer) for i in range(5)]
    other = [Hit(ARTICLES[1], 12.0 - i, i + 1, retriever="bm25") for i in range(5)]
    raw = features(q, ours, models.scorer)
    assert raw["scored"] == 1.0 and raw["top1"] == pytest.approx(0.72) and raw["spread5"] == pytest.approx(0.04)
    assert features(q, other, models.scorer)["scored"] == 0.0 and "top1" not in features(q, other, models.scorer)
    # the same words, scored: a high best hit keeps it in scope, a very low one pushes it out
    p_high = models.decide(q, ours)[0]
    p_low = models.decide(q, [Hit(ARTICLES[1], 0.30 - i / 100, i + 1, retriever=models.scorer) for i in range(5)])[0]
    assert p_low > p_high
    assert scope_verdict(q, ours, "zh", models) is None
    assert "(full)" in scope_verdict("番茄炒蛋要先放蛋还是先放番茄？", [
        Hit(ARTICLES[2], 0.38 - i / 100, i + 1, retriever=models.scorer) for i in range(5)], "zh", models).reason


def test_nothing_retrieved_is_declined_and_a_corpus_in_another_language_is_not_judged():
    assert scope_verdict("盗窃罪怎么判？", [], "zh").reason == "nothing retrieved"
    english = [Hit(Document("us", "No State shall make any law abridging the freedom of speech."), 3.0, 1, "bm25")]
    assert scope_verdict("Does the First Amendment protect hate speech?", english, "en") is None


def test_the_decline_is_one_line_in_the_question_language():
    for lang in ("zh", "en"):
        for kw in ({"place": "美国"}, {"legal": True}, {}):
            text = declined_text(lang, **kw)
            assert "\n" not in text and (("中华人民共和国" in text) if lang == "zh" else ("People's Republic" in text))


def test_a_model_file_of_other_features_is_refused_with_the_fix(tmp_path):
    bad = tmp_path / "scope_model.json"
    bad.write_text(json.dumps({"features": "scope-features-0", "models": {}}), encoding="utf-8")
    with pytest.raises(InputError, match=r"scope_model\.json.*legalrag train scope-model"):
        load_scope_models(bad)
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="cannot read the scope model"):
        load_scope_models(bad)


def test_the_message_file_names_the_bad_line_and_field(tmp_path):
    from legalrag.training.recipes.scope import read_messages

    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "x", "label": "in", "kind": "legal", "split": "train"}) + "\n"
                    + json.dumps({"id": "b", "text": "y", "label": "maybe", "kind": "legal", "split": "train"}) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"m\.jsonl:2: field 'label' is 'maybe'; it must be in or out"):
        read_messages(path)


def test_the_shipped_message_file_is_split_and_balanced():
    from support.paths import REPO

    from legalrag.training.recipes.scope import read_messages

    rows = read_messages(REPO / "bench/data/scope-messages.jsonl")
    for part in ("train", "dev", "test"):
        labels = [r["label"] for r in rows if r["split"] == part]
        assert labels.count("in") and labels.count("out")
        assert 0.4 <= labels.count("in") / len(labels) <= 0.65, part
    assert {r["lang"] for r in rows} == {"zh", "en"} and len(rows) >= 300


def test_ask_force_answers_a_declined_question(tmp_path):
    from legalrag.cli.apps import app
    from legalrag.demo import demo_index
    from legalrag.wiring import Root

    index = demo_index(tmp_path / "demo")
    llm = ScriptedLLM([REPLY])
    args = ["ask", "红烧肉怎么做？", "--index", str(index.path), "--local", "--json"]
    declined = CliRunner().invoke(app, args, obj=Root(llm=llm))
    assert declined.exit_code == 0, declined.output
    assert llm.calls == 0 and "不是法律问题" in json.loads(declined.stdout)["answer"]
    forced = CliRunner().invoke(app, [*args, "--force"], obj=Root(llm=llm))
    assert forced.exit_code == 0, forced.output
    assert llm.calls == 1 and json.loads(forced.stdout)["answer"].endswith(REPLY)


@pytest.mark.parametrize("path", ["/ask", "/consult"])
def test_the_http_routes_decline_and_answer_anyway_with_force(path, tmp_path):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient
    from support.server_setup import sample_index

    from legalrag.server import ServerSettings, create_app

    llm = ScriptedLLM([REPLY])
    client = TestClient(create_app(sample_index(tmp_path / "idx"), llm, ServerSettings(rate_limit=0)))
    declined = client.post(path, json={"question": "红烧肉怎么做？"})
    assert declined.status_code == 200 and llm.calls == 0 and "不是法律问题" in declined.json()["answer"]
    assert any(s["agent"] == "guard" and s["action"] == "not_covered" for s in declined.json()["steps"])
    forced = client.post(path, json={"question": "红烧肉怎么做？", "force": True})
    assert forced.status_code == 200 and llm.calls == 1 and forced.json()["answer"].endswith(REPLY)
