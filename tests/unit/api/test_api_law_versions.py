"""``Legalrag.draft`` and ``Legalrag.predict`` with ``as_of``: each Criminal Law article read in the version in
force at the acts, over the versions shipped with legalrag, loaded once per ``Legalrag`` on first need (the
private-company manager of 2023: 第一百六十五条's old text, which does not reach him; ``as_of`` 2024-05-01: today's)."""

from __future__ import annotations

import pytest

pytest.importorskip("lightgbm")

import legalrag  # noqa: E402
from legalrag.errors import InputError  # noqa: E402
from legalrag.judgment.temporal import DatedPrediction  # noqa: E402
from unit.judgment.manager_case import ACTS_2023, article, saved_model, shipped_versions_or_skip  # noqa: E402


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    shipped_versions_or_skip()
    return saved_model(tmp_path_factory.mktemp("api-versions"))


def test_draft_and_predict_read_the_law_at_the_acts_and_load_the_versions_once(files):
    model_dir, law = files
    lr = legalrag.open()
    assert lr._library == []  # nothing loads before a draft or a prediction needs it
    old = lr.draft(ACTS_2023, model_dir=model_dir, law_corpus=law, use_llm=False)
    library = lr.library
    a = article(old.to_dict()["law_versions"])
    assert (a["rule"], a["version"]) == ("not_covered", "2020-12-26") and "其他公司、企业" not in a["text"]
    assert "根据《中华人民共和国刑法》第十二条" in old.reasoning and "不构成该条规定之罪" in old.document

    new = lr.draft(ACTS_2023, model_dir=model_dir, law_corpus=law, use_llm=False, as_of="2024-05-01")
    a = article(new.to_dict()["law_versions"])
    assert (a["rule"], a["version"]) == ("current", "2023-12-29") and "其他公司、企业" in a["text"]
    assert "第十二条" not in new.document

    predicted = lr.predict(ACTS_2023, model_dir=model_dir, law_corpus=law)
    assert isinstance(predicted, DatedPrediction) and predicted.structure.charge_names == ["非法经营同类营业罪"]
    assert article(predicted.to_dict()["law_versions"])["rule"] == "not_covered"
    dated = lr.predict(ACTS_2023, model_dir=model_dir, law_corpus=law, as_of="2024-05-01")
    assert article(dated.to_dict()["law_versions"])["rule"] == "current"
    assert lr.library is library and len(lr._library) == 1  # one load for all four calls


def test_a_bad_date_is_named_before_anything_loads(files):
    model_dir, law = files
    lr = legalrag.open()
    for call in (lambda: lr.draft(ACTS_2023, model_dir=model_dir, law_corpus=law, use_llm=False, as_of="2024-13-01"),
                 lambda: lr.predict(ACTS_2023, model_dir=model_dir, law_corpus=law, as_of="May 2024")):
        with pytest.raises(InputError, match="YYYY-MM-DD") as err:
            call()
        assert err.value.field == "as_of"
    assert lr._library == []
