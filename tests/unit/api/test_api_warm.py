"""``lr.ask`` and ``lr.chat`` take the path the commands take: a running ``legalrag serve`` (a real uvicorn server
on 127.0.0.1) answers when it is up, and its reply comes back as the same frozen ``Answer`` that this process
builds for the same scripted model; without a server, or with ``local=True``, this process answers."""

from __future__ import annotations

import pytest
from support.http_app import free_port, serve_app

import legalrag
from legalrag.retrieval.index import build_index, open_index
from legalrag.serialize import answer_from_dict, answer_to_dict
from legalrag.server import ServerSettings, create_app
from legalrag.testing import ScriptedLLM
from legalrag.types import Answer
from legalrag.wiring import make_support_scorer
from unit.citecheck.test_marks import DOCS

pytest.importorskip("fastapi")

QUESTION = "公司一直不跟我签书面劳动合同，我可以要求公司支付二倍的工资吗？"
ANSWER = ("可以。依据《中华人民共和国劳动合同法》第八十二条，用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，"
          "应当向劳动者每月支付二倍的工资。另见《中华人民共和国刑法》第九百九十九条。")
FOLLOW = "超过一年仍未订立的，视为已订立无固定期限劳动合同。"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("api-warm") / "idx"
    build_index(out, DOCS, retrievers=("bm25",), lang="zh")
    return out


@pytest.fixture
def server(index_dir, monkeypatch):
    """A legalrag server over the index with a scripted model, at the serve address ``legalrag.open`` reads."""
    served = ScriptedLLM([ANSWER, FOLLOW])
    with serve_app(create_app(open_index(index_dir), served, ServerSettings(rate_limit=0),
                               support=make_support_scorer())) as url:
        monkeypatch.setenv("LEGALRAG_SERVE_PORT", url.rsplit(":", 1)[1])
        yield url, served


def shape(answer: Answer) -> tuple:
    """What an answer says, without the seconds it took."""
    return (answer.question, answer.text, answer.citations, [(h.document.id, h.rank, h.score) for h in answer.sources],
            [(s.agent, s.action) for s in answer.steps], answer.usage.calls)


def test_ask_is_answered_by_the_running_server_as_this_process_would(server, index_dir, monkeypatch):
    url, served = server
    here = ScriptedLLM([ANSWER])
    lr = legalrag.open(index_dir, llm=here)
    pieces: list[str] = []
    remote = lr.ask(QUESTION, on_text=pieces.append)
    assert served.calls == 1 and here.calls == 0  # the server's model answered; this process called none
    assert lr.answered_by.startswith(f"the legalrag server at {url}")
    assert isinstance(remote, Answer) and remote.text.endswith(ANSWER) and "".join(pieces) == remote.text
    real, invented = remote.citations[-2:]  # the marks travel with the citations
    assert real.resolved and real.in_retrieved and real.mark in ("supported", "exists")
    assert not invented.resolved and invented.mark == "not_found" and invented.note

    monkeypatch.setenv("LEGALRAG_SERVE_PORT", str(free_port()))  # no server there: this process answers
    lr_here = legalrag.open(index_dir, llm=ScriptedLLM([ANSWER]))
    local = lr_here.ask(QUESTION)
    assert lr_here.answered_by.startswith("this process (no legalrag server at http://127.0.0.1:")
    assert shape(remote) == shape(local)


def test_local_skips_the_running_server(server, index_dir):
    _, served = server
    here = ScriptedLLM([ANSWER])
    lr = legalrag.open(index_dir, llm=here, local=True)
    answer = lr.ask(QUESTION)
    assert here.calls == 1 and served.calls == 0 and answer.text.endswith(ANSWER)
    assert lr.answered_by == "this process (--local)"


def test_another_model_is_answered_in_this_process(server, index_dir):
    _, served = server
    lr = legalrag.open(index_dir, llm=ScriptedLLM([ANSWER]), model="qwen2.5-coder-0.5b")
    lr.ask(QUESTION)
    assert served.calls == 0 and lr.answered_by.startswith("this process (--model qwen2.5-coder-0.5b: the server")


def test_chat_sends_the_dialogue_to_the_server_each_turn(server, index_dir):
    _, served = server
    chat = legalrag.open(index_dir, llm=ScriptedLLM(["本进程。"])).chat()
    first = chat.ask(QUESTION)
    second = chat.ask("那如果超过一年呢？")
    assert first.text.endswith(ANSWER) and second.text.endswith(FOLLOW) and served.calls == 2
    shown = "\n".join(m["content"] for m in served.requests[1].messages)
    assert QUESTION in shown  # the first turn is the second answer's context, sent with the message
    assert [t.content for t in chat.turns] == [QUESTION, first.text, "那如果超过一年呢？", second.text]
    assert chat.last_trace.get("searched")


def test_answer_from_dict_inverts_answer_to_dict(index_dir):
    answer = legalrag.open(index_dir, llm=ScriptedLLM([ANSWER]), local=True).ask(QUESTION)
    back = answer_from_dict(answer_to_dict(answer))
    assert back.citations == answer.citations and back.text == answer.text
    assert [(s.agent, s.action, s.input, s.output) for s in back.steps] == \
        [(s.agent, s.action, s.input, s.output) for s in answer.steps]  # seconds kept to the millisecond
    assert [(h.document.id, h.document.text, h.document.metadata) for h in back.sources] == \
        [(h.document.id, h.document.text, dict(h.document.metadata)) for h in answer.sources]
    assert back.usage.calls == answer.usage.calls and back.usage.completion_tokens == answer.usage.completion_tokens
    with pytest.raises(legalrag.errors.InputError, match="'text'"):
        answer_from_dict({"citations": []})
