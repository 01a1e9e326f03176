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

[profiles.fast.runtime]
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
    base = load_settings(config, profile=None, env={"LEGALRAG_PROFILE": "fast"})
    assert base.profile == "fast"
    assert base.llm.model == "qwen2.5-coder-0.5b" and base.origin["llm.model"] == "file"
    assert base.threads == 5 and base.origin["runtime.threads"] == "profile fast"  # profile over file
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
    from legalrag.wiring import read_corpus

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "big.txt").write_text("劳动合同条款。" * 600, encoding="utf-8")  # 12.6 KB
    small = load_settings(env={"LEGALRAG_CONFIG": str(tmp_path / "none.toml"), "LEGALRAG_MAX_FILE_MB": "0.01"})
    assert small.max_file_mb == 0.01
    with pytest.raises(InputError, match="documents.max_file_mb") as err:
        docs, _ = read_corpus(folder, settings=small)
        list(docs)
    assert "big.txt" in str(err.value), f"the refusal does not name the file: {err.value}"
    default = load_settings(env={"LEGALRAG_CONFIG": str(tmp_path / "none.toml")})
    docs, _ = read_corpus(folder, settings=default)
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
    with pytest.raises(InputError, match="unknown profile 'gpu'.*fast, remote"):
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
