"""The OpenAI route's limits: an answer cut at its token limit, reached exactly, is reported as ``length``; a
history longer than the route keeps is cut to its latest turns, and says so."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("fastapi")

from legalrag.server.bodies import MAX_TURNS  # noqa: E402
from legalrag.server.routes_openai import ChatCompletionBody, consult_body, finish_reason  # noqa: E402


def body(messages, **extra):
    return ChatCompletionBody(model="legalrag", messages=messages, **extra)


def payload(completion_tokens):
    return {"usage": {"prompt_tokens": 100, "completion_tokens": completion_tokens}}


@pytest.mark.parametrize("used, reason", [(255, "stop"), (256, "length"), (257, "length"), (0, "stop")])
def test_finish_reason_at_around_and_exactly_at_the_token_limit(used, reason):
    consult, _ = consult_body(body([{"role": "user", "content": "试用期可以约定多长？"}], max_tokens=256))
    assert consult.max_tokens == 256
    assert finish_reason(payload(used), consult) == reason


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=16, max_value=4096), st.integers(min_value=0, max_value=5000))
def test_length_if_and_only_if_the_limit_was_reached(limit, used):
    consult, _ = consult_body(body([{"role": "user", "content": "试用期可以约定多长？"}], max_completion_tokens=limit))
    assert finish_reason(payload(used), consult) == ("length" if used >= limit else "stop")


def dialogue(n_earlier):
    """``n_earlier`` earlier turns (user and assistant alternating, numbered), then the question."""
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"第{i}轮"} for i in range(n_earlier)]
    if n_earlier % 2:
        turns.append({"role": "assistant", "content": "好的"})
    return turns + [{"role": "user", "content": "那最多能要几个月？"}]


@pytest.mark.parametrize("extra", [1, 2, 11, 60])
def test_a_history_longer_than_the_cut_keeps_the_latest_turns(extra):
    messages = dialogue(MAX_TURNS + extra)
    consult, ignored = consult_body(body(messages))
    earlier = [(m["role"], m["content"]) for m in messages[:-1]]
    assert [(t.role.value, t.content) for t in consult.history] == earlier[-MAX_TURNS:]
    assert consult.question == "那最多能要几个月？"
    assert any(f"the {len(earlier) - MAX_TURNS} oldest turns" in i for i in ignored)


@pytest.mark.parametrize("n", [0, 2, MAX_TURNS])
def test_a_history_within_the_cut_is_kept_whole_and_nothing_is_reported(n):
    messages = dialogue(n)
    consult, ignored = consult_body(body(messages))
    assert [t.content for t in consult.history] == [m["content"] for m in messages[:-1]]
    assert not any("oldest turns" in i for i in ignored)
