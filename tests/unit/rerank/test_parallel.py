"""The pointwise LLM reranker scores pairs concurrently against an OpenAI-compatible endpoint (a local server on
127.0.0.1 speaking the chat-completions wire format, logprobs included), keeps the hits' order in its scores,
and stays serial on a backend that takes one call at a time."""

from __future__ import annotations

import threading
import time

import pytest
from unit.llm.test_openai_compat import scripted_server

from legalrag.corpora.statutes import statute_document
from legalrag.llm.openai_compat import OpenAICompatLLM
from legalrag.llm.parallel import call_slots, ordered_map
from legalrag.rerank.llm_pointwise import LLMPointwiseReranker
from legalrag.testing import ScriptedLLM
from legalrag.types import Hit

# article n is judged n-suitable: the reply's digit is read off the article number in the prompt
DOCS = [statute_document(str(n), f"Rule number {n} about leases.", f"Lease Act Art. {n}") for n in range(1, 9)]


@pytest.fixture
def endpoint():
    state = {"in_flight": 0, "most": 0}
    lock = threading.Lock()

    def respond(body):
        with lock:
            state["in_flight"] += 1
            state["most"] = max(state["most"], state["in_flight"])
        time.sleep(0.25)  # a remote model's latency
        prompt = body["messages"][-1]["content"]
        digit = next(str(n) for n in range(8, 0, -1) if f"Rule number {n} " in prompt)
        with lock:
            state["in_flight"] -= 1
        return 200, {"id": "x", "object": "chat.completion", "model": body["model"],
                     "choices": [{"index": 0, "finish_reason": "length",
                                  "message": {"role": "assistant", "content": digit},
                                  "logprobs": {"content": [{"token": digit, "logprob": -0.05, "top_logprobs": [
                                      {"token": digit, "logprob": -0.05}, {"token": "0", "logprob": -3.0}]}]}}],
                     "usage": {"prompt_tokens": 40, "completion_tokens": 1, "total_tokens": 41}}, {}

    url, seen, close = scripted_server(respond)
    yield url, state, seen
    close()


def _hits():
    return [Hit(document=d, score=1.0 / (i + 1), rank=i + 1, retriever="bm25") for i, d in enumerate(DOCS)]


def test_pairs_are_scored_concurrently_against_an_endpoint(endpoint):
    url, state, seen = endpoint
    llm = OpenAICompatLLM(url, "m", api_key_env=None, max_retries=0, max_concurrency=4)
    reranker = LLMPointwiseReranker(llm, prompts=("en",))
    assert reranker.concurrency == 4 == call_slots(llm)
    ranked = reranker.rerank("lease question", _hits())
    assert len(seen) == 8 and 2 <= state["most"] <= 4  # several in flight, never more than the client allows
    assert [h.id for h in ranked] == [str(n) for n in range(8, 0, -1)]  # each score stayed with its own article
    assert reranker.stats.usage.calls == 8 and reranker.stats.usage.prompt_tokens == 320


def test_concurrency_one_is_serial(endpoint):
    url, state, _ = endpoint
    llm = OpenAICompatLLM(url, "m", api_key_env=None, max_retries=0, max_concurrency=4)
    ranked = LLMPointwiseReranker(llm, prompts=("en",), concurrency=1).rerank("lease question", _hits()[:3])
    assert state["most"] == 1 and [h.id for h in ranked] == ["3", "2", "1"]


def test_backends_without_slots_stay_serial_and_errors_surface():
    assert call_slots(ScriptedLLM(["1"])) == 1 and call_slots(object()) == 1
    seen: list[int] = []
    assert ordered_map(lambda x: seen.append(x) or x * 2, [3, 1, 2], 1) == [6, 2, 4] and seen == [3, 1, 2]
    with pytest.raises(ZeroDivisionError):
        ordered_map(lambda x: 1 // x, [1, 0, 2], 3)
