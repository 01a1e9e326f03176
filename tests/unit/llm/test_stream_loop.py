"""Generation stops on a repeated-line loop and at its time cap: the stream is closed (the model is freed at once) and
the result says why it stopped."""

from __future__ import annotations

import itertools
import json
import time

from legalrag.llm.base import ChatRequest, ChatResult
from legalrag.llm.stream import FINISH_LOOP, FINISH_TIME, ChatStream, loop_start, stream_chat

REQ = ChatRequest(messages=({"role": "user", "content": "工作签证怎么办？"},), max_tokens=4096)


def chunk(text):
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
                                 ensure_ascii=False)


class Endless:
    """A backend whose stream never ends on its own (the runaway model), recording whether it was closed."""

    model_id = "endless"

    def __init__(self, pieces, delay=0.0):
        self.pieces, self.delay = pieces, delay
        self.closed = False
        self.sent = 0

    def _lines(self):
        try:
            for piece in itertools.cycle(self.pieces):
                if self.delay:
                    time.sleep(self.delay)
                self.sent += 1
                yield chunk(piece)
        finally:
            self.closed = True

    def stream(self, request):
        return ChatStream(self._lines(), self.model_id)

    def chat(self, request):  # pragma: no cover - stream_chat streams
        raise AssertionError("stream_chat should stream")


def test_loop_start_finds_the_second_copy_of_a_line_written_three_times():
    text = "结论：可以。\n建议你咨询移民律师了解签证。\n建议你咨询移民律师了解签证。\n建议你咨询移民律师了解签证。\n"
    cut = loop_start(text)
    assert text[:cut] == "结论：可以。\n建议你咨询移民律师了解签证。\n"
    assert loop_start("结论：可以。\n怎么做：保留证据。\n何时找律师：对方拒绝时。\n") is None
    assert loop_start("是。是。是。是。") is None  # short units may repeat
    # sentences repeated on one line are a loop too
    assert loop_start("请保留好工资条。请保留好工资条。请保留好工资条。") == len("请保留好工资条。")


def test_a_runaway_stream_is_cut_at_the_loop_and_closed():
    llm = Endless(["结论：不能。\n", "请尽快联系美国移民局办理工作签证。", "\n"])
    seen: list[str] = []
    result = stream_chat(llm, REQ, seen.append, cut_loops=True)
    assert result.finish_reason == FINISH_LOOP and llm.closed
    assert result.text.count("请尽快联系美国移民局办理工作签证") == 1 and result.text.startswith("结论：不能。")
    assert llm.sent < 20 and result.completion_tokens > 0


def test_the_time_cap_stops_a_slow_stream():
    llm = Endless(["一句不重复的话", "另一句话，"], delay=0.02)
    t0 = time.perf_counter()
    result = stream_chat(llm, REQ, lambda _p: None, time_cap_s=0.2)
    assert result.finish_reason == FINISH_TIME and llm.closed
    assert time.perf_counter() - t0 < 2.0 and result.text


def test_a_backend_without_streaming_is_cut_after_the_fact():
    class Whole:
        model_id = "whole"

        def chat(self, request):
            return ChatResult(text="结论：可以。\n" + "请向劳动仲裁委员会申请仲裁。\n" * 30, completion_tokens=300)

    seen: list[str] = []
    result = stream_chat(Whole(), REQ, seen.append, cut_loops=True)
    assert result.finish_reason == FINISH_LOOP and seen == [result.text]
    assert result.text == "结论：可以。\n请向劳动仲裁委员会申请仲裁。\n"


def test_without_the_options_a_stream_is_read_to_its_end():
    lines = [chunk("结论："), chunk("可以。"), "data: [DONE]"]

    class Finite:
        model_id = "f"

        def stream(self, request):
            return ChatStream(iter(lines), "f")

    assert stream_chat(Finite(), REQ, lambda _p: None).text == "结论：可以。"
