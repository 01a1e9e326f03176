"""The OpenAI-compatible route as a client sees it, field by field: the request's limits (each one at and just past
its edge), what is ignored and how it is named, the wire format of a completion and of its stream chunks, the
citations block appended to the answer, the ``legalrag`` extension and ``usage``, and the errors (status, field,
message). The app runs over a BM25 index of the bundled statute sample with a scripted model."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402
from pydantic import ValidationError  # noqa: E402
from support.server_setup import legal_llm, sample_index  # noqa: E402

from legalrag.errors import InputError  # noqa: E402
from legalrag.server import ServerSettings, create_app  # noqa: E402
from legalrag.server.bodies import MAX_EVIDENCE_TOKENS, MAX_K, MAX_LAWS, MAX_QUESTION_CHARS, MAX_TURNS  # noqa: E402
from legalrag.server.routes_openai import (IGNORED_HEADER, ChatCompletionBody, ChunkWriter, citation_block,  # noqa: E402
                                           consult_body, extension, usage)

QUESTION = "公司不签劳动合同怎么办？"
ASK = [{"role": "user", "content": QUESTION}]
BLOCK_HEAD = "\n\n---\n引用核对 / Citations checked:"
NO_CITATIONS = "\n\n---\n引用核对 / Citations checked: 回答未引用法条 / the answer cites no article."


def body(messages=ASK, **extra):
    return ChatCompletionBody(model="legalrag", messages=messages, **extra)


try:  # the app's MCP endpoint (test_routes_openai's servers) imports it, seconds, once per process: here at
    import mcp  # noqa: F401  # collection, so that each mutant's run, forked after it, has it already
except ImportError:
    pass
# Built when the module is collected, not per test: the mutation tool forks each mutant's run from the process
# that collected the tests, so every mutant finds it built (no code of the module under test runs here).
INDEX = sample_index(Path(tempfile.mkdtemp(prefix="legalrag-oai-mutants-")) / "idx")


def app(llm=None, **options):
    """The app over the sample index; no MCP endpoint (its import alone takes seconds), no rate limit."""
    return TestClient(create_app(INDEX, llm, ServerSettings(rate_limit=0, mcp=False, **options)))


@pytest.fixture
def app_client():  # an app per test: mutmut runs a mutant of ``router`` only with the tests that called it
    llm = legal_llm(prompt_tokens=7, completion_tokens=64)
    return app(llm, max_k=50, evidence_tokens=400), llm


@pytest.fixture
def client(app_client):
    return app_client[0]


def post(client, **request):
    return client.post("/v1/chat/completions", json={"model": "legalrag", "messages": ASK, **request})


def chunks(text):
    """The ``data:`` payloads of a stream, in order (``[DONE]`` as the string), and its comment lines."""
    data, comments = [], []
    for block in text.split("\n\n"):
        if block.startswith("data: "):
            raw = block[len("data: "):]
            data.append(raw if raw == "[DONE]" else json.loads(raw))
        elif block.startswith(": "):
            comments.append(block[2:])
    return data, comments


# --- the request's limits, at and just past each edge -------------------------------------------------------------

def test_a_role_of_twenty_characters_is_accepted_and_ignored_twenty_one_is_refused():
    consult, ignored = consult_body(body([{"role": "r" * 20, "content": "x"}, *ASK]))
    assert ignored == [f"messages[0] (role {'r' * 20}: legalrag's own instructions govern the answer)"]
    with pytest.raises(ValidationError, match="role"):
        body([{"role": "r" * 21, "content": "x"}, *ASK])


def test_the_model_name_is_bounded_at_200_characters():
    with pytest.raises(InputError, match="is not served here"):
        consult_body(ChatCompletionBody(model="m" * 200, messages=ASK))
    with pytest.raises(ValidationError, match="model"):
        ChatCompletionBody(model="m" * 201, messages=ASK)


def test_messages_must_be_one_to_a_thousand():
    with pytest.raises(ValidationError, match="messages"):
        body([])
    many = [{"role": "system", "content": "s"}] * 999 + ASK
    consult, ignored = consult_body(body(many))
    assert consult.question == QUESTION and len(ignored) == 999
    with pytest.raises(ValidationError, match="messages"):
        body([{"role": "system", "content": "s"}] * 1000 + ASK)


@pytest.mark.parametrize("name", ["max_tokens", "max_completion_tokens"])
def test_the_token_limit_is_16_to_4096_inclusive(name):
    for ok in (16, 4096):
        consult, ignored = consult_body(body(**{name: ok}))
        assert consult.max_tokens == ok and ignored == []
    for bad in (15, 4097):
        with pytest.raises(ValidationError, match=name):
            body(**{name: bad})


@settings(max_examples=40, deadline=None)
@given(st.integers(16, 4096), st.integers(16, 4096))
def test_max_completion_tokens_wins_over_max_tokens(completion, plain):
    assert consult_body(body(max_tokens=plain, max_completion_tokens=completion))[0].max_tokens == completion
    assert consult_body(body(max_tokens=plain))[0].max_tokens == plain


def test_without_a_token_limit_the_consultations_default_applies():
    from legalrag.server.bodies import ConsultBody

    assert consult_body(body())[0].max_tokens == ConsultBody(question="x").max_tokens


def test_the_request_defaults_a_client_relies_on():
    b = body(stream_options={})
    assert b.stream is False and b.stream_options.include_usage is False and b.legalrag is None
    assert b.max_tokens is None and b.max_completion_tokens is None


@pytest.mark.parametrize("option, ok, bad", [("k", [1, MAX_K], [0, MAX_K + 1]),
                                             ("evidence_tokens", [1, MAX_EVIDENCE_TOKENS],
                                              [0, MAX_EVIDENCE_TOKENS + 1]),
                                             ("retriever", ["r" * 100], ["r" * 101]),
                                             ("laws", [["劳动合同法"] * MAX_LAWS], [["劳动合同法"] * (MAX_LAWS + 1)])])
def test_the_legalrag_options_are_bounded_and_passed_to_the_consultation(option, ok, bad):
    for value in ok:
        consult, _ = consult_body(body(legalrag={option: value}))
        assert getattr(consult, option) == value
    for value in bad:
        with pytest.raises(ValidationError, match=option):
            body(legalrag={option: value})


def test_the_legalrag_options_take_no_unknown_setting_and_default_to_the_consultations():
    from legalrag.server.bodies import ConsultBody

    with pytest.raises(ValidationError, match="temperature"):
        body(legalrag={"temperature": 0.5})
    consult, _ = consult_body(body(legalrag={}))
    default = ConsultBody(question=QUESTION)
    assert (consult.k, consult.laws, consult.processor, consult.retriever, consult.evidence_tokens) == (
        default.k, default.laws, default.processor, default.retriever, default.evidence_tokens)
    consult, _ = consult_body(body(legalrag={"processor": "carry", "laws": ["劳动合同法"], "k": 3}))
    assert consult.processor.value == "carry" and consult.laws == ["劳动合同法"] and consult.k == 3


# --- what legalrag does not use: named, in order -------------------------------------------------------------------

def test_ignored_parameters_are_named_sorted_then_stream_options_then_per_message():
    consult, ignored = consult_body(ChatCompletionBody(
        model="legalrag", temperature=0.2, top_p=1, n=1, stream_options={"zeta": 1, "alpha": 2, "include_usage": True},
        messages=[{"role": "system", "content": "be brief"},
                  {"role": "user", "content": "我入职三个月", "name": "u", "extra": 1},
                  {"role": "assistant", "content": "请讲"},
                  {"role": "user", "content": [{"type": "text", "text": "不签合同"}, {"type": "image_url"},
                                               {"text": "no type"}, {"type": "text", "text": 5},
                                               {"type": "text", "text": "怎么办"}]}],
        max_tokens=100, stream=True))
    assert ignored == ["n", "temperature", "top_p", "stream_options.alpha", "stream_options.zeta",
                       "messages[0] (role system: legalrag's own instructions govern the answer)",
                       "messages[1].extra", "messages[1].name",
                       "messages[3].content[1] (image_url)", "messages[3].content[2] (unknown)",
                       "messages[3].content[3] (text)"]
    assert consult.question == "不签合同\n怎么办"
    assert [(t.role.value, t.content) for t in consult.history] == [("user", "我入职三个月"), ("assistant", "请讲")]


def test_a_system_message_between_turns_is_skipped_not_the_end_of_the_dialogue():
    consult, ignored = consult_body(body([{"role": "user", "content": "我入职三个月"},
                                          {"role": "developer", "content": "ignore"},
                                          {"role": "assistant", "content": "请讲"}, *ASK]))
    assert [t.content for t in consult.history] == ["我入职三个月", "请讲"] and consult.question == QUESTION
    assert ignored == ["messages[1] (role developer: legalrag's own instructions govern the answer)"]


def test_a_message_with_no_content_is_an_empty_turn():
    consult, ignored = consult_body(body([{"role": "assistant"}, *ASK]))
    assert [(t.role.value, t.content) for t in consult.history] == [("assistant", "")] and ignored == []


def test_the_cut_of_a_long_history_is_named_with_its_counts():
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"第{i}轮"} for i in range(MAX_TURNS + 3)]
    consult, ignored = consult_body(body([*turns, {"role": "assistant", "content": "好"}, *ASK]))
    assert ignored == [f"messages (the 4 oldest turns; the last {MAX_TURNS} are kept)"]
    assert len(consult.history) == MAX_TURNS and consult.history[0].content == "第4轮"


# --- errors a client can act on ------------------------------------------------------------------------------------

def test_a_model_other_than_legalrag_names_the_model_field():
    with pytest.raises(InputError) as err:
        consult_body(ChatCompletionBody(model="gpt-4o", messages=ASK))
    assert str(err.value) == "model 'gpt-4o' is not served here; use 'legalrag' (GET /v1/models)"
    assert err.value.field == "model"


@pytest.mark.parametrize("messages", [
    [{"role": "system", "content": "only instructions"}],
    [*ASK, {"role": "assistant", "content": "答"}],
    [{"role": "user", "content": "  \n "}],
    [{"role": "user", "content": [{"type": "image_url"}]}]])
def test_the_last_turn_must_be_the_users_question_with_text(messages):
    with pytest.raises(InputError) as err:
        consult_body(body(messages))
    assert str(err.value) == "the last user or assistant message must be the user's question, with text"
    assert err.value.field == "messages"


def test_a_question_too_long_is_blamed_on_the_last_message_a_turn_too_long_on_messages():
    with pytest.raises(InputError) as err:
        consult_body(body([{"role": "user", "content": "法" * (MAX_QUESTION_CHARS + 1)}]))
    assert str(err.value) == f"the last message: String should have at most {MAX_QUESTION_CHARS} characters"
    assert err.value.field == "messages"
    consult_body(body([{"role": "user", "content": "法" * MAX_QUESTION_CHARS}]))
    with pytest.raises(InputError) as err:
        consult_body(body([{"role": "user", "content": "法" * (MAX_QUESTION_CHARS * 4 + 1)}, *ASK]))
    assert str(err.value) == f"messages: String should have at most {MAX_QUESTION_CHARS * 4} characters"
    assert err.value.field == "messages"


def test_errors_reach_the_client_as_400_with_the_field_or_422(client):
    r = post(client, model="gpt-4o")
    assert r.status_code == 400 and r.json()["error"]["fields"] == [{"field": "model", "type": "input"}]
    r = post(client, messages=[{"role": "assistant", "content": "答"}])
    assert r.status_code == 400 and r.json()["error"]["fields"][0]["field"] == "messages"
    assert post(client, max_tokens=15).status_code == 422
    r = post(client, legalrag={"k": 51})  # within the schema, above this server's max_k
    assert r.status_code == 400 and "k=51 is above this server's limit of 50" in r.json()["error"]["message"]


# --- the pieces of the response --------------------------------------------------------------------------------------

def test_usage_counts_the_models_tokens_and_is_zero_when_unknown():
    zero = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    assert usage({}) == zero and usage({"usage": None}) == zero and usage({"usage": {}}) == zero
    assert usage({"usage": {"prompt_tokens": 30}}) == {"prompt_tokens": 30, "completion_tokens": 0, "total_tokens": 30}
    assert usage({"usage": {"completion_tokens": "12"}}) == {"prompt_tokens": 0, "completion_tokens": 12,
                                                             "total_tokens": 12}


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_total_tokens_is_the_sum(p, c):
    assert usage({"usage": {"prompt_tokens": p, "completion_tokens": c}}) == {
        "prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def test_the_citation_block_names_each_citation_with_its_mark():
    assert citation_block([]) == NO_CITATIONS
    cits = [{"text": "《劳动合同法》第十条", "canonical": "劳动合同法第十条", "resolved": True, "mark": "supported"},
            {"text": "《劳动合同法》第九百九十九条", "canonical": "", "resolved": False},
            {"text": "《劳动合同法》第十二条", "canonical": "劳动合同法第十二条", "resolved": True}]
    assert citation_block(cits) == BLOCK_HEAD + (
        "\n- ✓ 劳动合同法第十条 — supported"
        "\n- ✗ 《劳动合同法》第九百九十九条 — checked for existence only"
        "\n- ? 劳动合同法第十二条 — checked for existence only")


def test_the_extension_carries_the_payload_the_marks_and_what_was_ignored():
    payload = {"answer": "答", "citations": [{"text": "《劳动合同法》第十条", "resolved": True},
                                            {"text": "第九百九十九条", "resolved": False, "mark": "not_found"}],
               "query": "q", "processor": "carry", "model": "m", "retrieved": [1], "unresolved": 1, "marks": {"x": 1},
               "not_retrieved": [2], "notes": ["n"], "timings": {"t": 1}, "basis": [3], "fallback": True,
               "fallback_reason": "why", "not_from_law": ["s"], "usage": {"prompt_tokens": 1}, "steps": [4]}
    ext = extension(payload, ["n"])
    assert ext == {"answer": "答", "citations": [{**payload["citations"][0], "mark": "exists"},
                                                {**payload["citations"][1], "mark": "not_found"}],
                   **{k: payload[k] for k in ("query", "processor", "model", "retrieved", "unresolved", "marks",
                                              "not_retrieved", "notes", "timings", "basis", "fallback",
                                              "fallback_reason", "not_from_law")},
                   "ignored_params": ["n"]}
    assert extension({"answer": "", "citations": []}, [])["fallback_reason"] is None


# --- the stream's chunks ---------------------------------------------------------------------------------------------

def test_stream_chunks_in_the_openai_wire_format():
    consult, _ = consult_body(body(max_tokens=64))
    w = ChunkWriter(consult, ["n"], include_usage=True)
    assert w.id.startswith("chatcmpl-") and len(w.id) == len("chatcmpl-") + 32
    assert abs(w.created - time.time()) < 5 and isinstance(w.created, int)
    assert w("queued", {"position": 1}) == ": queued\n\n" and w("started", {}) == ": started\n\n"
    first = w("token", {"text": "根据"})
    assert first.endswith("\n\n") and first.count("data: ") == 2
    role, piece = chunks(first)[0]
    assert role == {"id": w.id, "object": "chat.completion.chunk", "created": w.created, "model": "legalrag",
                    "system_fingerprint": None,
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None,
                                 "logprobs": None}]}
    assert piece["choices"] == [{"index": 0, "delta": {"content": "根据"}, "finish_reason": None, "logprobs": None}]
    assert "根据" in first  # not escaped: a client reading the raw stream sees the text
    assert chunks(w("token", {"text": "法律"}))[0] == [{**piece, "choices": [{**piece["choices"][0],
                                                                             "delta": {"content": "法律"}}]}]
    done = w("done", {"answer": "根据法律", "citations": [], "usage": {"prompt_tokens": 5, "completion_tokens": 64}})
    data, _ = chunks(done)
    assert done.endswith("data: [DONE]\n\n") and data[-1] == "[DONE]" and len(data) == 4
    assert data[0]["choices"][0]["delta"] == {"content": NO_CITATIONS} and "引用核对" in done
    final = data[1]
    assert final["choices"] == [{"index": 0, "delta": {}, "finish_reason": "length", "logprobs": None}]
    assert final["legalrag"]["ignored_params"] == ["n"] and final["legalrag"]["answer"] == "根据法律"
    assert data[2] == {"id": w.id, "object": "chat.completion.chunk", "created": w.created, "model": "legalrag",
                       "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 64, "total_tokens": 69}}


def test_a_stream_with_no_tokens_still_opens_with_the_role_and_without_usage_has_no_usage_chunk():
    consult, _ = consult_body(body(max_tokens=64))
    w = ChunkWriter(consult, [], include_usage=False)
    data, _ = chunks(w("done", {"answer": "", "citations": [], "usage": {"completion_tokens": 63}}))
    assert [d if d == "[DONE]" else d["choices"][0]["delta"] for d in data] == [
        {"role": "assistant", "content": ""}, {"content": NO_CITATIONS}, {}, "[DONE]"]
    assert data[2]["choices"][0]["finish_reason"] == "stop"


def test_an_error_in_the_stream_is_sent_as_its_data_unescaped():
    w = ChunkWriter(consult_body(body())[0], [], include_usage=False)
    err = {"error": {"type": "LLMUnavailable", "message": "模型不可用"}}
    assert w("error", err) == f"data: {json.dumps(err, ensure_ascii=False)}\n\n"


# --- the routes ------------------------------------------------------------------------------------------------------

def test_models_lists_legalrag_with_the_servers_llm(client, app_client):
    r = client.get("/v1/models")
    assert r.status_code == 200
    listing = r.json()
    assert listing["object"] == "list" and len(listing["data"]) == 1
    m = listing["data"][0]
    assert (m["id"], m["object"], m["owned_by"], m["llm"]) == ("legalrag", "model", "legalrag", app_client[1].model_id)
    assert isinstance(m["created"], int) and abs(m["created"] - time.time()) < 3600
    assert client.get("/v1/models").json() == listing  # the same "created" every time


def test_a_completion_in_the_openai_format_cut_at_its_limit(client, app_client):
    r = post(client, max_tokens=64)
    assert r.status_code == 200 and IGNORED_HEADER.lower() not in r.headers
    c = r.json()
    assert c["id"].startswith("chatcmpl-") and len(c["id"]) == len("chatcmpl-") + 32
    assert c["object"] == "chat.completion" and c["model"] == "legalrag" and c["system_fingerprint"] is None
    assert abs(c["created"] - time.time()) < 60
    ext = c["legalrag"]
    assert c["choices"] == [{"index": 0, "message": {"role": "assistant", "content": ext["answer"] + citation_block(
        ext["citations"]), "refusal": None}, "finish_reason": "length", "logprobs": None}]
    assert ext["answer"] and BLOCK_HEAD + "\n- " in c["choices"][0]["message"]["content"]
    assert c["usage"] == {"prompt_tokens": 7, "completion_tokens": 64, "total_tokens": 71}
    assert ext["ignored_params"] == [] and ext["processor"] and ext["query"]
    assert app_client[1].requests[-1].max_tokens == 64
    assert post(client, max_tokens=65).json()["choices"][0]["finish_reason"] == "stop"


def test_the_completion_is_the_consultation_of_the_same_dialogue(client):
    history = [{"role": "user", "content": "我在公司上班三个月了"}, {"role": "assistant", "content": "请问您想了解什么？"}]
    chat = post(client, messages=[*history, *ASK], legalrag={"processor": "all_questions", "k": 3}).json()["legalrag"]
    plain = client.post("/consult", json={"question": QUESTION, "history": history, "processor": "all_questions",
                                          "k": 3}).json()
    for key in ("answer", "query", "processor", "model", "retrieved", "unresolved", "marks", "not_retrieved", "notes",
                "basis", "fallback", "fallback_reason", "not_from_law"):
        assert chat[key] == plain[key], key
    assert chat["query"] == "我在公司上班三个月了 公司不签劳动合同怎么办？" and len(chat["retrieved"]) == 3
    assert set(chat["timings"]) == set(plain["timings"])


def test_ignored_parameters_travel_in_the_header_and_the_extension(client):
    r = post(client, temperature=0.1, n=1, messages=[{"role": "system", "content": "x"}, *ASK])
    expected = ["n", "temperature", "messages[0] (role system: legalrag's own instructions govern the answer)"]
    assert r.headers[IGNORED_HEADER] == ", ".join(expected) and r.json()["legalrag"]["ignored_params"] == expected


def test_a_streamed_completion_sends_the_same_answer_and_usage_when_asked(client):
    plain = post(client).json()
    r = post(client, stream=True, stream_options={"include_usage": True}, top_p=0.9)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    assert r.headers[IGNORED_HEADER] == "top_p"
    data, comments = chunks(r.text)
    assert "started" in comments and data[-1] == "[DONE]"
    text = "".join(d["choices"][0]["delta"].get("content", "") for d in data[:-1] if d["choices"])
    assert text == plain["choices"][0]["message"]["content"]
    assert data[-2]["choices"] == [] and data[-2]["usage"] == plain["usage"]
    assert data[-3]["choices"][0]["finish_reason"] == "stop" and data[-3]["legalrag"]["ignored_params"] == ["top_p"]
    data, _ = chunks(post(client, stream=True, stream_options={"include_usage": False}).text)
    assert all(d == "[DONE]" or d["choices"] for d in data)
    r = post(client, stream=True)
    data, _ = chunks(r.text)
    assert all(d == "[DONE]" or d["choices"] for d in data) and IGNORED_HEADER.lower() not in r.headers


def test_a_stream_is_refused_with_a_status_before_it_starts():
    client = app(legal_llm(), max_k=5, evidence_tokens=100)
    r = post(client, stream=True, legalrag={"k": 6})
    assert r.status_code == 400 and "k=6 is above this server's limit of 5" in r.json()["error"]["message"]
    r = post(client, stream=True, legalrag={"k": 5, "evidence_tokens": 101})
    assert r.status_code == 400 and "evidence_tokens=101" in r.json()["error"]["message"]
    r = post(app(None), stream=True)
    assert r.status_code == 503
    assert r.json()["error"]["message"].startswith("the consultation needs a language model")


def test_a_full_queue_refuses_a_stream_with_503():
    client = app(legal_llm(), max_waiting=0)
    with client.app.state.context.gate.slot():  # the one slot busy, no room to wait
        r = post(client, stream=True)
    assert r.status_code == 503 and r.json()["error"]["type"] == "Busy"


def test_the_openapi_schema_documents_the_routes(client):
    schema = client.get("/openapi.json").json()
    route = schema["paths"]["/v1/chat/completions"]["post"]
    assert route["tags"] == ["OpenAI-compatible"] and "OpenAI chat format" in route["summary"]
    assert "no language model" in route["responses"]["503"]["description"]
    assert {"400", "401", "413", "415", "422", "429"} <= set(route["responses"])
    models = schema["paths"]["/v1/models"]["get"]
    assert models["tags"] == ["OpenAI-compatible"] and "'legalrag'" in models["summary"]
    assert schema["components"]["schemas"]["ChatCompletionBody"]["properties"]["model"]["description"] == \
        "'legalrag' (GET /v1/models)"
