"""The support model's recipe (``training.recipes.support``, ``legalrag train support-model``) on a tiny split of
the shipped statute sample: it writes a model file that ``citecheck.support`` loads, and that model scores an
article supporting its claim above an unrelated article."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.paths import REPO

SAMPLE = REPO / "src" / "legalrag" / "data" / "statutes_sample.jsonl"


def _split(directory: Path, docs) -> Path:
    """Questions whose lawyer's answer cites its gold article in a sentence that restates the article."""
    split = directory / "split"
    split.mkdir()
    chosen = [d for d in docs if d.metadata.get("law") and len(d.text) > 30][::9][:24]
    rows = []
    for i, d in enumerate(chosen):
        law = d.metadata["law"]
        article = d.title[len(law):] if d.title.startswith(law) else d.title
        claim = d.text.split("。")[0][:80]
        rows.append({"query_id": str(i), "query": claim[:30], "gold_ids": [d.id],
                     "answer": f"{claim}（《{law}》{article}）。建议保留证据，必要时咨询律师。"})
    for part, (a, b) in (("train", (0, 14)), ("dev", (14, 20)), ("test", (20, 24))):
        (split / f"{part}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows[a:b]),
                                             encoding="utf-8")
    return split


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    from legalrag.corpora.statutes import load_statutes
    from legalrag.demo import demo_index
    from legalrag.training.recipes import support_model

    tmp = tmp_path_factory.mktemp("support")
    docs = load_statutes(SAMPLE)
    out = tmp / "support_model.json"
    fit = support_model(SAMPLE, _split(tmp, docs), demo_index(tmp / "index"), out, negatives=2,
                        min_precision=0.6, cache=tmp / "pairs.json", command="legalrag train support-model",
                        log=lambda line: None)
    return fit, out, docs, tmp


def test_the_recipe_writes_a_model_the_support_scorer_loads(fitted):
    from legalrag.citecheck.support import LEXICAL_FEATURES, SupportModel

    fit, out, _, tmp = fitted
    written = json.loads(out.read_text(encoding="utf-8"))
    assert set(written) == {"about", "data", "command", "encoder", "models", "test"}  # the shipped format
    assert written["command"] == "legalrag train support-model" and list(written["models"]) == ["lexical"]
    assert not list(out.parent.glob("*.tmp"))  # written atomically: no temp file left
    model = SupportModel.load("lexical", path=out)
    assert model.features == LEXICAL_FEATURES and 0 < model.threshold < 1
    assert model.coefficients == fit.models["lexical"]["coefficients"]
    assert fit.pairs["train"]["positives"] >= 14 and fit.pairs["train"]["pairs"] > fit.pairs["train"]["positives"]
    cached = json.loads((tmp / "pairs.json").read_text(encoding="utf-8"))
    assert set(cached) == {"hits"} and len(cached["hits"]) == 24  # each question's retrieved ids: a rerun resumes


def test_the_fitted_model_scores_a_supporting_pair_above_an_unrelated_one(fitted):
    from legalrag.citecheck.support import SupportModel, SupportScorer

    _, out, docs, _ = fitted
    scorer = SupportScorer(model=SupportModel.load("lexical", path=out))
    by_id = {d.id: d for d in docs}
    loan, unrelated = by_id["666"], next(d for d in docs if d.metadata.get("law") == "劳动合同法")
    claim = "借款合同是借款人向贷款人借款，到期返还借款并支付利息的合同"
    supporting, other = scorer.scores([(claim, loan), (claim, unrelated)])
    assert supporting > other
    assert supporting >= scorer.threshold > other


def test_a_resumed_run_reads_the_cached_pairs_and_fits_the_same_model(fitted, tmp_path):
    from legalrag.training.recipes import support_model

    fit, _, _, tmp = fitted

    def no_index():
        raise AssertionError("the cached pairs are complete: no index is opened")

    again = support_model(SAMPLE, tmp / "split", no_index, tmp_path / "again.json", negatives=2,
                          min_precision=0.6, cache=tmp / "pairs.json", log=lambda line: None)
    assert again.models == fit.models


def test_a_split_without_its_parts_is_refused_naming_the_file(tmp_path):
    from legalrag.errors import InputError
    from legalrag.training.recipes import support_model

    (tmp_path / "split").mkdir()
    with pytest.raises(InputError, match="train.jsonl"):
        support_model(SAMPLE, tmp_path / "split", lambda: None, tmp_path / "m.json", log=lambda line: None)


def test_the_command_keys_have_the_recipe_defaults():
    import inspect

    from legalrag.cli._train_options import SupportModelOptions
    from legalrag.training.recipes.support import DEFAULTS, support_model

    params = inspect.signature(support_model).parameters
    fields = SupportModelOptions.model_fields
    for key in ("negatives", "train_limit", "min_precision"):
        assert fields[key].default == params[key].default == DEFAULTS[key], key
    assert fields["encoder"].default == params["encoder_name"].default == DEFAULTS["encoder"] == "stard-e5"


def test_the_command_runs_the_recipe_and_records_itself(fitted, tmp_path):
    from typer.testing import CliRunner

    from legalrag.cli import app
    from legalrag.citecheck.support import SupportModel

    fit, _, _, tmp = fitted
    out = tmp_path / "model.json"
    args = ["train", "support-model", "--corpus", str(SAMPLE), "--split", str(tmp / "split"), "--index",
            str(tmp / "index"), "--out", str(out), "-o", "lexical_only=true", "-o", "negatives=2",
            "-o", "min_precision=0.6", "-o", f"cache={tmp / 'pairs.json'}"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["command"] == "legalrag " + " ".join(args)
    assert SupportModel.load("lexical", path=out).coefficients == fit.models["lexical"]["coefficients"]
