"""The call cache against the real 0.5B model: hits, keys, persistence, usage accounting."""

from __future__ import annotations

import pytest

from legalrag.llm.base import ChatRequest
from legalrag.llm.cache import CachedLLM, request_key
from legalrag.llm.usage import UsageMeter

MSG = ({"role": "user", "content": "Name a colour."},)


def test_key_covers_model_messages_and_sampling():
    r = ChatRequest(messages=MSG, max_tokens=4)
    k = request_key("embedded", "m", r)
    assert k == request_key("embedded", "m", ChatRequest(messages=MSG, max_tokens=4))
    others = [request_key("openai", "m", r), request_key("embedded", "m2", r),
              request_key("embedded", "m", ChatRequest(messages=MSG, max_tokens=5)),
              request_key("embedded", "m", ChatRequest(messages=MSG, max_tokens=4, seed=1)),
              request_key("embedded", "m", ChatRequest(messages=MSG, max_tokens=4, json_schema={"type": "object"})),
              request_key("embedded", "m", ChatRequest(messages=({"role": "user", "content": "x"},), max_tokens=4))]
    assert len({k, *others}) == 7


@pytest.mark.llm
def test_hit_is_identical_and_persistent(small_llm, tmp_path):
    db = tmp_path / "calls.sqlite"
    llm = CachedLLM(small_llm, db)
    req = ChatRequest(messages=MSG, max_tokens=4, logprobs=True, top_logprobs=2)
    first = llm.chat(req)
    second = llm.chat(req)
    assert not first.cached and second.cached
    assert second.text == first.text and second.logprobs == first.logprobs
    assert second.completion_tokens == first.completion_tokens and second.seconds < first.seconds
    assert llm.stats()["hits"] == 1 and llm.stats()["misses"] == 1 and llm.usage.calls == 2
    assert llm.usage.saved_seconds == pytest.approx(first.seconds)

    again = CachedLLM(small_llm, db)  # a new process would see the same file
    assert again.chat(req).cached
    assert again.store.stats()["entries"] == 1

    sampled = ChatRequest(messages=MSG, max_tokens=2, temperature=0.9)
    assert not llm.cacheable(sampled)
    assert not CachedLLM(small_llm, db, enabled=False).cacheable(req)


def test_usage_accumulates():
    from legalrag.llm.base import ChatResult

    u = UsageMeter()
    u.add(ChatResult(text="a", prompt_tokens=3, completion_tokens=2, seconds=0.5))
    u.add(ChatResult(text="a", prompt_tokens=3, completion_tokens=2, seconds=0.01, cached=True,
                     timings={"original_seconds": 0.5}))
    assert u.usage.to_dict() == {"calls": 2, "cached_calls": 1, "prompt_tokens": 6, "completion_tokens": 4,
                                 "seconds": 0.51, "saved_seconds": 0.5, "total_tokens": 10}


def test_a_damaged_cache_file_is_named_with_what_to_do(tmp_path):
    from legalrag.errors import InputError
    from legalrag.llm.cache import CallCache
    from legalrag.retrieval.vector_cache import VectorCache

    bad = tmp_path / "calls.sqlite"
    bad.write_bytes(b"not a database" * 100)
    with pytest.raises(InputError, match=r"calls.sqlite: the LLM call cache is not a usable SQLite database.*delete"):
        CallCache(bad)
    vdir = tmp_path / "vectors"
    vdir.mkdir()
    (vdir / "m.sqlite").write_bytes(b"\x00garbage" * 100)
    with pytest.raises(InputError, match="the vector cache is not a usable SQLite database"):
        VectorCache("m", 4, root=vdir)
