"""Streaming over a real uvicorn server on 127.0.0.1: a client that goes away stops the generation, requests
queue for the model (and say how long they waited), and a full queue is refused with Retry-After."""

from __future__ import annotations

import json
import threading
import time

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")

from support.http_app import serve_app  # noqa: E402
from legalrag.server import ServerSettings, create_app  # noqa: E402
from support.server_setup import StreamingLLM, sample_index  # noqa: E402


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return sample_index(tmp_path_factory.mktemp("stream") / "idx")


def read_events(response):
    event = None
    for line in response.iter_lines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            yield event, json.loads(line[6:])


def test_disconnect_mid_stream_stops_generation(index):
    llm = StreamingLLM(pieces=400, delay=0.02)  # 8 s if nobody stopped it
    with serve_app(create_app(index, llm)) as url:
        with httpx.stream("POST", url + "/consult/stream", json={"question": "公司不签劳动合同怎么办", "k": 2},
                          timeout=10) as r:
            assert r.status_code == 200
            tokens = 0
            for event, _ in read_events(r):
                tokens += event == "token"
                if tokens == 5:
                    break  # leave mid-answer; closing the response drops the connection
        assert llm.closed.wait(3), "the model's stream was not closed after the client left"
        produced = llm.produced
        time.sleep(0.2)
        assert llm.produced == produced < 100  # nothing generated after the close
        # the slot was released: the next request is served at once
        r = httpx.post(url + "/search", json={"query": "工资"}, timeout=5)
        assert r.status_code == 200


def test_requests_queue_for_the_model_and_report_the_wait(index):
    llm = StreamingLLM(pieces=15, delay=0.02)
    results: dict[int, list] = {}
    with serve_app(create_app(index, llm, ServerSettings(rate_limit=0))) as url:
        def user(i: int) -> None:
            with httpx.stream("POST", url + "/ask/stream", json={"question": "试用期多长", "k": 2}, timeout=20) as r:
                results[i] = list(read_events(r))

        threads = [threading.Thread(target=user, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
            time.sleep(0.05)
        for t in threads:
            t.join(30)
    assert sorted(results) == [0, 1, 2]
    assert all(seq[-1][0] == "done" for seq in results.values())  # none failed
    waits = sorted(seq[-1][1]["timings"]["queue_s"] for seq in results.values())
    assert waits[0] < 0.1 and waits[2] > 0.3  # the last waited for two generations
    assert sum(any(e == "queued" for e, _ in seq) for seq in results.values()) == 2


def test_a_full_queue_is_refused_with_retry_after(index):
    llm = StreamingLLM(pieces=200, delay=0.02)
    with serve_app(create_app(index, llm, ServerSettings(max_waiting=0))) as url:
        with httpx.stream("POST", url + "/ask/stream", json={"question": "试用期多长", "k": 1}, timeout=10) as first:
            stream = read_events(first)  # kept: closing it would drop the connection and stop the generation
            next(stream)  # generating now
            second = httpx.post(url + "/ask", json={"question": "试用期多长", "k": 1}, timeout=10)
            third = httpx.post(url + "/ask/stream", json={"question": "试用期多长", "k": 1}, timeout=10)
            for r in (second, third):
                assert r.status_code == 503 and r.headers["retry-after"] == "5"
                assert r.json()["error"]["type"] == "Busy"
