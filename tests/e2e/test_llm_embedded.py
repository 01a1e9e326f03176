"""The embedded backend against the real 0.5B model (small max_tokens: CI has 2 cores)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from legalrag.errors import InputError, ModelError
from legalrag.llm.base import LLM, ChatRequest, PromptTooLongError
from legalrag.llm.embedded import EmbeddedLLM

pytestmark = pytest.mark.llm


def _tcp_listen_inodes() -> set[str]:
    inodes = set()
    for name in ("tcp", "tcp6"):
        path = Path("/proc/net") / name
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A":  # LISTEN
                inodes.add(cols[9])
    return inodes


def test_constructor_is_cheap_and_checks_paths(tmp_path):
    llm = EmbeddedLLM("qwen2.5-0.5b")
    assert not llm.loaded and llm.model_id == "qwen2.5-0.5b"
    assert isinstance(llm, LLM)
    with pytest.raises(ModelError, match="not found"):
        EmbeddedLLM(str(tmp_path / "nope.gguf"))
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ModelError, match="not a GGUF"):
        EmbeddedLLM(str(bad))
    with pytest.raises(InputError):
        EmbeddedLLM("qwen2.5-0.5b", n_ctx=8)


def test_chat_usage_logprobs_and_stop(small_llm):
    r = small_llm.chat(ChatRequest(messages=({"role": "user", "content": "Count from 1 to 9, separated by commas."},),
                                   max_tokens=12, logprobs=True, top_logprobs=3, stop=("3",)))
    assert "1" in r.text and "3" not in r.text and r.finish_reason == "stop"
    assert r.prompt_tokens > 5 and 0 < r.completion_tokens <= 12 and r.seconds > 0
    assert 0 < len(r.logprobs) <= r.completion_tokens  # the stop string is counted but not returned
    first = r.first_token_top()
    assert 1 <= len(first) <= 3 and all(lp <= 0 for lp in first.values())
    assert r.logprobs[0].token in first


def test_json_schema_constrains_reply(small_llm):
    schema = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
              "required": ["answer"], "additionalProperties": False}
    r = small_llm.chat(ChatRequest(messages=({"role": "user", "content": "Is Paris in France? Reply in JSON."},),
                                   max_tokens=16, json_schema=schema))
    assert json.loads(r.text)["answer"] in ("yes", "no")


def test_prompt_too_long_fails_before_generation(small_llm):
    long = "法律" * 5000
    with pytest.raises(PromptTooLongError, match="context window of 4096"):
        small_llm.chat(ChatRequest(messages=({"role": "user", "content": long},), max_tokens=4))
    n = small_llm.count_tokens([{"role": "user", "content": "hello"}])
    assert 3 < n < 60  # Qwen's template adds a default system prompt


def test_no_tcp_listener(small_llm):
    """xllamacpp's HTTP side must not listen on a TCP port: it is bound to a private Unix socket."""
    assert small_llm.listening_address.startswith("unix://")
    sock = small_llm.listening_address[len("unix://"):]
    assert oct(os.stat(os.path.dirname(sock)).st_mode & 0o777) == "0o700"
    own = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            own.add(target[8:-1])
    assert not (own & _tcp_listen_inodes())


def test_bad_schema_is_a_clear_error(small_llm):
    with pytest.raises(InputError, match="json_schema"):
        small_llm.chat(ChatRequest(messages=({"role": "user", "content": "hi"},), max_tokens=2,
                                   json_schema={"type": "bogus"}))


def test_process_exits_without_close():
    """Closing a just-loaded, never used model, and exiting with one still loaded, must not hang (an
    xllamacpp Server destroyed before its task loop started used to block forever)."""
    import subprocess
    import sys

    from legalrag.llm.models import parts_installed

    if not parts_installed("qwen2.5-0.5b"):
        pytest.skip("pip install 'legalrag[model-small]'")
    code = ("from legalrag.llm.embedded import EmbeddedLLM\n"
            "for _ in range(1):\n"
            "    EmbeddedLLM('qwen2.5-0.5b', n_ctx=4096, n_threads=1).load().close()\n"
            "llm = EmbeddedLLM('qwen2.5-0.5b', n_ctx=4096, n_threads=1).load()\n"
            "raise SystemExit(3)\n")
    src = str(Path(__file__).resolve().parents[2] / "src")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": src}, timeout=120)
    assert proc.returncode == 3
