"""Saved settings: precedence (default < file < profile < environment < flag), clear errors for bad files,
`legalrag config show | set | unset | path`, and the values reaching the objects wiring builds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from legalrag.cli.apps import app
from legalrag.errors import InputError
from legalrag.settings import ServerAddress, load_settings
from legalrag.wiring import Root, make_encoder, make_llm

FILE = """\
profile = "remote"

[llm]
model = "qwen2.5-coder-0.5b"
endpoint_model = "file-model"

[runtime]
threads = 3

[index]
path = "~/indexes/stard"

[profiles.remote.llm]
endpoint = "http://127.0.0.1:9/v1"
endpoint_model = "profile-model"

[profiles.quick.runtime]
threads = 5
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    p = tmp_path / "config.toml"
    p.write_text(FILE, encoding="utf-8")
    return p


def test_defaults_without_a_file(tmp_path):
    s = load_settings(env={"LEGALRAG_CONFIG": str(tmp_path / "none.toml"), "HOME": str(tmp_path)})
    assert s.llm.model is None and s.llm.endpoint is None and s.index is None
    assert s.llm.server == ServerAddress("127.0.0.1", 8000)
    assert s.llm.server.url == "http://127.0.0.1:8000/v1"
    assert s.llm_cache == s.home / "llm-cache.sqlite" and s.models_dir == s.home / "models"
    assert set(s.origin.values()) == {"default"}


def test_precedence_file_profile_env(config):
    base = load_settings(config, profile=None, env={"LEGALRAG_PROFILE": "quick"})
    assert base.profile == "quick"
    assert base.llm.model == "qwen2.5-coder-0.5b" and base.origin["llm.model"] == "file"
    assert base.threads == 5 and base.origin["runtime.threads"] == "profile quick"  # profile over file
    assert base.llm.endpoint is None  # the file's default profile is not active

    default = load_settings(config, env={})  # the file's `profile = "remote"`
    assert default.profile == "remote" and default.llm.endpoint == "http://127.0.0.1:9/v1"
    assert default.llm.endpoint_model == "profile-model" and default.threads == 3
    assert default.index == Path("~/indexes/stard").expanduser()

    env = load_settings(config, profile="remote", env={"LEGALRAG_ENDPOINT_MODEL": "env-model", "LEGALRAG_THREADS": "7",
                                                        "LEGALRAG_LLM_SERVER": "http://localhost:8765/v1"})
    assert env.llm.endpoint_model == "env-model" and env.origin["llm.endpoint_model"] == "$LEGALRAG_ENDPOINT_MODEL"
    assert env.threads == 7 and env.llm.server == ServerAddress("localhost", 8765)


def test_flags_win_over_settings(config):
    s = load_settings(config, profile="remote", env={"LEGALRAG_ENDPOINT_MODEL": "env-model"})
    saved = make_llm(cache=False, settings=s)  # nothing given: the saved endpoint
    assert saved.backend == "openai" and saved.model == "env-model" and saved.base_url.startswith("http://127.0.0.1:9")
    flag = make_llm(endpoint="http://127.0.0.1:10/v1", endpoint_model="flag-model", cache=False, settings=s)
    assert flag.model == "flag-model" and flag.base_url.startswith("http://127.0.0.1:10")
    embedded = make_llm("qwen2.5-coder-0.5b", cache=False, settings=s)  # --model overrides a saved endpoint
    assert embedded.backend == "embedded" and embedded.model_id == "qwen2.5-0.5b" and embedded.n_threads == 3
    assert make_llm("qwen2.5-0.5b", cache=False, threads=1, settings=s).n_threads == 1  # the old id still works


def test_settings_reach_caches_and_encoders(tmp_path):
    s = load_settings(env={"LEGALRAG_CONFIG": str(tmp_path / "none.toml"), "LEGALRAG_HOME": str(tmp_path / "home"),
                           "LEGALRAG_EMBEDDINGS_BASE_URL": "http://127.0.0.1:11/v1"})
    llm = make_llm("qwen2.5-coder-0.5b", settings=s)
    assert Path(llm._path) == tmp_path / "home" / "llm-cache.sqlite"
    enc = make_encoder("openai:emb", settings=s)
    assert enc.base_url.startswith("http://127.0.0.1:11")
    assert Path(enc._cache_opt) == tmp_path / "home" / "vectors"


