"""The warm server: `ask` and `chat` answer through a running `legalrag serve` (sources first), and answer in
their own process, saying why, when none runs, when it runs another build, when it may not open the index
asked for, and when it dies in the middle of an answer (never hanging)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.http_app import free_port, serve_app
from support.server_setup import StreamingLLM
from typer.testing import CliRunner

from legalrag.cli import app
from legalrag.retrieval.index import build_index, open_index
from legalrag.server import ServerSettings, create_app
from legalrag.testing import ScriptedLLM
from legalrag.types import Document
from legalrag.warm.client import ServerError, probe_warm_server, stream
from legalrag.wiring import Root

REPO = Path(__file__).resolve().parents[3]
DOCS = [
    Document("1", "夫妻一方要求离婚的，可以直接向人民法院提起离婚诉讼。实施家庭暴力的，调解无效，应当准予离婚。",
             "中华人民共和国民法典第一千零七十九条", metadata={"law": "中华人民共和国民法典", "article": "1079",
                                                        "article_label": "第一千零七十九条"}),
    Document("3", "盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制。", "中华人民共和国刑法第二百六十四条",
             metadata={"law": "中华人民共和国刑法", "article": "264", "article_label": "第二百六十四条"}),
]
OTHER = [Document("7", "用人单位自用工之日起即与劳动者建立劳动关系。建立劳动关系，应当订立书面劳动合同。",
                  "中华人民共和国劳动合同法第七条", metadata={"law": "中华人民共和国劳动合同法", "article": "7",
                                                          "article_label": "第七条"})]
HERE = "依据《中华人民共和国民法典》第一千零七十九条，可以起诉离婚。（本进程）"
QUESTION = "遭受家庭暴力，能离婚吗？"
LABOUR = "公司不签书面劳动合同怎么办？"


@pytest.fixture(scope="module")
def indexes(tmp_path_factory):
    base = tmp_path_factory.mktemp("warm")
    build_index(base / "a", DOCS, retrievers=["bm25"], lang="zh")
    build_index(base / "b", OTHER, retrievers=["bm25"], lang="zh")
    return base / "a", base / "b"


def ask(*args: str, question: str = QUESTION) -> tuple[int, str, ScriptedLLM]:
    """`legalrag ask QUESTION ARGS` with a scripted model for the in-process path."""
    here = ScriptedLLM([HERE])
    res = CliRunner().invoke(app, ["ask", question, *args], obj=Root(llm=here))
    return res.exit_code, res.output + (f"\n{res.exception!r}" if res.exception else ""), here


@pytest.fixture
def server(indexes, monkeypatch):
    """A legalrag server over index a (a scripted model that streams), at the serve address `ask` looks at."""
    def start(settings: ServerSettings = ServerSettings(rate_limit=0, max_indexes=1), llm=None):
        llm = llm or StreamingLLM(pieces=30, delay=0.001)
        ctx = serve_app(create_app(open_index(indexes[0]), llm, settings, open_index=open_index))
        url = ctx.__enter__()
        monkeypatch.setenv("LEGALRAG_SERVE_PORT", url.rsplit(":", 1)[1])
        started.append(ctx)
        return url, llm

    started: list = []
    yield start
    for ctx in started:
        ctx.__exit__(None, None, None)


def test_ask_answers_through_a_running_server_sources_first(server, indexes):
    url, served = server()
    code, out, here = ask("--index", str(indexes[0]))
    assert code == 0, out
    assert not here.requests and served.requests  # the server's model answered, this process loaded none
    assert f"answered by the legalrag server at {url}" in out and f"(index {indexes[0].resolve()})" in out
    sources, answer = out.index("Sources:\n  [1] 《中华人民共和国民法典》第一千零七十九条  (1)"), out.index("根据《劳动合同法》")
    assert sources < answer  # the articles before the answer
    assert "Citations checked against the corpus:" in out and "✗ NOT FOUND" in out  # the scripted reply's citations


def test_ask_answers_in_process_when_no_server_runs(monkeypatch, indexes):
    monkeypatch.setenv("LEGALRAG_SERVE_PORT", str(free_port()))
    code, out, here = ask("--index", str(indexes[0]))
    assert code == 0, out and here.requests
    assert out.index("Sources:") < out.index(HERE)
    assert re.search(r"answered by this process \(no legalrag server at http://127\.0\.0\.1:\d+; start one with "
                     r"`legalrag serve --background`\)", out)


def test_local_flag_skips_a_running_server(server, indexes):
    server()
    code, out, here = ask("--index", str(indexes[0]), "--local")
    assert code == 0 and here.requests and "answered by this process (--local)" in out


def test_whole_articles_are_answered_in_process_by_a_server_that_cuts_them(server, indexes):
    """`--evidence-tokens 0` asks for whole articles, which a request to a server with a budget cannot get: this
    process answers, saying why, and its prompt holds the whole article."""
    url, served = server()
    code, out, here = ask("--index", str(indexes[0]), "--evidence-tokens", "0")
    assert code == 0, out
    assert here.requests and not served.requests
    assert f"--evidence-tokens 0 (whole articles): the server at {url} cuts articles to" in out
    assert DOCS[0].text in here.requests[0].messages[-1]["content"]


def test_another_index_is_opened_by_the_server_when_allowed(server, indexes):
    url, served = server()
    code, out, here = ask("--index", str(indexes[1]), question=LABOUR)
    assert code == 0, out
    assert not here.requests and f"opened the index {indexes[1].resolve()} for this request" in out
    assert "劳动合同法》第七条  (7)" in out  # retrieved from the other index
    assert str(indexes[1].resolve()) in probe_warm_server(url).indexes  # kept for the next request
    code, out, _ = ask("--index", str(indexes[1]), question=LABOUR)
    assert code == 0 and f"(index {indexes[1].resolve()})" in out and "opened" not in out


def test_another_index_is_answered_in_process_when_the_server_may_not_open_it(server, indexes):
    server(ServerSettings(rate_limit=0, max_indexes=0))
    code, out, here = ask("--index", str(indexes[1]), question=LABOUR)
    assert code == 0, out
    assert here.requests and "劳动合同法》第七条  (7)" in out
    assert f"may not open {indexes[1].resolve()} (the serve.max_indexes setting of `legalrag serve`)" in out


def test_a_server_of_another_build_is_stale_and_not_used(server, indexes, monkeypatch):
    url, served = server()
    import legalrag.warm.build as build

    monkeypatch.setattr(build, "build_id", lambda: "0.1.0+newer")  # this client is newer than the server
    code, out, here = ask("--index", str(indexes[0]))
    assert code == 0, out
    assert here.requests and not served.requests
    assert f"the server at {url} runs another legalrag build" in out and "it is stale and was not used" in out
    assert "legalrag serve --stop" in out


def occupy(url: str) -> None:
    """Another client's question, holding the server's model (sent from a thread: CliRunner swaps sys.stdout,
    so two CLI runs at once would share it)."""
    try:
        stream(url, "/ask/stream", {"question": QUESTION}, lambda name, data: None)
    except ServerError:
        pass


def test_a_busy_server_queues_the_request_and_shows_the_wait(server, indexes):
    url, served = server(llm=StreamingLLM(pieces=60, delay=0.02))
    first = threading.Thread(target=occupy, args=(url,))
    first.start()
    for _ in range(200):  # until the first request holds the model
        if probe_warm_server(url).busy.get("active"):
            break
        time.sleep(0.01)
    code, out, here = ask("--index", str(indexes[0]))
    first.join()
    assert code == 0, out
    assert "[the server is busy: waiting in its queue, position 1]" in out and re.search(r"\[waited \d+\.\d s", out)
    assert not here.requests and len(served.requests) == 2


def test_a_full_server_is_answered_in_process(server, indexes):
    url, _ = server(ServerSettings(rate_limit=0, max_waiting=0), llm=StreamingLLM(pieces=200, delay=0.02))
    first = threading.Thread(target=occupy, args=(url,))
    first.start()
    for _ in range(200):
        if probe_warm_server(url).busy.get("active"):
            break
        time.sleep(0.01)
    code, out, here = ask("--index", str(indexes[0]))
    first.join()
    assert code == 0 and here.requests
    assert "the language model is busy" in out and "answering in this process instead of waiting" in out


SERVER = """
from support.server_setup import StreamingLLM
from legalrag.cli import app
from legalrag.wiring import Root
app(["serve", "--index", {index!r}, "--port", "{port}", "-o", "rate_limit=0"],
    obj=Root(llm=StreamingLLM(pieces=600, delay=0.05)))
