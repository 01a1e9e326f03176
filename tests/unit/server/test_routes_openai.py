"""`legalrag serve`'s OpenAI-compatible chat endpoint, driven by the official `openai` Python client against the
app on a free 127.0.0.1 port: the real consultation code over a BM25 index of the bundled statute sample; the
model is a scripted one that streams an answer citing one real and one non-existent article, in the OpenAI
stream wire format (with usage)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
openai = pytest.importorskip("openai")

from support.http_app import serve_app  # noqa: E402
from support.server_setup import ANSWER, MISSING, REAL_ID, reply, sample_index  # noqa: E402

from legalrag.answer.processors import DEFAULT_PROCESSOR
from legalrag.llm.base import ChatRequest  # noqa: E402
from legalrag.llm.stream import ChatStream  # noqa: E402
from legalrag.server import ServerSettings, create_app  # noqa: E402
from legalrag.testing import ScriptedLLM  # noqa: E402

KEY = "test-key-0123456789abcdef"


class UsageStreamingLLM(ScriptedLLM):
    """Streams the scripted reply a few characters at a time, then a usage chunk, as an OpenAI server does."""

    def stream(self, request: ChatRequest) -> ChatStream:
        self.requests.append(request)
        text = reply(request)

        def lines():
            for i in range(0, len(text), 7):
                yield "data: " + json.dumps({"choices": [{"delta": {"content": text[i:i + 7]}}]})
            yield "data: " + json.dumps({"choices": [{"delta": {}, "finish_reason": "stop"}]})
            yield "data: " + json.dumps({"choices": [], "usage": {"prompt_tokens": 321, "completion_tokens": 45}})

        return ChatStream(lines(), self.model_id)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return sample_index(tmp_path_factory.mktemp("oai") / "idx")


@pytest.fixture(scope="module")
def served(index):
    llm = UsageStreamingLLM(reply)
    with serve_app(create_app(index, llm, ServerSettings(rate_limit=0, api_keys=(KEY,)))) as url:
        yield url, llm


@pytest.fixture
def client(served):
    return openai.OpenAI(base_url=served[0] + "/v1", api_key=KEY, max_retries=0)


DIALOGUE = [{"role": "system", "content": "You are a pirate."},
            {"role": "user", "content": "我在一家公司上班三个月了"},
            {"role": "assistant", "content": "请问您想了解什么？"},
            {"role": "user", "content": "公司一直不跟我签书面劳动合同，我可以要求双倍工资吗？"}]


def test_models_and_a_completion_with_checked_citations(client, served):
    assert [m.id for m in client.models.list().data] == ["legalrag"]
    raw = client.chat.completions.with_raw_response.create(model="legalrag", messages=DIALOGUE, temperature=0.7,
                                                           top_p=0.5, n=2, max_tokens=300)
    completion = raw.parse()
    text = completion.choices[0].message.content
    # the answer, then its citations with their marks: the real one retrieved-or-exists, the invented one not found
    assert text.startswith("法律依据：\n[1] ") and ANSWER[:20] in text and "引用核对 / Citations checked:" in text
    assert f"✗ {MISSING.replace('《', '').replace('》', '')} — not found" in text
    ext = completion.model_extra["legalrag"]
    assert ext["basis"] and all(q["quote"] in text for q in ext["basis"]) and ext["fallback"] is False
    marks = {c["document_id"]: c["mark"] for c in ext["citations"]}
    assert marks[REAL_ID] in ("supported", "exists") and marks[None] == "not_found" and ext["unresolved"] == 1
    assert ext["marks"]["not_found"] == 1
    assert ext["retrieved"] and ext["processor"] == DEFAULT_PROCESSOR
    # the dialogue went through the consultation: the earlier turn is in the prompt, the pirate is not
    prompt = "\n".join(m["content"] for m in served[1].requests[-1].messages)
    assert "三个月" in prompt and "pirate" not in prompt
    assert served[1].requests[-1].max_tokens == 300
    assert completion.usage.prompt_tokens == 321 and completion.usage.completion_tokens == 45
    assert completion.usage.total_tokens == 366 and completion.choices[0].finish_reason == "stop"
    # what legalrag does not use is accepted and named, in the header and in the extension field
    ignored = raw.headers["x-legalrag-ignored-params"]
    for name in ("n", "temperature", "top_p", "messages[0] (role system"):
        assert name in ignored
    assert "max_tokens" not in ignored and ext["ignored_params"] == ignored.split(", ")


def test_streaming_gives_the_same_answer_with_usage(client):
    plain = client.chat.completions.create(model="legalrag", messages=DIALOGUE).choices[0].message.content
    stream = client.chat.completions.create(model="legalrag", messages=DIALOGUE, stream=True,
                                            stream_options={"include_usage": True}, tools=[
                                                {"type": "function", "function": {"name": "f", "parameters": {}}}])
    chunks = list(stream)
    pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    assert len(pieces) > 5 and "".join(pieces) == plain  # streamed piece by piece, marks at the end
    final = [c for c in chunks if c.choices and c.choices[0].finish_reason][-1]
    assert final.choices[0].finish_reason == "stop"
    assert final.model_extra["legalrag"]["ignored_params"][0] == "tools"
    assert stream.response.headers["x-legalrag-ignored-params"].startswith("tools, messages[0] (role system")
    assert {c["mark"] for c in final.model_extra["legalrag"]["citations"]} >= {"not_found"}
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens == 366


def test_bad_requests_say_what_to_change(client, served):
    with pytest.raises(openai.BadRequestError, match="use 'legalrag'"):
        client.chat.completions.create(model="gpt-4o", messages=DIALOGUE)
    with pytest.raises(openai.BadRequestError, match="must be the user's question"):
        client.chat.completions.create(model="legalrag", messages=DIALOGUE[:3])
    with pytest.raises(openai.UnprocessableEntityError, match="max_tokens"):
        client.chat.completions.create(model="legalrag", messages=DIALOGUE, max_tokens=100000)
    with pytest.raises(openai.BadRequestError, match="the last message"):
        client.chat.completions.create(model="legalrag", messages=[{"role": "user", "content": "法" * 5000}])
    # an image part is dropped and named; the text parts make the question
    raw = client.chat.completions.with_raw_response.create(model="legalrag", messages=[{"role": "user", "content": [
        {"type": "text", "text": "不签劳动合同有什么后果？"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}])
    assert raw.headers["x-legalrag-ignored-params"] == "messages[0].content[1] (image_url)"
    assert served[1].requests[-1].messages[-1]["content"].count("不签劳动合同有什么后果？") >= 1


def test_api_key_and_rate_limit_apply(index, served):
    wrong = openai.OpenAI(base_url=served[0] + "/v1", api_key="not-the-key-at-all-000", max_retries=0)
    with pytest.raises(openai.AuthenticationError, match="wrong API key"):
        wrong.models.list()
    with serve_app(create_app(index, UsageStreamingLLM(reply), ServerSettings(rate_limit=1, rate_burst=1))) as url:
        limited = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
        limited.models.list()
        with pytest.raises(openai.RateLimitError, match="too many requests"):
            limited.chat.completions.create(model="legalrag", messages=DIALOGUE)
