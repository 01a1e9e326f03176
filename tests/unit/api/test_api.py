"""The Python front door, ``legalrag.open()``: each method over a tiny index built here (the six articles of
the citation-mark tests; the English penal code of the citation-prediction tests; a structure model trained on
the judgment tests' cases), with a scripted model for the answers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import legalrag
from legalrag.cli import app
from legalrag.errors import InputError
from legalrag.testing import FakeEncoder, ScriptedLLM
from legalrag.types import Answer, Hit, Turn
from legalrag.wiring import Root
from support.citepred_corpus import PENAL_CODE
from unit.cli.test_check import MARKS, TEXT
from unit.citecheck.test_marks import DOCS

REPO = Path(__file__).resolve().parents[3]
QUESTION = "公司一直不跟我签书面劳动合同，我可以要求公司支付二倍的工资吗？"
ANSWER = ("可以。依据《中华人民共和国劳动合同法》第八十二条，用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，"
          "应当向劳动者每月支付二倍的工资。另见《中华人民共和国刑法》第九百九十九条。")


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    from legalrag.retrieval.index import build_index

    out = tmp_path_factory.mktemp("api") / "idx"
    build_index(out, DOCS, retrievers=("bm25",), lang="zh")
    return out


def article_id(title_end: str) -> str:
    return next(d.id for d in DOCS if d.title.endswith(title_end))


def test_import_is_cheap_and_open_only_stores(index_dir):
    """``import legalrag`` does not import the front door; ``legalrag.open(DIR)`` reaches it and opens nothing."""
    code = ("import sys, legalrag; before = 'legalrag.api' in sys.modules; "
            f"lr = legalrag.open({str(index_dir)!r}); "
            "print(before, type(lr).__module__, [m for m in ('bm25s', 'numpy', 'faiss', 'xllamacpp', 'httpx') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip().split(maxsplit=2) == ["False", "legalrag.api", "[]"], out.stdout + out.stderr
    assert legalrag.open is legalrag.api.open and "open" in dir(legalrag)


def test_search_returns_the_index_hits_best_first(index_dir):
    lr = legalrag.open(index_dir)
    hits = lr.search("盗窃 财物 劳动合同", k=2)
    assert len(hits) == 2 and all(isinstance(h, Hit) for h in hits)
    assert hits[0].document.title == "中华人民共和国刑法第二百六十四条" and [h.rank for h in hits] == [1, 2]
    only = lr.search("劳动合同", k=10, filter_law=["劳动合同法"])
    assert only and {h.document.metadata["law"] for h in only} == {"劳动合同法"}
    with pytest.raises(InputError, match="k must be at least 1"):
        lr.search("盗窃", k=0)
    res = CliRunner().invoke(app, ["search", "盗窃 财物 劳动合同", "--index", str(index_dir), "--json"])
    assert res.exit_code == 0, res.output
    assert [h.id for h in lr.search("盗窃 财物 劳动合同")] == [h["id"] for h in json.loads(res.output)["hits"]]


def test_ask_checks_every_citation_against_the_index(index_dir):
    llm = ScriptedLLM([ANSWER])
    lr = legalrag.open(index_dir, llm=llm)
    assert lr.warm_up() is lr and lr.answer_llm() is llm  # the model handed in is the one that answers
    answer = lr.ask(QUESTION)
    assert isinstance(answer, Answer) and answer.text.endswith(ANSWER) and llm.calls == 1  # after the quoted basis
    real, invented = answer.citations[-2:]
    assert real.resolved and real.document_id == article_id("第八十二条") and real.in_retrieved
    assert not invented.resolved and invented.mark == "not_found"
    assert article_id("第八十二条") in [h.id for h in answer.sources]
    assert "二倍的工资" in llm.last_prompt()  # the retrieved article was in the prompt


def test_ask_answers_as_the_command_does(index_dir):
    answer = legalrag.open(index_dir, llm=ScriptedLLM([ANSWER])).ask(QUESTION)
    res = CliRunner().invoke(app, ["ask", QUESTION, "--index", str(index_dir), "--json"],
                             obj=Root(llm=ScriptedLLM([ANSWER])))
    assert res.exit_code == 0, res.output
    cli = json.loads(res.output)
    assert [h.id for h in answer.sources] == [h["id"] for h in cli["retrieved"]]
    assert [(c.canonical, c.mark, c.document_id) for c in answer.citations] == \
        [(c["canonical"], c["mark"], c["document_id"]) for c in cli["citations"]]


def test_ask_takes_its_defaults_from_the_settings_as_the_command_does(index_dir):
    """The built-in ``fast`` profile retrieves 3 articles; without it the engine's default, 6."""
    question = "用人单位与劳动者订立书面劳动合同，违约责任，盗窃公私财物，自首"
    wide = legalrag.open(index_dir, llm=ScriptedLLM(["无。"])).ask(question)
    fast = legalrag.open(index_dir, llm=ScriptedLLM(["无。"]), profile="fast").ask(question)
    assert len(wide.sources) == 6 and len(fast.sources) == 3
    assert len(legalrag.open(index_dir, llm=ScriptedLLM(["无。"])).ask(question, k=2).sources) == 2


