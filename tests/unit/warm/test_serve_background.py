"""`legalrag serve --background | --status | --stop` through the CLI: a real server process started detached
(search only, over a small index), found by `ask`'s probe and `--status`, and stopped, with the shared daemon's
pid file and log in the home folder; the limits given as flags go to the server it starts."""

from __future__ import annotations

import json

from support.http_app import free_port
from typer.testing import CliRunner

from legalrag.cli import app
from legalrag.retrieval.index import build_index
from legalrag.types import Document
from legalrag.warm.client import probe_warm_server

DOCS = [Document("3", "盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制。", "中华人民共和国刑法第二百六十四条",
                 metadata={"law": "中华人民共和国刑法", "article": "264", "article_label": "第二百六十四条"})]


def test_background_status_stop(tmp_path, monkeypatch):
    build_index(tmp_path / "idx", DOCS, retrievers=["bm25"], lang="zh")
    port = free_port()
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LEGALRAG_SERVE_PORT", str(port))
    url = f"http://127.0.0.1:{port}"
    runner = CliRunner()
    try:
        res = runner.invoke(app, ["serve", "--background", "--index", str(tmp_path / "idx"), "--no-llm",
                                  "-o", "rate_limit=0", "-o", "max_k=7"])
        assert res.exit_code == 0, res.output + repr(res.exception)
        assert f"running at {url}" in res.output and "`legalrag serve --stop` ends it" in res.output
        state = json.loads((tmp_path / "home" / "serve.json").read_text())
        cmd = state["cmd"]  # the command line the server was started with
        assert cmd[cmd.index("rate_limit=0") - 1] == "-o" and cmd[cmd.index("max_k=7") - 1] == "-o"
        server = probe_warm_server(url)
        assert server is not None and server.index == str((tmp_path / "idx").resolve()) and server.llm is None
        res = runner.invoke(app, ["serve", "--status"])
        # found, with its build: current, or stale when a source file changed since the server started
        assert res.exit_code == 0 and (f"up at {url}" in res.output or f"STALE: the server at {url}" in res.output)
        res = runner.invoke(app, ["serve", "--background", "--index", str(tmp_path / "idx"), "--no-llm"])
        assert res.exit_code == 0 and f"already running at {url}" in res.output
    finally:
        res = runner.invoke(app, ["serve", "--stop"])
    assert res.exit_code == 0 and f"stopped the server (pid {state['pid']})" in res.output, res.output
    assert probe_warm_server(url) is None and not (tmp_path / "home" / "serve.json").exists()
    res = runner.invoke(app, ["serve", "--status"])
    assert f"no legalrag server at {url}" in res.output
