"""``-o KEY=VALUE`` (typed, unknown keys refused), ``--model SPEC`` (embedded model or ``URL#MODEL``), and the
evaluation commands' default index, through the real command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from support.cli_runner import EVAL_QUERIES, run_cli
from legalrag.cli._options import BuildOptions, CiteOptions, GenerationOptions, parse_options
from legalrag.cli.common import llm_spec

CORPUS = Path(__file__).resolve().parents[2] / "data" / "lexical_statutes.jsonl"


def test_pairs_become_typed_values():
    o = parse_options(BuildOptions, ["k1=2.5", "chunk-docs=3", "backend=milvus", "nprobe=8", "fusion=wsf"])
    assert (o.k1, o.chunk_docs, o.backend.value, o.nprobe, o.fusion.value) == (2.5, 3, "milvus", 8, "wsf")
    assert parse_options(BuildOptions, []) == BuildOptions()
    assert parse_options(CiteOptions, ["verify_batch=false", "core_k=2"]).overrides(verify=True) == {
        "core_k": 2, "threshold": None, "prior_weight": None, "verify_batch": False, "case_first": None,
        "verify": True}


def test_an_unknown_key_names_the_valid_ones():
    with pytest.raises(typer.BadParameter) as err:
        parse_options(GenerationOptions, ["evidence_token=300"])
    msg = str(err.value)
    assert "unknown key 'evidence_token'" in msg and "evidence_tokens" in msg and "history_chars" in msg


@pytest.mark.parametrize("pairs, says", [
    (["k1"], "takes KEY=VALUE, got 'k1'"),
    (["chunk_docs=0"], "chunk_docs='0'"),
    (["workers=two"], "workers='two'"),
    (["nprobe=4"], "nprobe tune a Milvus index; add -o backend=milvus"),
    (["index_type=annoy"], "index_type='annoy'"),
])
def test_bad_pairs_say_what_is_wrong(pairs, says):
    with pytest.raises(typer.BadParameter) as err:
        parse_options(BuildOptions, pairs)
    assert says in str(err.value)


def test_model_spec():
    assert llm_spec(None) == (None, None, None)
    assert llm_spec("qwen2.5-coder-0.5b") == ("qwen2.5-coder-0.5b", None, None)
    assert llm_spec("models/x.gguf") == ("models/x.gguf", None, None)
    assert llm_spec("http://127.0.0.1:8000/v1#qwen") == (None, "http://127.0.0.1:8000/v1", "qwen")
    assert llm_spec("https://api.example.org/v1") == (None, "https://api.example.org/v1", None)


@pytest.fixture
def lexical_index(tmp_path, monkeypatch, capsys):
    out = tmp_path / "idx"
    code, stdout, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", CORPUS, "--out", out,
                                "--retriever", "bm25", "--retriever", "qld", "--lang", "zh", "--no-progress",
                                "-o", "k1=1.5", "-o", "b=0.5", "-o", "mu=300", "-o", "chunk_docs=4")
    assert code == 0, err
    return out


def test_build_records_the_tuning_given_with_o(lexical_index, monkeypatch, capsys):
    code, stdout, err = run_cli(monkeypatch, capsys, "index", "info", "--index", lexical_index, "--json")
    assert code == 0, err
    info = json.loads(stdout)
    assert info["path"] == str(lexical_index)
    assert info["components"]["bm25"]["params"]["k1"] == 1.5 and info["components"]["bm25"]["params"]["b"] == 0.5
    assert info["components"]["qld"]["params"]["mu"] == 300


def test_a_misspelt_key_is_a_usage_error_and_nothing_is_built(tmp_path, monkeypatch, capsys):
    code, stdout, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", CORPUS, "--out", tmp_path / "x",
                                "-o", "chunkdocs=4", "--no-progress")
    assert code == 2 and "unknown key 'chunkdocs'" in err and "chunk_docs" in err and not (tmp_path / "x").exists()


def test_search_o_tunes_only_a_milvus_component(lexical_index, monkeypatch, capsys):
    code, _, err = run_cli(monkeypatch, capsys, "search", "--index", lexical_index, "-o", "nprobe=4", "租赁")
    assert code == 1 and "-o nprobe / ef tune a Milvus dense component" in err


def test_an_endpoint_without_its_model_name_says_how_to_give_it(lexical_index, monkeypatch, capsys):
    code, _, err = run_cli(monkeypatch, capsys, "search", "--index", lexical_index, "--agents", "--model",
                           "http://127.0.0.1:9/v1", "租赁")
    assert code == 1 and "--model http://127.0.0.1:9/v1#NAME" in err


def test_eval_retrieval_without_index_uses_the_default_index(lexical_index, tmp_path, monkeypatch, capsys):
    """No --index and no index.path setting: the default index (national law in a full install), as `search`."""
    from legalrag.wiring import Root
    from legalrag.retrieval.index import open_index

    opened = []

    def national(self, *, threads, progress):  # the national-law index stands here for the small one
        opened.append(True)
        return open_index(lexical_index)

    monkeypatch.setattr(Root, "_national_index", national)
    q = tmp_path / "q.jsonl"
    q.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in EVAL_QUERIES) + "\n", encoding="utf-8")
    code, stdout, err = run_cli(monkeypatch, capsys, "eval", "retrieval", "--queries", q, "-o", "k=5", "--json",
                                "--no-progress", "--out", tmp_path / "run")
    assert code == 0, err
    assert opened and json.loads(stdout)["n_queries"] == 3
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert str(lexical_index) in json.dumps(manifest)


def test_consultation_knobs_given_with_o_reach_the_run(tmp_path):
    """`eval consultation-generate -o ...` sets the answer engine's knobs (recorded in the run's manifest, the
    answer length reaching the model), `eval consultation-judge -o ...` the judge's."""
    from typer.testing import CliRunner

    from legalrag.cli import app
    from legalrag.corpora.statutes import load_statutes
    from legalrag.retrieval.index import build_index
    from legalrag.testing import ScriptedLLM
    from legalrag.wiring import Root

    data = Path(__file__).resolve().parents[2] / "data" / "consultation" / "turns"
    sample = Path(__file__).resolve().parents[3] / "src" / "legalrag" / "data" / "statutes_sample.jsonl"
    index = build_index(tmp_path / "index", load_statutes(sample), ["bm25"], lang="zh")
    writer = ScriptedLLM(["不能。自然人之间借款没有约定利息的，视为没有利息。"], cycle=True)
    res = CliRunner().invoke(app, ["eval", "consultation-generate", "--data", str(data), "--index", str(index.path),
                                   "--limit", "2", "-o", "setting=retriever", "--out", str(tmp_path / "gen"),
                                   "-o", "tokenizer=char", "--no-progress", "-o", "k=2", "-o", "max_tokens=64",
                                   "-o", "style=brief"], obj=Root(llm=writer))
    assert res.exit_code == 0, res.output
    params = json.loads((tmp_path / "gen" / "manifest.json").read_text(encoding="utf-8"))["parameters"]
    assert (params["k"], params["max_tokens"], params["style"]) == (2, 64, "brief")
    assert writer.requests and all(r.max_tokens == 64 for r in writer.requests)

    verdict = {"analysis": "遗漏了要点。", "factuality": 7, "user_satisfaction": 6, "clarity": 8,
               "logical_coherence": 7, "completeness": 6}
    judge = ScriptedLLM([json.dumps(verdict, ensure_ascii=False)], cycle=True)
    res = CliRunner().invoke(app, ["eval", "consultation-judge", "--generations", str(tmp_path / "gen"),
                                   "--out", str(tmp_path / "judge"), "--no-progress", "-o", "max_tokens=77",
                                   "-o", "retries=0"], obj=Root(llm=judge))
    assert res.exit_code == 0, res.output
    params = json.loads((tmp_path / "judge" / "manifest.json").read_text(encoding="utf-8"))["parameters"]
    assert (params["max_tokens"], params["retries"]) == (77, 0)
    assert judge.requests and all(r.max_tokens == 77 for r in judge.requests)
    res = CliRunner().invoke(app, ["eval", "consultation-judge", "--generations", str(tmp_path / "gen"),
                                   "--out", str(tmp_path / "j2"), "-o", "temprature=0.5"], obj=Root(llm=judge))
    assert res.exit_code == 2 and "unknown key 'temprature'" in res.output and "temperature" in res.output
