"""The tuning knobs of the train, agents, eval, search, cite and qa commands are ``-o KEY=VALUE``: each trainer's
keys are its library settings' fields with the same defaults, an unknown key exits 2 naming the valid ones, and
``--help`` lists the keys."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from typer.testing import CliRunner

from legalrag.cli import app
from legalrag.cli import _options, _train_options
from legalrag.cli._train_options import (JudgeCiteOptions, JudgeStructureOptions, TrainEncoderOptions,
                                         TrainRerankerOptions)

REQUIRED = {  # command -> the options it must be given before -o is read (values are never opened)
    ("train", "split"): ["--queries", "q.jsonl", "--out", "x"],
    ("train", "encoder"): ["--queries", "q.jsonl", "--out", "x"],
    ("train", "reranker"): ["--queries", "q.jsonl", "--out", "x"],
    ("train", "ranker"): ["--queries", "q.jsonl"],
    ("train", "stard-e5"): ["--queries", "q.jsonl", "--out", "x"],
    ("train", "judge-e5"): ["--queries", "q.jsonl", "--out", "x"],
    ("train", "cail-split"): ["--data", "d", "--cail", "c", "--out", "x"],
    ("train", "judge-structure"): ["--data", "d", "--out", "x"],
    ("train", "judge-cite"): ["--data", "d", "--out", "x", "--retriever", "bm25"],
    ("train", "policy"): ["--queries", "q.jsonl", "--out", "x"],
    ("train", "support-model"): ["--corpus", "c.jsonl", "--split", "s", "--out", "x"],
    ("agents", "rollouts"): ["--queries", "q.jsonl", "--out", "x"],
    ("eval", "retrieval"): ["--queries", "q.jsonl"],
    ("eval", "compare"): ["run", "--queries", "q.jsonl"],
    ("eval", "answers"): ["--queries", "q.jsonl", "--out", "x"],
    ("eval", "mcq"): ["--questions", "q.jsonl"],
    ("eval", "conversation"): ["--data", "d"],
    ("eval", "consultation-generate"): ["--data", "d", "--out", "x"],
    ("eval", "consultation-judge"): ["--generations", "g", "--out", "x"],
    ("eval", "judgment"): ["--pred", "p", "--gold", "g"],
    ("eval", "cite"): ["--cases", "c.jsonl"],
    ("eval", "consultation-score"): ["--generations", "g"],
    ("train", "export-onnx"): ["model", "out"],
    ("search",): ["question"],
    ("cite",): ["facts"],
    ("qa",): ["question"],
}


@pytest.mark.parametrize("command", sorted(REQUIRED), ids=" ".join)
def test_an_unknown_key_exits_2_naming_the_valid_ones(command, tmp_path):
    res = CliRunner().invoke(app, [*command, *REQUIRED[command], "-o", "no_such_knob=1"], env={"COLUMNS": "300"})
    assert res.exit_code == 2, res.output
    assert "no_such_knob" in res.output and "valid keys:" in res.output


def _keys(help_text: str) -> str:
    return " ".join(help_text.split())


@pytest.mark.parametrize("command, keys", [
    (("train", "encoder"), ["epochs", "batch_size", "lr", "freeze_embeddings", "guard_ratio", "device", "mine"]),
    (("train", "policy"), ["group_size", "learning_rate", "lora_r", "step_penalty", "max_rounds", "restart"]),
    (("train", "ranker"), ["depth", "rounds", "cv", "neighbours", "neighbour_temperature", "cross"]),
    (("eval", "cite"), ["dev", "case_memory", "analyse", "llm_rerank", "verify", "core_k"]),
], ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_help_lists_the_keys_with_their_defaults(command, keys):
    res = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "300"})
    shown = _keys(res.output)
    assert res.exit_code == 0 and "KEY=VALUE" in shown
    for key in keys:
        assert f"{key}:" in shown, key


def _defaults(model: type[_options.Options], names) -> dict:
    return {n: model.model_fields[n].default for n in names}


def test_trainer_keys_are_the_library_settings_with_the_same_defaults():
    from legalrag.training.encoder import EncoderSettings
    from legalrag.training.policy.grpo import GRPOSettings
    from legalrag.training.policy.reward import RewardSettings
    from legalrag.training.reranker import RerankerSettings

    for model, settings in ((TrainEncoderOptions, EncoderSettings), (TrainRerankerOptions, RerankerSettings)):
        fields = {f.name: f.default for f in dataclasses.fields(settings)}
        assert _defaults(model, fields) == fields, settings.__name__
    skip = {"target_modules"}  # a tuple of module names: the GRPO default only
    grpo = {f.name: f.default for f in dataclasses.fields(GRPOSettings) if f.name not in skip}
    assert _train_options.PolicyOptions().grpo() == grpo
    assert _train_options.PolicyOptions().reward() == {f.name: f.default for f in dataclasses.fields(RewardSettings)}


def test_recipe_keys_are_the_recipe_keywords_with_the_same_defaults():
    from legalrag.training.recipes import judge_cite, judge_structure

    for model, recipe in ((JudgeStructureOptions, judge_structure), (JudgeCiteOptions, judge_cite)):
        params = inspect.signature(recipe).parameters
        assert {n: params[n].default for n in model.model_fields} == _defaults(model, model.model_fields)


def test_keys_reach_the_settings():
    enc = _options.parse_options(TrainEncoderOptions, ["epochs=3", "mine=bm25,dense",
                                                       "freeze_embeddings=false"])
    assert (enc.epochs, enc.mine, enc.freeze_embeddings) == (3, ("bm25", "dense"), False)
    pol = _options.parse_options(_train_options.PolicyOptions, ["learning_rate=1e-4", "gain_bonus=0.3"])
    assert pol.grpo()["learning_rate"] == 1e-4 and pol.reward()["gain_bonus"] == 0.3
    cite = _options.parse_options(_options.EvalCiteOptions, ["dev=4", "core_k=2", "verify=true"])
    assert cite.overrides(verify=cite.verify) == {"core_k": 2, "threshold": None, "prior_weight": None,
                                                  "verify_batch": None, "case_first": None, "verify": True}
