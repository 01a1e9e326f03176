"""Our JuDGE evaluator reproduces the reference implementation's figures on the benchmark's own files."""

from __future__ import annotations

import json

import pytest

from legalrag.judgment.io import load_judgments
from legalrag.judgment.metrics import evaluate

# Printed by JuDGE's evaluation/calc.py for Example_Output.jsonl against expected.jsonl.
REFERENCE = {"prison": 0.6812, "fine": 0.5328, "charge_f1": 0.9283,
             "article_precision": 0.7777, "article_recall": 0.6542, "article_f1": 0.7106}


@pytest.mark.shared_data
def test_example_output_reproduces_reference_figures(shared_data):
    gold = load_judgments(shared_data / "judge" / "expected.jsonl")
    pred = load_judgments(shared_data / "judge" / "Example_Output.jsonl")
    report = evaluate(pred, gold)
    assert report.n == 501
    for name, value in REFERENCE.items():
        assert getattr(report, name) == pytest.approx(value, abs=0.005), name


@pytest.mark.shared_data
def test_expected_against_itself_is_perfect(shared_data):
    gold = load_judgments(shared_data / "judge" / "expected.jsonl")
    report = evaluate(gold, gold)
    assert report.prison == report.fine == report.charge_f1 == 1.0
    # Gold judgments that cite no Criminal Law article score 0 recall even against themselves.
    assert 0.995 <= report.article_f1 < 1.0
    assert report.unparsed == ()


def test_cli_eval_judgment_json_and_table(tmp_path):
    from typer.testing import CliRunner

    from legalrag.cli import app

    doc = ("审理终结。本院认为，构成盗窃罪，依照《中华人民共和国刑法》第二百六十四条之规定，判决如下：\n"
           "被告人甲犯盗窃罪，判处有期徒刑一年，并处罚金人民币二千元。\n如不服本判决，可上诉。")
    gold = tmp_path / "gold.jsonl"
    pred = tmp_path / "pred.jsonl"
    gold.write_text(json.dumps({"id": "1", "document": doc}, ensure_ascii=False) + "\n"
                    + json.dumps({"id": "2", "document": doc}, ensure_ascii=False) + "\n", encoding="utf-8")
    pred.write_text(json.dumps({"id": "1", "document": doc.replace("一年", "二年")}, ensure_ascii=False) + "\n"
                    + json.dumps({"id": "2", "document": "无法解析的文字"}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    runner = CliRunner()
    res = runner.invoke(app, ["eval", "judgment", "--pred", str(pred), "--gold", str(gold), "--json",
                              "--no-text-metrics"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["prison"] == pytest.approx(0.25) and out["charge_f1"] == pytest.approx(0.5)
    assert out["unparsed"] == ["2"]
    res = runner.invoke(app, ["eval", "judgment", "--pred", str(pred), "--gold", str(gold), "--no-text-metrics"])
    assert res.exit_code == 0 and "prison" in res.output and "not parsed" in res.output


def test_cli_eval_judgment_bad_input(tmp_path):
    from legalrag.cli import main

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1"}\n', encoding="utf-8")
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "legalrag", "eval", "judgment", "--pred", str(bad),
                           "--gold", str(bad), "--no-text-metrics"], capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(__import__("pathlib").Path(
                              __file__).resolve().parents[1] / "src")})
    assert proc.returncode != 0
    assert "bad.jsonl:1" in proc.stderr and "document" in proc.stderr
    assert main  # the entry point exists