def test_the_largest_document_size_setting_reaches_the_corpus_reader(tmp_path):
    """``documents.max_file_mb`` read by the composition root's ``read_corpus``: a 12 KiB file is refused under a
    0.01 MiB setting, naming the file and the setting, and read under the default."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "big.txt").write_text("劳动合同条款。" * 600, encoding="utf-8")  # 12.6 KB
    small = load_settings(env={"LEGALRAG_CONFIG": str(tmp_path / "none.toml"), "LEGALRAG_MAX_FILE_MB": "0.01"})
    assert small.max_file_mb == 0.01
    with pytest.raises(InputError, match="documents.max_file_mb") as err:
        docs, _ = Root(settings=small).read_corpus(folder)
        list(docs)
    assert "big.txt" in str(err.value), f"the refusal does not name the file: {err.value}"
    default = load_settings(env={"LEGALRAG_CONFIG": str(tmp_path / "none.toml")})
    docs, _ = Root(settings=default).read_corpus(folder)
    assert sum(len(d.text) for d in docs) >= 4200, "the default limit (100 MiB) reads the whole file"


def test_root_needs_an_index_or_a_saved_one(tmp_path):
    root = Root(settings=load_settings(env={"LEGALRAG_CONFIG": str(tmp_path / "none.toml")}))
    with pytest.raises(InputError, match="legalrag config set index.path"):
        root.index_path(None)
    assert root.index_path(tmp_path) == tmp_path


def test_bad_toml_names_file_and_line(tmp_path):
    p = tmp_path / "config.toml"
    p.write_text('[llm]\nmodel = "x"\nendpoint = \n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_settings(p, env={})
    assert f"{p}:3:" in str(err.value) and "not valid TOML" in str(err.value)


@pytest.mark.parametrize("body, line, words", [
    ('[llm]\nmodel = "x"\nmodle = "y"\n', 3, "unknown setting llm.modle"),
    ('[llm]\nmodel = "x"\n\n[runtime]\nthreads = "two"\n', 5, "runtime.threads must be an integer"),
    ('[gpu]\nx = 1\n', 1, "unknown setting 'gpu'"),
    ('[profiles.a.llm]\nserver = "no-port"\n', 2, "HOST:PORT"),
])
def test_bad_values_name_file_line_and_key(tmp_path, body, line, words):
    p = tmp_path / "config.toml"
    p.write_text(body, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_settings(p, profile="a" if "profiles" in body else None, env={})
    assert f"{p}:{line}:" in str(err.value) and words in str(err.value)


def test_bad_environment_and_unknown_profile(config):
    with pytest.raises(InputError, match=r"\$LEGALRAG_THREADS: runtime.threads must be an integer"):
        load_settings(config, env={"LEGALRAG_THREADS": "many"})
    with pytest.raises(InputError, match="unknown profile 'gpu'.*fast, quick, remote"):
        load_settings(config, profile="gpu", env={})
    with pytest.raises(InputError, match="settings file not found"):
        load_settings(config.parent / "missing.toml", env={})


def test_config_cli_set_show_unset_path(tmp_path, monkeypatch):
    p = tmp_path / "conf" / "config.toml"
    monkeypatch.setenv("LEGALRAG_CONFIG", str(p))
    monkeypatch.delenv("LEGALRAG_THREADS", raising=False)
    run = CliRunner().invoke
    assert run(app, ["config", "path"]).output.strip() == str(p)
    res = run(app, ["config", "set", "llm.endpoint", "http://127.0.0.1:9/v1"])
    assert res.exit_code == 0, res.output
    assert run(app, ["config", "set", "runtime.threads", "4", "--profile", "small"]).exit_code == 0
    bad = run(app, ["config", "set", "runtime.threads", "four"])
    assert bad.exit_code != 0 and "must be an integer" in str(bad.exception)
    assert p.read_text(encoding="utf-8").count("threads") == 1  # the bad value was not written
    shown = json.loads(run(app, ["--profile", "small", "config", "show", "--json"]).output)
    values = {r["key"]: (r["value"], r["from"]) for r in shown["settings"]}
    assert shown["file"] == str(p) and shown["profile"] == "small"
    assert values["llm.endpoint"] == ("http://127.0.0.1:9/v1", "file")
    assert values["runtime.threads"] == (4, "profile small")
    monkeypatch.setenv("LEGALRAG_THREADS", "6")
    again = json.loads(run(app, ["--profile", "small", "config", "show", "--json"]).output)
    assert {r["key"]: r["from"] for r in again["settings"]}["runtime.threads"] == "$LEGALRAG_THREADS"
    assert run(app, ["config", "unset", "llm.endpoint"]).exit_code == 0
    assert "endpoint" not in p.read_text(encoding="utf-8")


def test_global_config_flag_reaches_commands(tmp_path):
    p = tmp_path / "other.toml"
    p.write_text('[llm]\nserver = "127.0.0.1:8765"\n', encoding="utf-8")
    res = CliRunner().invoke(app, ["--config", str(p), "config", "show", "--json"])
    rows = {r["key"]: r["value"] for r in json.loads(res.output)["settings"]}
    assert rows["llm.server"] == "127.0.0.1:8765"
    broken = tmp_path / "broken.toml"
    broken.write_text("[llm\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["--config", str(broken), "config", "show"])
    assert res.exit_code != 0 and f"{broken}:1:" in str(res.exception)


def test_a_relative_index_path_set_in_one_directory_works_from_another(tmp_path, monkeypatch):
    p = tmp_path / "config.toml"
    monkeypatch.setenv("LEGALRAG_CONFIG", str(p))
    monkeypatch.delenv("LEGALRAG_INDEX", raising=False)
    (tmp_path / "a" / "idx" / "mine").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    res = CliRunner().invoke(app, ["config", "set", "index.path", "idx/mine"])
    assert res.exit_code == 0, res.output
    monkeypatch.chdir(tmp_path / "b")
    assert Root().index_path(None) == tmp_path / "a" / "idx" / "mine"
    got = CliRunner().invoke(app, ["config", "get", "index.path"])
    assert got.exit_code == 0 and got.output.strip() == str(tmp_path / "a" / "idx" / "mine")
    # a name that is not a path (a bundled model) is stored as written
    assert CliRunner().invoke(app, ["config", "set", "llm.model", "qwen2.5-coder-0.5b"]).exit_code == 0
    assert load_settings(env={"LEGALRAG_CONFIG": str(p)}).llm.model == "qwen2.5-coder-0.5b"


def test_a_relative_path_written_by_hand_is_relative_to_the_file(tmp_path, monkeypatch):
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "config.toml").write_text('[index]\npath = "./idx"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert load_settings(conf / "config.toml", env={}).index == conf / "idx"


def test_config_set_keeps_comments_and_order(tmp_path):
    p = tmp_path / "config.toml"
    p.write_text('# my settings\nprofile = "remote"\n\n[llm]\n# the small one is enough here\nmodel = '
                 '"qwen2.5-coder-0.5b"  # fast\n\n[profiles.remote.llm]\nendpoint = "http://127.0.0.1:9/v1"\n',
                 encoding="utf-8")
    run = CliRunner().invoke
    assert run(app, ["--config", str(p), "config", "set", "runtime.threads", "2"]).exit_code == 0
    assert run(app, ["--config", str(p), "config", "set", "--profile", "remote", "llm.endpoint_model",
                     "qwen"]).exit_code == 0
    assert run(app, ["--config", str(p), "config", "unset", "llm.model"]).exit_code == 0
    text = p.read_text(encoding="utf-8")
    for kept in ("# my settings", "# the small one is enough here"):
        assert kept in text
    assert text.index("profile =") < text.index("[llm]") < text.index("[profiles.remote.llm]")
    s = load_settings(p, env={})
    assert s.threads == 2 and s.llm.endpoint_model == "qwen" and s.llm.model is None


def test_the_built_in_fast_profile_sets_the_small_model_and_budget_and_a_file_can_override_it(tmp_path):
    from legalrag.settings import BUILTIN_PROFILES

    fast = BUILTIN_PROFILES["fast"]
    s = load_settings(profile="fast", env={"LEGALRAG_CONFIG": str(tmp_path / "none.toml")})  # no settings file
    assert s.llm.model == fast["llm"]["model"] and s.origin["llm.model"] == "profile fast"
    assert (s.answer.k, s.answer.evidence_tokens) == (fast["answer"]["k"], fast["answer"]["evidence_tokens"])
    assert Root(settings=s).answer_settings().evidence_tokens == fast["answer"]["evidence_tokens"]
    p = tmp_path / "config.toml"
    p.write_text('[profiles.fast.answer]\nk = 9\n', encoding="utf-8")
    s = load_settings(p, profile="fast", env={})
    assert s.answer.k == 9 and s.answer.evidence_tokens == fast["answer"]["evidence_tokens"]  # key by key
    assert load_settings(p, env={}).answer.k is None  # not active unless chosen


def test_config_profiles_and_get(config):
    run = CliRunner().invoke
    out = run(app, ["--config", str(config), "config", "profiles"]).output.split("\n")
    assert "* remote" in out and "  quick" in out and "  fast (built in)" in out
    got = json.loads(run(app, ["--config", str(config), "config", "get", "llm.endpoint", "--json"]).output)
    assert got == {"key": "llm.endpoint", "value": "http://127.0.0.1:9/v1", "from": "profile remote"}
    bad = run(app, ["--config", str(config), "config", "get", "llm.nope"])
    assert bad.exit_code != 0 and "unknown setting" in str(bad.exception)


def test_answer_and_judgment_keys_come_from_file_and_old_variables(tmp_path):
    p = tmp_path / "config.toml"
    p.write_text('[answer]\nk = 3\nevidence_tokens = 0\nstyle = "brief"\nmax_tokens = 200\n', encoding="utf-8")
    law = tmp_path / "law.jsonl"
    s = load_settings(p, env={"LEGALRAG_LAW_CORPUS": str(law), "LEGALRAG_JUDGMENT_MODEL": "judge-structure"})
    assert s.law_corpus == law and s.origin["judgment.law_corpus"] == "$LEGALRAG_LAW_CORPUS"
    assert s.judgment_model == "judge-structure"
    engine = Root(settings=s).answer_settings()
    assert (engine.k, engine.evidence_tokens, engine.style, engine.max_tokens) == (3, None, "brief", 200)
    flags = Root(settings=s).answer_settings(k=8, evidence_tokens=250, style="guided")
    assert (flags.k, flags.evidence_tokens, flags.style, flags.max_tokens) == (8, 250, "guided", 200)
    p.write_text('[answer]\nstyle = "long"\n', encoding="utf-8")
    with pytest.raises(InputError, match="answer.style must be one of guided, brief"):
        load_settings(p, env={})
    shown = CliRunner().invoke(app, ["config", "show", "--json"],
                               env={"LEGALRAG_LAW_CORPUS": str(law), "LEGALRAG_CONFIG": str(tmp_path / "none.toml")})
    rows = {r["key"]: r for r in json.loads(shown.output)["settings"]}
    assert {"answer.k", "answer.evidence_tokens", "answer.style", "answer.max_tokens", "judgment.model"} <= set(rows)
    assert rows["judgment.law_corpus"]["from"] == "$LEGALRAG_LAW_CORPUS"


def test_a_saved_model_is_used_while_a_model_server_runs(tmp_path):
    """A model server serving another model does not answer for the saved `llm.model`; one serving it does."""
    from support.http_app import serve_app

    from legalrag.llm.serve import create_llm_app
    from legalrag.testing import ScriptedLLM

    with serve_app(create_llm_app(ScriptedLLM(["x"]), model_name="qwen2.5-1.5b")) as url:
        p = tmp_path / "config.toml"
        p.write_text(f'[llm]\nmodel = "qwen2.5-coder-0.5b"\nserver = "{url}"\n', encoding="utf-8")
        llm = Root(config=p).make_answer_llm()
        assert llm.model_id == "qwen2.5-0.5b" and llm.route == "in-process"
        assert "serves qwen2.5-1.5b, not qwen2.5-coder-0.5b" in llm.fallback_note
        p.write_text(f'[llm]\nmodel = "qwen2.5-coder-1.5b"\nserver = "{url}"\n', encoding="utf-8")
        same = Root(config=p).make_answer_llm()
        assert same.route.startswith("server") and same.model_id == "qwen2.5-1.5b"