"""


def test_a_server_that_dies_mid_answer_is_finished_in_process(indexes, monkeypatch):
    """A real `legalrag serve` process (its model injected through the composition root) killed while it
    streams: the CLI says so and answers in this process, within seconds, never hanging."""
    port = free_port()
    code = SERVER.format(index=str(indexes[0]), port=port)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO / "tests")])}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            if probe_warm_server(url) is not None or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert probe_warm_server(url) is not None, "the server process did not come up"
        monkeypatch.setenv("LEGALRAG_SERVE_PORT", str(port))

        def kill_when_streaming() -> None:
            for _ in range(300):
                info = probe_warm_server(url)
                if info is not None and info.busy.get("active"):
                    time.sleep(3.0)  # part of the answer is out (a piece every 0.05 s), most of it is not
                    os.killpg(proc.pid, signal.SIGKILL)
                    return
                time.sleep(0.05)

        killer = threading.Thread(target=kill_when_streaming)
        killer.start()
        t0 = time.monotonic()
        code, out, here = ask("--index", str(indexes[0]))
        killer.join()
        assert code == 0, out
        assert time.monotonic() - t0 < 20
        assert "the server stopped in the middle of the answer" in out and "answering again in this process" in out
        assert here.requests and out.index("answering again") < out.index(HERE)
        assert "answered by this process (the server stopped in the middle of the answer" in out
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def test_chat_sends_the_dialogue_to_the_server_each_turn(server, indexes):
    url, served = server()
    res = CliRunner().invoke(app, ["chat", "--index", str(indexes[0]), "--processor", "last"],
                             input=f"{QUESTION}\n那离婚以后孩子归谁？\n/exit\n", obj=Root(llm=ScriptedLLM([HERE])))
    assert res.exit_code == 0, res.output
    assert res.output.count(f"answered by the legalrag server at {url}") == 2 and len(served.requests) == 2
    second = "\n".join(m["content"] for m in served.requests[1].messages)
    assert QUESTION in second  # the first turn went with the second as history


def test_the_ask_client_path_imports_no_retrieval_stack(server, indexes):
    """A fresh `python -m legalrag ask` through a server: what it imports (python -X importtime)."""
    url, _ = server()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "LEGALRAG_SERVE_PORT": url.rsplit(":", 1)[1]}
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "legalrag", "ask", QUESTION, "--index",
                          str(indexes[0])], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "answered by the legalrag server" in out.stdout
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    heavy = sorted(m for m in imported if m.split(".")[0] in ("numpy", "httpx", "fastapi", "rich", "xllamacpp")
                   or m.startswith(("legalrag.retrieval", "legalrag.answer.engine", "legalrag.agents", "legalrag.server")))
    assert not heavy, f"the client path imports {heavy}"


def test_the_vector_cache_serves_every_request_thread(tmp_path):
    """A server opens its encoder's vector cache at start-up and reads it from each request's thread."""
    import numpy as np

    from legalrag.retrieval.vector_cache import VectorCache

    cache = VectorCache("model", 2, tmp_path)
    cache.put("query", ["a"], np.ones((1, 2), dtype=np.float32))
    found: list = []
    reader = threading.Thread(target=lambda: found.append(cache.get("query", ["a", "b"])))
    reader.start()
    reader.join()
    assert list(found[0]) == ["a"] and found[0]["a"].tolist() == [1.0, 1.0]
