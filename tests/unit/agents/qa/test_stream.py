"""The QA summary and `legalrag chat` stream the answer as it is generated; streamed calls are metered like any other."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from legalrag.agents.qa import run_qa
from legalrag.llm.base import ChatRequest
from legalrag.llm.usage import MeteredLLM
from legalrag.search.local import LocalDocumentsSource
from legalrag.testing import ScriptedLLM
from legalrag.wiring import Root

STATUTE = "# 中华人民共和国民法典第一百八十八条\n\n向人民法院请求保护民事权利的诉讼时效期间为三年。法律另有规定的，依照其规定。\n"
PLAN = '{"intents": [{"query": "诉讼时效期间", "source": "local", "priority": 1}]}'


def test_a_backend_without_stream_is_not_given_one_by_the_meter():
    metered = MeteredLLM(ScriptedLLM(["x"]))
    assert getattr(metered, "stream", None) is None  # stream_chat then falls back to one chat call


@pytest.mark.llm
def test_summary_streams_in_pieces_and_is_metered_like_a_plain_call(tmp_path, llm):
    (tmp_path / "民法典.md").write_text(STATUTE, encoding="utf-8")
    sources = {"local": LocalDocumentsSource(tmp_path)}
    pieces: list[str] = []
    streamed = run_qa("诉讼时效期间是几年？", llm, sources, max_answer_tokens=40, on_text=pieces.append)
    plain = run_qa("诉讼时效期间是几年？", llm, sources, max_answer_tokens=40)
    assert len(pieces) > 1  # token by token, not one piece at the end
    assert "".join(pieces).strip() == streamed.answer == plain.answer  # greedy, seed 0: the same answer
    # the streamed summary call is counted with its tokens, as the plain one is
    assert streamed.llm_calls == plain.llm_calls >= 2
    assert streamed.usage.completion_tokens == plain.usage.completion_tokens > 0


@pytest.mark.llm
def test_metered_stream_counts_tokens_once_read(llm):
    metered = MeteredLLM(llm)
    stream = metered.stream(ChatRequest(messages=({"role": "user", "content": "用一句话说：你好"},), max_tokens=8))
    assert metered.usage.calls == 0
    text = "".join(stream)
    assert text and metered.usage.calls == 1 and metered.usage.completion_tokens == stream.result.completion_tokens


def test_qa_cli_prints_a_streamed_answer_once_and_then_its_checks(tmp_path):
    (tmp_path / "民法典.md").write_text(STATUTE, encoding="utf-8")
    answer = "诉讼时效期间为三年[1]。另见[4]。"
    llm = ScriptedLLM([PLAN, answer])
    res = CliRunner().invoke(_app(), ["qa", "诉讼时效期间是几年？", "--docs", str(tmp_path)], obj=Root(llm=llm))
    assert res.exit_code == 0, res.output
    assert res.output.count(answer) == 1 and res.output.index(answer) < res.output.index("Sources")
    assert "point to no retrieved source" in res.output and "[4]" in res.output.split("Sources")[1]


def test_qa_cli_shows_the_final_answer_when_the_streamed_one_was_rewritten(tmp_path):
    (tmp_path / "民法典.md").write_text(STATUTE, encoding="utf-8")
    english, chinese = "The limitation period is three years [1].", "诉讼时效期间为三年[1]。"
    llm = ScriptedLLM([PLAN, english, chinese])  # a reply in the wrong language is asked once more
    res = CliRunner().invoke(_app(), ["qa", "诉讼时效期间是几年？", "--docs", str(tmp_path)], obj=Root(llm=llm))
    assert res.exit_code == 0, res.output
    assert english in res.output and "replaced; the final answer" in res.output and chinese in res.output


def _app():
    from legalrag.cli import main  # noqa: F401  (registers the command modules)
    from legalrag.cli.apps import app

    return app
