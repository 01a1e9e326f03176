"""The selector's files: the priors counted from the gold articles, and a written model directory read back with
its priors, calibration and threshold, its card (name, kind, the card's own fields, each file's SHA-256) and
its README."""

from __future__ import annotations

import hashlib
import json

import pytest

from legalrag.answer.select import (
    CARD_FILE,
    FEATURES,
    SPEC_FILE,
    LinearScorer,
    Platt,
    Priors,
    SelectorModel,
    read_model,
    write_model,
)


def test_the_priors_count_each_gold_article_and_its_law_once_per_question():
    priors = Priors.from_gold([["wage", "contract"], ["wage"], ["unknown"]],
                              {"wage": "劳动合同法", "contract": "劳动合同法", "unknown": ""})
    assert priors == Priors({"wage": 2, "contract": 1, "unknown": 1}, {"劳动合同法": 3})
    assert priors.to_dict() == {"article": {"wage": 2, "contract": 1, "unknown": 1}, "law": {"劳动合同法": 3}}
    assert Priors.from_dict(priors.to_dict()) == priors
    assert Priors.from_gold([], {}) == Priors()


@pytest.fixture
def model():
    n = len(FEATURES)
    scorer = LinearScorer(tuple(0.1 * i for i in range(n)), -0.5, tuple(0.0 for _ in range(n)),
                          tuple(1.0 for _ in range(n)))
    priors = Priors({"wage": 2}, {"劳动合同法": 2})
    return SelectorModel(scorer, Platt(1.5, -0.25), 0.4, priors, {"trained_on": "a fixture"})


def test_a_written_model_reads_back_with_its_priors_calibration_and_threshold(model, tmp_path):
    back = read_model(write_model(tmp_path / "sel", model, {"origin": "test"}))
    assert back.priors == model.priors and back.calibration == Platt(1.5, -0.25) and back.threshold == 0.4
    assert back.scorer == model.scorer and back.spec["trained_on"] == "a fixture"
    spec = json.loads((tmp_path / "sel" / SPEC_FILE).read_text(encoding="utf-8"))
    assert (spec["format"], spec["version"], spec["calibration"]) == \
        ("legalrag-selector", 1, {"kind": "platt", "a": 1.5, "b": -0.25})
    assert spec["priors"] == {"article": {"wage": 2}, "law": {"劳动合同法": 2}}


def test_the_card_names_the_model_keeps_its_fields_and_hashes_each_file_and_the_readme_is_written(model, tmp_path):
    d = write_model(tmp_path / "sel", model, {"origin": "test", "hits@1": 0.5},
                    readme=lambda card: f"# {card['name']} ({card['kind']}): {card['origin']}\n")
    card = json.loads((d / CARD_FILE).read_text(encoding="utf-8"))
    digest = hashlib.sha256((d / SPEC_FILE).read_bytes()).hexdigest()
    assert card == {"name": "selector", "kind": "selector", "origin": "test", "hits@1": 0.5,
                    "files_sha256": {SPEC_FILE: digest}}
    assert (d / "README.md").read_text(encoding="utf-8") == "# selector (selector): test\n"
    assert sorted(p.name for p in d.iterdir()) == ["README.md", CARD_FILE, SPEC_FILE]
    bare = write_model(tmp_path / "bare", model)
    assert sorted(p.name for p in bare.iterdir()) == [CARD_FILE, SPEC_FILE]
    assert set(json.loads((bare / CARD_FILE).read_text(encoding="utf-8"))) == {"name", "kind", "files_sha256"}
