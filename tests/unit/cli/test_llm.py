"""`legalrag llm info | cache-clear | serve` through the CLI runner."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from legalrag.cli.apps import app
from legalrag.llm.base import ChatRequest, ChatResult
from legalrag.llm.cache import CachedLLM

runner = CliRunner()


class Echo:
    """A trivial backend so the cache has something to store (the cache itself is what is exercised)."""

    model_id = "echo"
    backend = "echo"

    def chat(self, request: ChatRequest) -> ChatResult:
        return ChatResult(text=request.messages[-1]["content"], prompt_tokens=1, completion_tokens=1)


def test_info_and_cache_clear(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGALRAG_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("COLUMNS", "250")
    db = tmp_path / "c.sqlite"
    llm = CachedLLM(Echo(), db)
    llm.chat(ChatRequest(messages=({"role": "user", "content": "a"},)))
    llm.chat(ChatRequest(messages=({"role": "user", "content": "a"},)))
    llm.close()
    res = runner.invoke(app, ["llm", "info", "--json"], env={"LEGALRAG_LLM_CACHE": str(db)})
    assert res.exit_code == 0, res.output
    info = json.loads(res.output)
    assert {m["name"] for m in info["models"]} == {"qwen2.5-1.5b", "qwen2.5-0.5b"}
    assert all(not m["assembled"] for m in info["models"])  # nothing assembled in the fresh models dir
    assert info["call_cache"]["entries"] == 1 and info["call_cache"]["models"][0]["hits"] == 1
    res = runner.invoke(app, ["llm", "info"], env={"LEGALRAG_LLM_CACHE": str(db)})
    assert res.exit_code == 0 and "qwen2.5-0.5b" in res.output and "1 entries, 1 hits" in res.output
    res = runner.invoke(app, ["llm", "cache-clear"], env={"LEGALRAG_LLM_CACHE": str(db)})
    assert res.exit_code == 0 and "deleted 1" in res.output


def test_serve_refuses_public_host_without_key():
    from legalrag.cli import main  # noqa: F401  (registers all command modules)

    res = runner.invoke(app, ["llm", "serve", "--model", "qwen2.5-0.5b"], env={"LEGALRAG_LLM_SERVER": "0.0.0.0:8000"})
    assert res.exit_code != 0 and "without an API key" in str(res.exception)