def test_check_marks_each_citation_and_a_missing_article_not_found(index_dir):
    report = legalrag.open(index_dir).check(TEXT, support="lexical")
    assert [c.mark for c in report.citations] == MARKS  # supported, exists, repealed, not found, no corpus
    missing = report.citations[3]
    assert "第九百九十九条" in missing.text and not missing.resolved and missing.document_id is None
    with pytest.raises(InputError, match="choose full or lexical"):
        legalrag.open(index_dir).check(TEXT, support="neural")


def test_check_defaults_to_the_support_model_of_the_command(index_dir):
    """Without ``support`` the full model (the shipped stard-e5 and the lexical scores), as ``legalrag check``."""
    full = legalrag.open(index_dir).check(TEXT)
    res = CliRunner().invoke(app, ["check", "-", "--index", str(index_dir), "--json"], input=TEXT)
    assert res.exit_code == 0, res.output
    assert [(c.mark, c.support) for c in full.citations] == \
        [(c["mark"], c["support"]) for c in json.loads(res.output)["citations"]]
    lexical = legalrag.open(index_dir).check(TEXT, support="lexical")
    assert full.citations[0].support != lexical.citations[0].support


def test_chat_keeps_the_earlier_turns(index_dir):
    llm = ScriptedLLM([ANSWER, "超过一年仍未订立的，视为已订立无固定期限劳动合同。"])
    chat = legalrag.open(index_dir, llm=llm).chat()
    first = chat.ask(QUESTION)
    second = chat.ask("那如果超过一年呢？")
    assert isinstance(second, Answer) and first.text.endswith(ANSWER)
    assert chat.turns == (Turn("user", QUESTION), Turn("assistant", first.text), Turn("user", "那如果超过一年呢？"),
                          Turn("assistant", second.text))
    shown = "\n".join(m["content"] for m in llm.requests[1].messages)
    assert QUESTION in shown and "第八十二条" in shown  # the first turn is the second answer's context
    chat.reset()
    assert chat.turns == ()
    with pytest.raises(InputError, match="unknown processor"):
        legalrag.open(index_dir, llm=llm).chat(processor="everything")


