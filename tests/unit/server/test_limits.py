"""The server's limits come from the settings file (`legalrag config set serve.max_k 5`), a `serve` flag
overrides one, and a saved value out of range is an error naming the setting; the app built from them enforces
them (k, body size, rate), and `/capabilities` says them and chat's default processor."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from legalrag.answer.processors import DEFAULT_PROCESSOR  # noqa: E402
from legalrag.cli import app  # noqa: E402
from legalrag.cli.serve import server_settings  # noqa: E402
from legalrag.errors import InputError  # noqa: E402
from legalrag.retrieval.index import build_index, open_index  # noqa: E402
from legalrag.server import create_app  # noqa: E402
from legalrag.settings import load_settings  # noqa: E402
from legalrag.types import Document  # noqa: E402

DOCS = [Document("1", "盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制。", "中华人民共和国刑法第二百六十四条",
                 metadata={"law": "中华人民共和国刑法", "article": "264", "article_label": "第二百六十四条"})]
NO_FLAGS = {"max_k": None, "rate_limit": None, "max_waiting": None, "max_indexes": None}


def saved(tmp_path, **values) -> object:
    config = tmp_path / "config.toml"
    for key, value in values.items():
        res = CliRunner().invoke(app, ["--config", str(config), "config", "set", f"serve.{key}", str(value)])
        assert res.exit_code == 0, res.output
    return load_settings(config, env={})


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    path = tmp_path_factory.mktemp("limits") / "idx"
    build_index(path, DOCS, retrievers=["bm25"], lang="zh")
    return open_index(path)


def test_saved_limits_are_the_servers_and_a_flag_overrides_one(tmp_path, index):
    s = saved(tmp_path, max_k=5, max_waiting=3, max_body_kb=2, rate_limit=0, max_indexes=1)
    settings = server_settings(s, host="127.0.0.1", **NO_FLAGS)
    assert (settings.max_k, settings.max_waiting, settings.max_body_bytes, settings.rate_limit,
            settings.max_indexes) == (5, 3, 2048, 0, 1)
    client = TestClient(create_app(index, None, settings))
    caps = client.get("/capabilities").json()
    assert caps["max_k"] == 5 and caps["default_processor"] == DEFAULT_PROCESSOR in caps["processors"]
    assert client.post("/search", json={"query": "盗窃", "k": 5}).status_code == 200
    r = client.post("/search", json={"query": "盗窃", "k": 6})
    assert r.status_code == 400 and "limit of 5" in r.json()["error"]["message"]
    r = client.post("/citations/check", json={"text": "盗窃" * 2000})  # 12 kB of UTF-8 over a 2 KiB limit
    assert r.status_code == 413 and r.json()["error"]["params"]["limit"] == 2048
    flagged = server_settings(s, host="127.0.0.1", **{**NO_FLAGS, "max_k": 8, "rate_limit": 1})
    assert (flagged.max_k, flagged.rate_limit, flagged.max_waiting) == (8, 1, 3)
    limited = TestClient(create_app(index, None, flagged))
    assert limited.post("/search", json={"query": "盗窃", "k": 1}).status_code == 200
    assert limited.post("/search", json={"query": "盗窃", "k": 1}).status_code == 429


def test_defaults_without_a_settings_file_and_the_environment_over_the_file(tmp_path):
    empty = load_settings(env={"LEGALRAG_CONFIG": str(tmp_path / "none.toml")})
    settings = server_settings(empty, host="0.0.0.0", **NO_FLAGS)
    assert (settings.max_k, settings.rate_limit, settings.max_waiting, settings.max_body_bytes) == \
        (50, 120, 16, 256 * 1024)
    assert settings.max_indexes == 0  # another address than loopback: requests may not open other indexes
    assert server_settings(empty, host="127.0.0.1", **NO_FLAGS).max_indexes == 2
    saved(tmp_path, max_k=5)
    env = load_settings(tmp_path / "config.toml", env={"LEGALRAG_SERVE_MAX_K": "7"})
    assert server_settings(env, host="127.0.0.1", **NO_FLAGS).max_k == 7


def test_a_saved_limit_out_of_range_names_the_setting(tmp_path):
    s = saved(tmp_path, max_k=5000)
    with pytest.raises(InputError, match=r"serve\.max_k setting: .*1000.*legalrag config set serve\.max_k"):
        server_settings(s, host="127.0.0.1", **NO_FLAGS)
    res = CliRunner().invoke(app, ["--config", str(tmp_path / "config.toml"), "config", "set", "--",
                                   "serve.rate_limit", "-1"])
    assert res.exit_code != 0 and "serve.rate_limit must be at least 0" in str(res.exception or res.output)
