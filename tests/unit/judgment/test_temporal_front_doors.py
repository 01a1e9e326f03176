"""刑法第十二条 through the composition root: ``wiring.judgment.draft_judgment`` and the predict calls read each
article in the version in force at the acts, over the library they are handed (the private-company manager of
2023: 第一百六十五条 in its old text, which does not reach him; ``as_of`` 2024-05-01: today's text), and
`legalrag judgment draft|predict` print what they return, over the shipped versions."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("lightgbm")

from legalrag.errors import InputError  # noqa: E402
from legalrag.judgment.reasoned import ReasonedDraft  # noqa: E402
from legalrag.judgment.temporal import NO_VERSIONS, DatedPrediction  # noqa: E402
from legalrag.wiring import Root  # noqa: E402
from legalrag.wiring.judgment import (draft_judgment, judgment_predictor, predict_judgment,  # noqa: E402
                                      predict_judgments)
from unit.judgment.manager_case import ACTS_2023, TWO_VERSIONS, article, saved_model  # noqa: E402
from unit.judgment.test_temporal import NEW_165, OLD_165  # noqa: E402


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return saved_model(tmp_path_factory.mktemp("front-doors"))


def test_the_draft_reads_the_article_in_force_at_the_acts(files):
    model_dir, law = files
    old = draft_judgment(Root(), ACTS_2023, None, model_dir, law_corpus=law, library=TWO_VERSIONS)
    assert isinstance(old, ReasonedDraft) and old.structure.charge_names == ["非法经营同类营业罪"]
    a = article(old.law_versions.to_dict())
    assert (a["rule"], a["version"], a["text"]) == ("not_covered", "2020-12-26", OLD_165)
    reasoning = old.document.split("判决如下")[0]
    assert "根据《中华人民共和国刑法》第十二条" in reasoning and "不构成该条规定之罪" in reasoning
    assert old.to_dict()["law_versions"]["acts"]["earliest"] == "2023-05-01"

    new = draft_judgment(Root(), ACTS_2023, None, model_dir, law_corpus=law, library=TWO_VERSIONS,
                         as_of="2024-05-01")
    a = article(new.law_versions.to_dict())
    assert (a["rule"], a["version"], a["text"]) == ("current", "2023-12-29", NEW_165)
    assert "第十二条" not in new.document and new.law_versions.acts.source == "as_of"


def test_no_versions_and_a_bad_date(files, tmp_path):
    model_dir, law = files
    bare = draft_judgment(Root(), ACTS_2023, None, model_dir, law_corpus=law, library=None)
    assert bare.law_versions.notice == NO_VERSIONS and "第十二条" not in bare.document
    with pytest.raises(InputError, match="YYYY-MM-DD") as err:  # before the statutes load: this file is not there
        draft_judgment(Root(), ACTS_2023, None, model_dir, law_corpus=tmp_path / "missing.jsonl",
                       library=TWO_VERSIONS, as_of="2024-02-30")
    assert err.value.field == "as_of"


def test_predictions_carry_the_versions_one_case_and_many(files, tmp_path):
    model_dir, law = files
    predictor = judgment_predictor(Root(), model_dir, law)
    one = predict_judgment(predictor, ACTS_2023, TWO_VERSIONS)
    assert isinstance(one, DatedPrediction) and article(one.to_dict()["law_versions"])["rule"] == "not_covered"
    assert one.to_dict()["charges"][0]["name"] == "非法经营同类营业罪"
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "c1", "text": ACTS_2023}, ensure_ascii=False) + "\n", encoding="utf-8")
    (row,) = predict_judgments(predictor, cases, TWO_VERSIONS, as_of="2024-05-01")
    assert row["id"] == "c1" and article(row["law_versions"])["rule"] == "current"
    with pytest.raises(InputError, match="YYYY-MM-DD"):
        predict_judgment(predictor, ACTS_2023, TWO_VERSIONS, as_of="2024/05/01")


def test_the_cli_prints_what_the_library_call_returns_over_the_shipped_versions(files):
    from typer.testing import CliRunner

    from legalrag.cli import app
    from unit.judgment.manager_case import shipped_versions_or_skip

    shipped_versions_or_skip()
    model_dir, law = files
    common = ["--facts", ACTS_2023, "--model-dir", str(model_dir), "--law-corpus", str(law)]
    for as_of, rule, version in ((None, "not_covered", "2020-12-26"), ("2024-05-01", "current", "2023-12-29")):
        extra = ["--as-of", as_of] if as_of else []
        r = CliRunner().invoke(app, ["judgment", "draft", *common, "--no-llm", "--json", *extra])
        assert r.exit_code == 0, r.output + repr(r.exception)
        drafted = json.loads(r.output)
        assert (article(drafted["law_versions"])["rule"], article(drafted["law_versions"])["version"]) == (rule, version)
        assert ("不构成该条规定之罪" in drafted["document"]) == (as_of is None)
        r = CliRunner().invoke(app, ["judgment", "predict", *common, *extra])
        assert r.exit_code == 0, r.output + repr(r.exception)
        assert article(json.loads(r.output)["law_versions"])["rule"] == rule