def test_cite_predicts_the_provisions_with_their_provenance(tmp_path):
    from legalrag.citepredict.pipeline import CiteResult
    from legalrag.retrieval.index import build_index
    from unit.cli.test_cite import QRELS

    build_index(tmp_path / "idx", PENAL_CODE, ["bm25"], lang="en")
    (tmp_path / "qrels").write_text(QRELS, encoding="utf-8")
    result = legalrag.open(tmp_path / "idx").cite("He steals a bicycle, the property of another.",
                                                  train_citations=tmp_path / "qrels")
    assert isinstance(result, CiteResult)
    ids = [p.provision for p in result.predictions]
    assert ids[:2] == ["1", "3"] and "4" in ids  # what `legalrag cite` predicts for these facts
    stages = {p.provision: [v.stage for v in p.provenance] for p in result.predictions}
    assert stages["1"] == ["retrieval"] and stages["3"] == ["always-add"] and stages["4"] == ["co-citation"]
    assert result.usage.calls == 0  # no LLM stage by default


def test_draft_the_structure_model_decides_and_the_llm_writes_the_reasoning(tmp_path, index_dir):
    pytest.importorskip("lightgbm")
    from legalrag.judgment.labels import label_cases
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.judgment.reasoned import ReasonedDraft
    from unit.judgment.test_reasoned import FACTS, _reply
    from unit.judgment.test_structure import STATUTES, _cases

    facts, gold = _cases()
    StructurePredictor(label_cases(facts, gold).cases, STATUTES, select=False).train().save(tmp_path / "m")
    law = tmp_path / "law.jsonl"
    law.write_text("".join(json.dumps({"text_id": d.id, "text": d.text, "name": d.title}, ensure_ascii=False) + "\n"
                           for d in STATUTES), encoding="utf-8")
    llm = ScriptedLLM([_reply()])
    lr = legalrag.open(index_dir, llm=llm)
    draft = lr.draft(FACTS, model_dir=tmp_path / "m", law_corpus=law)
    assert isinstance(draft, ReasonedDraft) and draft.source == "llm" and draft.parsed and llm.calls == 1
    assert draft.structure.charge_names[0] == "盗窃罪" and "盗窃罪" in draft.document
    plain = lr.draft(FACTS, model_dir=tmp_path / "m", law_corpus=law, use_llm=False)
    assert plain.source == "template" and llm.calls == 1
    with pytest.raises(InputError, match="leave out model_dir"):
        lr.draft(FACTS, model_dir=tmp_path / "m", free=True)


def test_the_encoder_handed_in_serves_the_dense_components(tmp_path):
    from legalrag.retrieval.index import build_index

    build_index(tmp_path / "dense", DOCS, ["dense"], lang="zh", make_encoder=lambda spec, **_: FakeEncoder())
    lr = legalrag.open(tmp_path / "dense", encoder=FakeEncoder())
    hits = lr.search("盗窃公私财物，数额较大的", k=1)
    assert hits[0].document.title == "中华人民共和国刑法第二百六十四条" and hits[0].retriever.startswith("dense")


def test_bad_input_names_the_field_and_the_fix(tmp_path, index_dir):
    with pytest.raises(InputError, match="no index directory .*legalrag index build"):
        legalrag.open(tmp_path / "nothing-here")
    with pytest.raises(InputError, match="unknown profile 'nope'"):
        legalrag.open(index_dir, profile="nope")
    with pytest.raises(InputError, match="no settings file"):
        legalrag.open(index_dir, config=tmp_path / "missing.toml")
    with pytest.raises(InputError, match="question must be a string"):
        legalrag.open(index_dir, llm=ScriptedLLM(["x"])).ask(None)  # type: ignore[arg-type]


def test_open_without_an_index_opens_the_national_law(law_in_force):
    """The default corpus is the one `legalrag ask` uses without --index: the shipped national law in force."""
    lr = legalrag.open()  # $LEGALRAG_NATIONAL_INDEX (tests/conftest.py): beside it, built once a test session
    assert Path(lr.index.path) == Path(law_in_force.path) and lr.index.manifest["corpus"]["n_documents"] == 64338
    assert lr.search("盗窃公私财物，数额较大的，处三年以下有期徒刑", k=1)[0].document.metadata["law"] == "中华人民共和国刑法"
