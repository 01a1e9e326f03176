"""Consultation data as a new user brings it: JSON Lines, any file name, whole-law gold, nothing scorable,
empty gold named, one turn count, and the data's article text checked against the resolved article."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from legalrag.evaluation.lexrag.data import load_consultations, load_consultation_file
from legalrag.evaluation.lexrag.gold import require_scorable, resolve_gold, same_text
from legalrag.errors import InputError

SAMPLE = Path(__file__).resolve().parents[4] / "src" / "legalrag" / "data" / "statutes_sample.jsonl"


@pytest.fixture(scope="module")
def sample_docs():
    from legalrag.corpora.statutes import load_statutes

    return load_statutes(SAMPLE)


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory, sample_docs):
    from legalrag.retrieval.index import build_index

    return build_index(tmp_path_factory.mktemp("idx") / "index", sample_docs, ["bm25"], lang="zh")


@pytest.fixture
def fixture_dir(test_data) -> Path:
    return test_data / "consultation"


def _items(fixture_dir: Path, n: int) -> list[dict]:
    return json.loads((fixture_dir / "turns" / f"turn_{n}.json").read_text(encoding="utf-8"))


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _cli(*args):
    from typer.testing import CliRunner

    from legalrag.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def test_json_lines_are_read_in_both_forms(fixture_dir, tmp_path):
    dialogues = json.loads((fixture_dir / "dataset.json").read_text(encoding="utf-8"))
    whole = load_consultations(fixture_dir / "dataset.json")
    assert load_consultations(_jsonl(tmp_path / "dataset.json", dialogues)) == whole  # JSONL under a .json name
    items = _items(fixture_dir, 3)
    assert load_consultation_file(_jsonl(tmp_path / "turn_3.jsonl", items)) == [t for t in whole if t.turn == 3]
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(items[0], ensure_ascii=False) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"broken.jsonl:2: not valid JSON"):
        load_consultation_file(broken)


def test_the_form_is_read_from_the_records_not_the_file_name(fixture_dir, tmp_path):
    items = _items(fixture_dir, 2)
    named = tmp_path / "my-dialogues.json"
    named.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    rows = load_consultations(named)
    assert [t.turn for t in rows] == [2, 2]  # from each item's history
    assert rows == [t for t in load_consultations(fixture_dir / "dataset.json") if t.turn == 2]
    with pytest.raises(InputError, match=r"record 0 holds turns but --format dialogues says dialogues.*"
                                         r"use --format turns or auto"):
        load_consultations(named, fmt="dialogues")
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps([{"id": 1, "question": "x"}]), encoding="utf-8")
    with pytest.raises(InputError, match=r"record 0 has neither a 'conversation' list nor a 'current_question' "
                                         r"\(keys: id, question\); expected dialogues \{.*\} \(LexRAG dataset.json\) "
                                         r"or per-turn items \{.*\} \(LexRAG turn_N.json\)"):
        load_consultations(odd)


def test_a_whole_law_gold_is_named_as_such_without_foreign_examples(fixture_dir, sample_docs):
    rows = load_consultations(fixture_dir / "dataset.json")
    rows = [rows[0].__class__(**{**rows[0].__dict__, "articles": ("《中华人民共和国民事诉讼法》", "劳动合同法",
                                                                    "问一下律师")})]
    _, report = resolve_gold(rows, sample_docs)
    law = report.unresolved["《中华人民共和国民事诉讼法》"]
    assert law.startswith("names a whole law (中华人民共和国民事诉讼法), not an article")
    assert "《中华人民共和国民事诉讼法》第十条" in law
    assert report.unresolved["劳动合同法"].startswith("names a whole law (劳动合同法)")
    other = report.unresolved["问一下律师"]
    assert "《中华人民共和国民法典》第六百六十七条" in other
    for reason in report.unresolved.values():
        assert "BV" not in reason and "U.S.C." not in reason and "Fed. R." not in reason


def test_nothing_scorable_is_an_error(fixture_dir, sample_index, tmp_path, monkeypatch, capsys):
    from support.cli_runner import run_cli

    items = [{**item, "article": ["《中华人民共和国民事诉讼法》"]} for item in _items(fixture_dir, 2)]
    data = _jsonl(tmp_path / "lexrag-turn2.jsonl", items)
    rows, report = resolve_gold(load_consultations(data), sample_index.documents)
    with pytest.raises(InputError, match=r"nothing scorable: none of the 2 turns .* names a whole law"):
        require_scorable(rows, report)
    code, out, err = run_cli(monkeypatch, capsys, "eval", "conversation", "--data", data, "--index",
                             sample_index.path, "--processor", "last", "--no-progress")
    assert code != 0 and "nothing scorable" in err and "Recall" not in out


def test_every_turn_left_out_is_named_and_one_count_is_shown(fixture_dir, sample_index, tmp_path):
    dialogues = json.loads((fixture_dir / "dataset.json").read_text(encoding="utf-8"))
    for d in dialogues:  # every turn 5 gives no gold at all
        d["conversation"][4]["article"] = []
    data = tmp_path / "dataset.json"
    data.write_text(json.dumps(dialogues, ensure_ascii=False), encoding="utf-8")
    rows, report = resolve_gold(load_consultations(data), sample_index.documents)
    assert report.turns_with_empty_gold == ("fx-1-t5", "fx-2-t5")
    assert set(report.turns_without_gold) == {"fx-1-t4", "fx-1-t5", "fx-2-t5"} and report.scored == 7
    notices = "\n".join(report.notices())
    assert "no gold in the data (2): fx-1-t5, fx-2-t5" in notices and "no gold name resolved (1): fx-1-t4" in notices
    res = _cli("eval", "conversation", "--data", data, "--index", sample_index.path, "--processor", "last",
               "--no-progress")
    assert res.exit_code == 0, res.output
    assert "fx-1-t5, fx-2-t5" in res.output and "fx-1-t4" in res.output
    assert "7 scored turns of 10; 3 left out" in " ".join(res.output.split())
    payload = _cli("eval", "conversation", "--data", data, "--index", sample_index.path, "--processor", "last",
                   "--json", "--no-progress").stdout
    payload = json.loads(payload[payload.index("{"):])
    assert payload["turns"] == {"loaded": 10, "scored": 7} and payload["table"][0]["turns"] == 7


def test_article_context_that_differs_from_the_resolved_article_is_warned_naming_both(fixture_dir, sample_index,
                                                                                      tmp_path):
    items = _items(fixture_dir, 3)
    name = items[0]["article"][0]  # 《中华人民共和国民法典》第六百八十条
    same = "禁止高利放贷,借款的利率不得违反国家有关规定。\\n\\n借款合同对支付利息没有约定的,视为没有利息。"
    items[0]["article_context"] = [{name: same}]  # escaped line breaks, half-width commas, cut short: same
    other = items[1]["article"][0]
    items[1]["article_context"] = [{other: "劳动者在试用期内提前三日通知用人单位，可以解除劳动合同。"}]
    data = tmp_path / "turn_3.json"
    data.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    rows, report = resolve_gold(load_consultations(data), sample_index.documents)
    assert rows[0].article_texts[0][1].startswith("禁止高利放贷") and "\n" in rows[0].article_texts[0][1]
    assert list(report.text_mismatches) == [other]
    m = report.text_mismatches[other]
    assert m["given"].startswith("劳动者在试用期内") and m["resolved_id"] == rows[1].gold_ids[0]
    res = _cli("eval", "conversation", "--data", data, "--index", sample_index.path, "--processor", "last",
               "--no-progress")
    assert res.exit_code == 0, res.output
    warning = " ".join(res.output.split())
    assert f"warning: {other}: the data's article_context reads '劳动者在试用期内" in warning
    assert f"(id {m['resolved_id']})" in warning and m["resolved_name"] in warning
    assert same_text("借款合同对支付利息没有约定的，视为没有利息。", "借款合同对支付利息没有约定的,视为没有利息")
    assert not same_text("借款合同对支付利息没有约定的，视为没有利息。", "建立劳动关系，应当订立书面劳动合同。")
