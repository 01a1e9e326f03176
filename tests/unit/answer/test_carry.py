"""The `carry` processor: a follow-up keeps the articles the consultation established while the topic holds (the
double-wage follow-up retrieves 劳动合同法第八十二条), lets them go on a new point, stays bounded over 30 turns,
and shows what it carried; consultation files whose turns alternate wrongly or hold empty questions are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from legalrag.answer.processors import make_processor
from legalrag.errors import InputError
from legalrag.answer.carry import FollowUp, cited_documents, content_chars
from legalrag.types import Turn

SAMPLE = Path(__file__).resolve().parents[3] / "src" / "legalrag" / "data" / "statutes_sample.jsonl"
DOUBLE_WAGE = "公司一直不跟我签书面劳动合同，我可以要求公司支付双倍工资吗？"
FOLLOW = "那最多能要几个月？"


@pytest.fixture(scope="module")
def sample():
    from legalrag.corpora.statutes import load_statutes
    from legalrag.retrieval.index import build_index

    docs = load_statutes(SAMPLE)
    index = build_index(Path(__import__("tempfile").mkdtemp()) / "index", docs, ["bm25"], lang="zh")
    from legalrag.retrieval.pipeline import build_pipeline

    pipe = build_pipeline(index, retriever="bm25")
    by_title = {d.title: d.id for d in docs}
    return (lambda q, k: pipe.search(q, k=k)), by_title, docs


def _titles(hits):
    return [h.document.title for h in hits]


@pytest.mark.parametrize("answer", [
    "可以。用人单位自用工之日起超过一个月不满一年未与劳动者订立书面劳动合同的，应当向劳动者每月支付二倍的工资。",
    "可以要求，建议先保留好工资流水和考勤记录。",  # an answer that neither cites nor restates the article
])
def test_the_double_wage_follow_up_retrieves_article_82(sample, answer):
    search, by_title, _ = sample
    first = search(DOUBLE_WAGE, 6)
    assert "劳动合同法第八十二条" in _titles(first)  # the first question finds it
    dialogue = [Turn("user", DOUBLE_WAGE), Turn("assistant", answer), Turn("user", FOLLOW)]
    alone = search(FOLLOW, 6)
    assert "劳动合同法第八十二条" not in _titles(alone)  # the follow-up alone does not
    proc = make_processor("carry")
    hits = proc.retrieve(search, dialogue, 6)  # 6: the answer engine's k
    assert "劳动合同法第八十二条" in _titles(hits)
    trace = proc.last_trace
    assert by_title["劳动合同法第八十二条"] in trace.carried  # shown to the user as carried
    assert trace.searched[0] == FOLLOW and DOUBLE_WAGE in trace.searched[1]
    strict = FollowUp(short_question=6)  # a detector that counts "最多几个月" as too short to be a point of its own
    assert "劳动合同法第八十二条" in _titles(strict.retrieve(search, dialogue, 6))
    assert strict.last_trace.same_issue is True and "short" in strict.last_trace.reason


def test_cited_articles_of_earlier_answers_are_carried(sample):
    from legalrag.citecheck import CitationResolver

    search, by_title, docs = sample
    proc = FollowUp(cited=cited_documents(CitationResolver.from_documents(docs)), carry_top=1)
    dialogue = [Turn("user", "老板一直没跟我签合同"), Turn("assistant", "依据《劳动合同法》第十条，应当订立书面劳动合同。"),
                Turn("user", "那怎么办？")]
    proc.retrieve(search, dialogue, 6)
    assert by_title["劳动合同法第十条"] in proc.last_trace.established
    assert by_title["劳动合同法第十条"] in proc.last_trace.carried


def test_a_new_point_lets_the_established_articles_go(sample):
    search, by_title, _ = sample
    dialogue = [Turn("user", DOUBLE_WAGE), Turn("assistant", "可以要求二倍工资。"),
                Turn("user", "另外我借给朋友的五万元他一直不还，借款合同没有写利息，我能要利息吗？")]
    proc = FollowUp(moved_share=0.2)  # at most 2 of its own top 10 in the established laws: it has moved
    hits = proc.retrieve(search, dialogue, 6)
    assert proc.last_trace.same_issue is None and proc.last_trace.reason.startswith("moved")
    assert proc.last_trace.to_dict()["moved"] is True and proc.last_trace.carried == ()
    assert [h.id for h in hits] == [h.id for h in search(dialogue[-1].content, 6)]  # its own search alone
    assert "劳动合同法第八十二条" not in _titles(hits)
    top3 = FollowUp(moved_share=0.0, overlap_top=3)  # judged on its top 3 (all loan law): moved at any share
    top3.retrieve(search, dialogue, 6)
    assert top3.last_trace.same_issue is None


def test_a_follow_up_in_another_language_keeps_the_topic(sample):
    search, _, _ = sample
    dialogue = [Turn("user", DOUBLE_WAGE), Turn("assistant", "可以要求二倍工资。"),
                Turn("user", "And how many months can I claim at most?")]
    proc = FollowUp(short_question=0)
    hits = proc.retrieve(search, dialogue, 6)
    assert proc.last_trace.same_issue is True and "language" in proc.last_trace.reason
    assert "劳动合同法第八十二条" in _titles(hits)


def test_a_thirty_turn_consultation_searches_a_bounded_history(sample):
    search, _, _ = sample
    calls = []

    def counted(q, k):
        calls.append(q)
        return search(q, k)

    proc = FollowUp(max_turns=4)
    turns: list[Turn] = []
    per_turn, looked_at = [], []
    for n in range(30):
        turns = turns + [Turn("user", f"第{n}个问题：公司不签劳动合同{n}次怎么办？")]
        before = len(calls)
        proc.retrieve(counted, turns, 6)
        per_turn.append(len(calls) - before)
        looked_at.append(len(proc.queries(turns)))
        turns = turns + [Turn("assistant", f"第{n}个回答。")]
    assert max(per_turn[10:]) == per_turn[-1] <= 3  # each new turn: its question, its context, the last answer
    assert looked_at[-1] == looked_at[15] == looked_at[8]  # only the last max_turns turns are looked at


def test_content_chars_and_bad_options():
    assert content_chars("那最多能要几个月？") <= 6
    assert content_chars("借款合同没有约定利息，出借人能否主张利息？") > 10
    with pytest.raises(InputError, match="carry_top"):
        FollowUp(carry_top=0)
    with pytest.raises(InputError, match="carry_same"):
        FollowUp(carry_same=-1)


def test_dialogues_whose_roles_alternate_wrongly_or_ask_nothing_are_refused(tmp_path):
    from legalrag.evaluation.lexrag.data import load_consultations

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "d7", "conversation": [
        {"role": "user", "content": "公司不签合同"}, {"role": "assistant", "content": "可以要求二倍工资"},
        {"role": "assistant", "content": "重复的回答"}]}], ensure_ascii=False))
    with pytest.raises(InputError, match=r"dialogue 'd7' turn 2 \(message 3\) has role 'assistant'") as err:
        load_consultations(bad, turns=None)
    assert "bad.json" in str(err.value)
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps([{"id": "d8", "conversation": [{"user": "公司不签合同", "assistant": "可以"},
                                                              {"user": "  ", "assistant": "x"}]}], ensure_ascii=False))
    with pytest.raises(InputError, match=r"dialogue 'd8' turn 2 field 'user' is empty"):
        load_consultations(empty, turns=None)
    items = tmp_path / "turn_2.json"
    items.write_text(json.dumps([{"id": "i3", "current_question": "那呢？", "history": [
        {"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}], ensure_ascii=False))
    with pytest.raises(InputError, match=r"item 'i3' history entry 2 has role 'user' where 'assistant' belongs"):
        load_consultations(items, turns=None)
    good = tmp_path / "good.json"
    good.write_text(json.dumps([{"id": "d9", "conversation": [
        {"role": "user", "content": "公司不签合同", "article": ["劳动合同法第八十二条"]},
        {"role": "assistant", "content": "可以"}, {"role": "user", "content": "那最多几个月？"}]}], ensure_ascii=False))
    rows = load_consultations(good, turns=None)
    assert [t.question for t in rows] == ["公司不签合同", "那最多几个月？"] and rows[0].articles == ("劳动合同法第八十二条",)
    assert rows[1].history == (Turn("user", "公司不签合同"), Turn("assistant", "可以"))


def test_the_llm_rewrite_through_an_openai_endpoint_retrieves_article_82(sample):
    """The rewrite processor over a user's endpoint: a local 127.0.0.1 server speaking the OpenAI wire format
    receives the dialogue and returns the standalone question, which retrieval then runs."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from legalrag.llm.openai_compat import OpenAICompatLLM

    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (the http.server name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            reply = {"id": "c1", "object": "chat.completion", "model": body["model"],
                     "choices": [{"index": 0, "finish_reason": "stop", "message": {
                         "role": "assistant", "content": "用人单位不签书面劳动合同，劳动者最多能要几个月的二倍工资？"}}],
                     "usage": {"prompt_tokens": 120, "completion_tokens": 20, "total_tokens": 140}}
            data = json.dumps(reply, ensure_ascii=False).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        llm = OpenAICompatLLM(f"http://127.0.0.1:{server.server_address[1]}/v1", "rewriter", max_retries=0)
        search, _, _ = sample
        proc = make_processor("rewrite", llm)
        dialogue = [Turn("user", DOUBLE_WAGE), Turn("assistant", "可以要求二倍工资。"), Turn("user", FOLLOW)]
        query = proc(dialogue)
        assert query.startswith("用人单位不签书面劳动合同") and proc.tokens == 140
        prompt = json.dumps(seen[0]["messages"], ensure_ascii=False)
        assert DOUBLE_WAGE in prompt and FOLLOW in prompt and seen[0]["model"] == "rewriter"
        assert "劳动合同法第八十二条" in _titles(search(query, 6))
    finally:
        server.shutdown()


def test_eval_conversation_takes_every_chat_processor_and_reports_the_gold_repeat(tmp_path):
    from typer.testing import CliRunner

    from legalrag.cli import app
    from legalrag.answer.processors import PROCESSORS

    dialogues = [{"id": "dw", "conversation": [
        {"user": DOUBLE_WAGE, "assistant": "可以，依据《劳动合同法》第八十二条。", "article": ["《劳动合同法》第八十二条"]},
        {"user": FOLLOW, "assistant": "最多十一个月。", "article": ["《劳动合同法》第八十二条"]},
        {"user": "那试用期最长能约定多久？", "assistant": "视合同期限而定。", "article": ["《劳动合同法》第十九条"]}]}]
    data = tmp_path / "d.json"
    data.write_text(json.dumps(dialogues, ensure_ascii=False), encoding="utf-8")
    from legalrag.corpora.statutes import load_statutes
    from legalrag.retrieval.index import build_index

    index = build_index(tmp_path / "index", load_statutes(SAMPLE), ["bm25"], lang="zh")
    base = ["eval", "conversation", "--data", str(data), "--index", str(index.path), "-o", "turns=0", "--no-progress"]
    res = CliRunner().invoke(app, base + ["--json"])
    assert res.exit_code == 0, res.output
    payload = json.loads(res.stdout[res.stdout.index("{"):])
    from legalrag.answer.processors import DEFAULT_PROCESSOR

    assert [r["processor"] for r in payload["table"]] == [DEFAULT_PROCESSOR]  # chat's default
    assert payload["gold_repeat"]["rate"] == 0.5 and payload["gold_repeat"]["by_turn"] == {"2": 1.0, "3": 0.0}
    every = [x for p in PROCESSORS if p != "rewrite" for x in ("--processor", p)]
    res = CliRunner().invoke(app, base + every)
    assert res.exit_code == 0, res.output
    assert "carry" in res.output and "gold repeats an earlier turn's article: all later turns 0.500" in res.output
    help_text = CliRunner().invoke(app, ["eval", "consultation-generate", "--help"]).output
    assert all(p in help_text for p in PROCESSORS)
