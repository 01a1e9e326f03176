"""The routes of ``routes_search`` and ``routes_llm`` as a client sees them, field by field: what /health, /index,
/capabilities, /laws and /documents say of the server; /search and /citations/check with their options (``k``,
``laws``, ``as_of``, ``annotate``, a file instead of text) and their errors (status, field, message); the agents
search's pool and its stream; the events of the /ask, /consult and /draft streams in order (the index that answers,
the stages of each drafter), the payloads of /draft (both drafters), /cite and /judgment/structure, and the checks a
stream makes before it starts. Over a BM25 index of the bundled statute sample with a scripted model."""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import os
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402
from support.sse import events
from support.paths import REPO  # noqa: E402
from support.server_setup import DRAFT, REAL, REAL_ID, legal_llm, sample_index, sample_predictor  # noqa: E402

from legalrag.laws.reader import read_folder  # noqa: E402
from legalrag.laws.versions import build_library  # noqa: E402
from legalrag.server import ServerSettings, create_app  # noqa: E402

try:  # the app's MCP endpoint (test_app's apps) imports it, seconds, once per process: here at collection, so
    import mcp  # noqa: F401  # that each mutant's run, forked after it, has it already
except ImportError:
    pass
# Built when the module is collected, not per test: the mutation tool forks each mutant's run from the process
# that collected the tests, so every mutant finds them built (no code of the modules under test runs here).
_TMP = Path(tempfile.mkdtemp(prefix="legalrag-routes-mutants-"))
INDEX = sample_index(_TMP / "idx")
OTHER = sample_index(_TMP / "other")  # a second index a request may name
# the law versions every app here reads (the fixture's few laws: not the national library, seconds to load)
LIB = build_library(read_folder(REPO / "tests" / "data" / "laws-2025-mini" / "good"), repeal_table=None)
QUESTION = "公司不签劳动合同怎么办"
FACTS = "被告人张某盗窃他人手机一部，价值三千元。"
TEXT = f"依照{REAL}的规定，应当订立书面劳动合同。"


def app(llm=None, **options):
    """The app over ``index`` (default the sample's; ``create_app`` keywords pass through) reading the fixture's
    law versions; no MCP endpoint, no rate limit."""
    index = options.pop("index", INDEX)
    extra = {k: options.pop(k) for k in ("predictor", "structure", "open_index", "agents_llm") if k in options}
    return TestClient(create_app(index, llm, ServerSettings(rate_limit=0, mcp=False, **options), versions=lambda: LIB,
                                 **extra))




def names(seq):
    return [n for n, _ in seq]


@pytest.fixture
def client():  # an app per test: mutmut runs a mutant of ``router`` only with the tests that called it
    return app(legal_llm(), max_k=50)


@pytest.fixture(scope="module")
def versions():
    """The fixture's law versions and a BM25 index of them."""
    from legalrag.national_versions import version_documents
    from legalrag.retrieval.index import build_index, open_index

    out = _TMP / "versions"
    if not out.exists():
        build_index(out, list(version_documents(LIB)), retrievers=("bm25",), lang="zh")
    return LIB, open_index(out)


@pytest.fixture(scope="module")
def predictor(tmp_path_factory):
    return sample_predictor(INDEX, tmp_path_factory.mktemp("cite"))


@pytest.fixture(scope="module")
def structure():
    pytest.importorskip("lightgbm")
    from support.server_setup import sample_structure

    return sample_structure()


# --- what the server says of itself ------------------------------------------------------------------------------

def test_health_says_what_runs_without_a_key():
    from legalrag import __version__
    from legalrag.retrieval.index import open_index

    keyed = TestClient(create_app(INDEX, legal_llm(), ServerSettings(rate_limit=0, mcp=False, api_keys=("k" * 24,),
                                                                     max_indexes=3, evidence_tokens=300)))
    r = keyed.get("/health")
    assert r.status_code == 200
    h = r.json()
    ctx = keyed.app.state.context
    assert h == {"status": "ok", "service": "legalrag", "version": __version__, "build": ctx.build, "pid": os.getpid(),
                 "llm": "scripted", "index": str(INDEX.path), "indexes": ctx.held_indexes(), "max_indexes": 0,
                 "evidence_tokens": 300, "busy": {"active": 0, "waiting": 0}}
    assert h["indexes"] == [h["index"]]
    assert keyed.get("/index").status_code == 401  # the other routes need the key
    opening = app(None, max_indexes=3, open_index=open_index)
    assert opening.get("/health").json()["max_indexes"] == 3 and opening.get("/health").json()["llm"] is None


def test_health_counts_the_generations_running():
    client = app(legal_llm())
    with client.app.state.context.gate.slot():
        assert client.get("/health").json()["busy"] == {"active": 1, "waiting": 0}


def test_index_says_what_it_holds(client):
    assert client.get("/index").json() == {"path": str(INDEX.path), "components": ["bm25"], "default": "bm25",
                                           "corpus": INDEX.manifest["corpus"], "lang": "zh"}


def test_capabilities_follow_the_models_the_server_has(predictor):
    from legalrag.answer.processors import DEFAULT_PROCESSOR, PROCESSORS

    policy = legal_llm()
    caps = app(legal_llm(), max_k=40, evidence_tokens=250, predictor=predictor, agents_llm=policy).get(
        "/capabilities").json()
    assert caps == {"lang": "zh", "retrievers": ["bm25"], "default_retriever": "bm25", "processors": list(PROCESSORS),
                    "default_processor": DEFAULT_PROCESSOR, "max_k": 40, "llm": "scripted", "evidence_tokens": 250,
                    "agents_llm": policy.model_id,
                    "features": {"search": True, "ask": True, "agents": True, "draft": True, "cite": True,
                                 "judgment_structure": False},
                    "documents": len(INDEX.documents)}
    bare = app(None).get("/capabilities").json()
    assert bare["features"] == {"search": True, "ask": False, "agents": False, "draft": False, "cite": False,
                                "judgment_structure": False}
    assert bare["llm"] is None and bare["agents_llm"] is None


def test_laws_count_the_articles_of_each_law(client):
    laws = client.get("/laws").json()["laws"]
    counts: dict[str, int] = {}
    for d in INDEX.documents:
        if d.metadata.get("law"):
            counts[d.metadata["law"]] = counts.get(d.metadata["law"], 0) + 1
    assert {law["title"]: law["articles"] for law in laws} == counts


def test_a_document_by_id_and_a_missing_one(client):
    doc = client.get(f"/documents/{REAL_ID}")
    assert doc.status_code == 200 and doc.json()["id"] == REAL_ID and doc.json()["citation"] == REAL
    r = client.get("/documents/no/such")
    assert r.status_code == 404
    assert r.json() == {"error": {"type": "NotFound", "message": "no document 'no/such' in the index"}}


# --- /search -----------------------------------------------------------------------------------------------------

def test_search_returns_k_ranked_hits_with_the_query_and_its_terms(client):
    out = client.post("/search", json={"query": "用人单位拖欠工资", "k": 4}).json()
    assert out["query"] == "用人单位拖欠工资" and out["retriever"] == "bm25" and len(out["hits"]) == 4
    assert out["terms"] == client.app.state.context.terms("用人单位拖欠工资") and "notes" not in out
    assert [h["rank"] for h in out["hits"]] == [1, 2, 3, 4]
    within = client.post("/search", json={"query": "合同", "k": 5, "laws": ["劳动合同法"]}).json()["hits"]
    assert len(within) == 5 and all(h["metadata"]["law"] == "劳动合同法" for h in within)
    r = client.post("/search", json={"query": "合同", "k": 51})
    assert r.status_code == 400 and r.json()["error"]["message"] == "k=51 is above this server's limit of 50"
    assert client.post("/search", json={"query": "合同", "k": 50}).status_code == 200


def test_search_as_of_reads_the_versions_in_force_and_says_when_it_used_an_older_one(versions):
    _, vindex = versions
    client = app(None, index=vindex)
    q = {"query": "有限责任公司的注册资本 全体股东认缴的出资额", "k": 3}
    assert client.post("/search", json={**q, "as_of": "2020-01-01"}).json()["hits"][0]["id"] == "公司法第四条@2018-10-26"
    new = client.post("/search", json={**q, "as_of": "2025-01-01"}).json()
    assert new["hits"][0]["id"] == "公司法第五条@2023-12-29" and isinstance(new["notes"], list)
    early = client.post("/search", json={**q, "as_of": "2000-01-01"}).json()
    assert any(n.startswith("no version of 公司法 held for 2000-01-01") for n in early["notes"])
    assert "notes" not in client.post("/search", json=q).json()


# --- /citations/check ----------------------------------------------------------------------------------------------

def test_check_marks_the_citations_of_a_text_or_of_a_file(client):
    plain = client.post("/citations/check", json={"text": TEXT}).json()
    assert [c["document_id"] for c in plain["citations"]] == [REAL_ID] and "annotated" not in plain
    assert "currency" not in plain
    sent = base64.b64encode(TEXT.encode()).decode()
    from_file = client.post("/citations/check", json={"file": sent, "filename": "memo.TXT"}).json()
    assert from_file["citations"] == plain["citations"]
    md = client.post("/citations/check", json={"text": TEXT, "annotate": "md"}).json()["annotated"]
    html = client.post("/citations/check", json={"text": TEXT, "annotate": "html"}).json()["annotated"]
    assert "**Citations checked**" in md and "<" not in md.split("---")[0]
    assert html.lstrip().startswith("<") and "**Citations checked**" not in html


@pytest.mark.parametrize("request_body, field, message", [
    ({}, "text", "give either text or file (base64) with filename"),
    ({"text": TEXT, "file": "AAAA", "filename": "a.txt"}, "text", "give either text or file (base64) with filename"),
    ({"file": "AAAA"}, "filename", "unsupported file type '(none)' for the file; send one of .docx, .htm, .html, "
                                   ".markdown, .md, .pdf, .text, .txt"),
    ({"file": "AAAA", "filename": "a.exe"}, "filename", "unsupported file type '.exe' for a.exe; send one of .docx, "
                                                        ".htm, .html, .markdown, .md, .pdf, .text, .txt"),
    ({"file": "!!!", "filename": "a.txt"}, "file", "file is not valid base64"),
    ({"file": "QUJD\nREVG", "filename": "a.txt"}, "file", "file is not valid base64"),
    ({"as_of": "yesterday"}, "as_of", "'yesterday' is not a date; write it as YYYY-MM-DD (e.g. 2020-01-01)"),
])
def test_check_refuses_bad_input_naming_the_field(client, request_body, field, message):
    r = client.post("/citations/check", json=request_body)
    assert r.status_code == 400
    assert r.json()["error"]["message"] == message and r.json()["error"]["fields"][0]["field"] == field


def test_check_as_of_adds_each_citations_currency_and_reads_that_days_texts(versions):
    _, vindex = versions
    client = app(None, index=vindex)
    memo = "依照《中华人民共和国公司法》第四条的规定，有限责任公司的注册资本为全体股东认缴的出资额。"
    now = client.post("/citations/check", json={"text": memo}).json()
    then = client.post("/citations/check", json={"text": memo, "as_of": "2020-01-01"}).json()
    assert [c["document_id"] for c in then["citations"]] == ["公司法第四条@2018-10-26"]
    assert now["citations"][0]["document_id"] != then["citations"][0]["document_id"]
    assert len(then["currency"]) == 1 and then["currency"][0]["as_of"] == "2020-01-01"


# --- the agents search -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("k, pool", [(3, 10), (10, 10), (11, 11), (30, 30), (31, 30), (50, 30)])
def test_the_agents_search_pools_k_articles_per_retrieval_between_10_and_30(client, k, pool):
    out = client.post("/agents/search", json={"query": "公司不签合同能要双倍工资吗", "k": k}).json()
    retrievals = [s for s in out["trajectory"] if s["action"] == "retrieve"]
    assert retrievals and all(len(s["output"]["ids"]) == pool for s in retrievals)
    assert len(out["hits"]) <= k and (len(out["hits"]) == k or k > pool)
    assert out["retriever"] == "mas(bm25)" and out["query"] == "公司不签合同能要双倍工资吗"
    assert out["terms"] == client.app.state.context.terms(out["query"]) and out["summary"]["queue_s"] == 0.0


def test_the_agents_search_honours_rounds_fused_and_laws(client):
    q = "公司不签合同能要双倍工资吗"
    one = client.post("/agents/search", json={"query": q, "k": 5, "max_rounds": 1}).json()
    assert one["summary"]["rounds"] == 1 and one["summary"]["stop_reason"] == "max_rounds"
    two = client.post("/agents/search", json={"query": q, "k": 5, "max_rounds": 2}).json()
    assert two["summary"]["stop_reason"] != "max_rounds"
    fused = client.post("/agents/search", json={"query": q, "k": 5, "max_rounds": 1, "fused": True}).json()
    assert fused["summary"]["llm_calls"] != one["summary"]["llm_calls"]
    within = client.post("/agents/search", json={"query": q, "k": 5, "laws": ["劳动合同法"]}).json()
    assert within["hits"] and all(h["metadata"]["law"] == "劳动合同法" for h in within["hits"])
    assert client.post("/agents/search", json={"query": q, "k": 51}).status_code == 400
    r = client.post("/agents/search", json={"query": q, "k": 5, "retriever": "dense"})
    assert r.status_code == 400 and "no 'dense' retriever" in r.json()["error"]["message"]


def test_the_agents_stream_sends_started_each_step_then_the_same_payload(client):
    body = {"query": "公司不签合同能要双倍工资吗", "k": 5, "max_rounds": 2}
    plain = client.post("/agents/search", json=body).json()
    r = client.post("/agents/search/stream", json=body)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    seq = events(r.text)
    assert seq[0] == ("started", {"queue_s": 0.0, "max_rounds": 2})
    steps = [d for n, d in seq if n == "step"]
    assert names(seq) == ["started", *["step"] * len(steps), "done"]
    done = seq[-1][1]
    assert [(s["agent"], s["action"]) for s in steps] == [(s["agent"], s["action"]) for s in done["trajectory"]]
    assert [h["id"] for h in done["hits"]] == [h["id"] for h in plain["hits"]]
    assert done["retriever"] == "mas(bm25)" and done["summary"]["queue_s"] == 0.0


def test_the_agents_stream_is_refused_with_a_status_before_it_starts():
    q = {"query": "试用期", "k": 5}
    r = app(legal_llm(), max_k=4).post("/agents/search/stream", json=q)
    assert r.status_code == 400 and "k=5 is above this server's limit of 4" in r.json()["error"]["message"]
    assert app(None).post("/agents/search/stream", json=q).status_code == 503
    full = app(legal_llm(), max_waiting=0)
    with full.app.state.context.gate.slot():
        r = full.post("/agents/search/stream", json=q)
    assert r.status_code == 503 and r.json()["error"]["type"] == "Busy"


@contextlib.contextmanager
def slot_held_for(client, seconds: float):
    """The server's only slot taken by another request for ``seconds`` while the block's request queues."""
    gate = client.app.state.context.gate
    release, held = threading.Event(), threading.Event()

    def hold():
        with gate.slot():
            held.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(5)
    threading.Timer(seconds, release.set).start()
    try:
        yield
    finally:
        t.join()


@pytest.mark.parametrize("path, body", [("/agents/search", {"query": "试用期", "k": 3}),
                                        ("/ask", {"question": QUESTION, "k": 2}), ("/draft", {"facts": FACTS})])
def test_a_queued_json_request_waits_and_reports_the_wait(path, body):
    client = app(legal_llm(), max_waiting=2)
    with slot_held_for(client, 0.5):
        r = client.post(path, json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    waited = (out.get("timings") or out.get("summary"))["queue_s"]
    assert 0.3 < waited < 9 and round(waited, 4) == waited


@pytest.mark.parametrize("path, body", [("/agents/search/stream", {"query": "试用期", "k": 3}),
                                        ("/ask/stream", {"question": QUESTION, "k": 2}),
                                        ("/consult/stream", {"question": QUESTION, "k": 2}),
                                        ("/draft/stream", {"facts": FACTS})])
def test_a_queued_stream_says_its_position_then_starts(path, body):
    client = app(legal_llm(), max_waiting=2)
    with slot_held_for(client, 0.5):
        seq = events(client.post(path, json=body).text)
    assert seq[0] == ("queued", {"position": 1}) and seq[1][0] == "started"
    waited = seq[1][1]["queue_s"]
    assert 0.3 < waited < 9 and round(waited, 4) == waited  # in seconds, to the tenth of a millisecond
    done = seq[-1][1]
    assert seq[-1][0] == "done"
    assert (done.get("timings") or done["summary"])["queue_s"] == waited


# --- answers and consultations: the index that answers, the events ---------------------------------------------------

def test_the_ask_stream_says_which_index_answers_and_streams_the_answer(client):
    seq = events(client.post("/ask/stream", json={"question": QUESTION, "k": 2}).text)
    assert names(seq)[:2] == ["started", "retrieved"] and names(seq)[-1] == "done"
    assert seq[0][1] == {"queue_s": 0.0, "index": str(INDEX.path), "index_load": "held", "index_load_s": 0.0,
                         "as_of": None}
    retrieved = seq[1][1]
    assert retrieved["query"] == QUESTION and len(retrieved["hits"]) == 2
    done = seq[-1][1]
    assert "".join(d["text"] for n, d in seq if n == "token") == done["answer"]
    assert [h["id"] for h in retrieved["hits"]] == [h["id"] for h in done["retrieved"]]


@pytest.mark.parametrize("path", ["/ask/stream", "/consult/stream"])
def test_a_request_naming_another_index_loads_it_once_and_says_so(path):
    from legalrag.retrieval.index import open_index

    client = app(legal_llm(), max_indexes=1, open_index=open_index)
    body = {"question": QUESTION, "k": 2, "index": str(OTHER.path)}
    seq = events(client.post(path, json=body).text)
    assert seq[0] == ("stage", {"stage": "load_index", "index": str(OTHER.path)})
    assert seq[1][0] == "started" and seq[1][1]["index"] == str(OTHER.path) and seq[1][1]["index_load"] == "loaded"
    again = events(client.post(path, json=body).text)
    assert again[0][0] == "started" and again[0][1]["index_load"] == "held"
    assert client.post(path.replace("/stream", ""), json=body).status_code == 200
    r = app(legal_llm()).post(path.replace("/stream", ""), json=body)
    assert r.status_code == 409 and r.json()["error"]["type"] == "IndexNotHeld"


def test_ask_as_of_answers_from_that_days_versions(versions):
    _, vindex = versions
    client = app(legal_llm(), index=vindex)
    q = {"question": "有限责任公司的注册资本是什么", "k": 3}
    seq = events(client.post("/ask/stream", json={**q, "as_of": "2020-01-01"}).text)
    assert seq[0][0] == "started" and seq[0][1]["as_of"] == "2020-01-01"
    assert "公司法第四条@2018-10-26" in [h["id"] for h in seq[1][1]["hits"]]
    assert all("@2018" not in h["id"] for h in client.post("/ask", json={**q, "as_of": "2025-01-01"}).json()["retrieved"])
    seq = events(client.post("/consult/stream", json={**q, "as_of": "2020-01-01"}).text)
    assert seq[0][1]["as_of"] == "2020-01-01"


def test_ask_passes_the_requests_settings_to_the_model():
    llm = legal_llm()
    client = app(llm)
    body = client.post("/ask", json={"question": QUESTION, "k": 3, "max_tokens": 77}).json()
    assert llm.requests[-1].max_tokens == 77 and len(body["retrieved"]) == 3 and body["timings"]["queue_s"] == 0.0
    assert body["model"] == "scripted"
    client.post("/consult", json={"question": QUESTION, "k": 3, "max_tokens": 78})
    assert llm.requests[-1].max_tokens == 78
    assert client.post("/ask", json={"question": QUESTION, "k": 3, "cache": False}).status_code == 200


def test_an_uncached_ask_reaches_the_model_past_its_cache(tmp_path):
    from legalrag.llm.cache import CachedLLM

    inner = legal_llm()
    cached = CachedLLM(inner, tmp_path / "cache")
    client = app(cached)
    q = {"question": QUESTION, "k": 2}
    client.post("/ask", json=q)
    calls = inner.calls
    client.post("/ask", json=q)
    assert inner.calls == calls  # the cached answer
    client.post("/ask", json={**q, "cache": False})
    assert inner.calls > calls


@pytest.mark.parametrize("path", ["/ask", "/consult"])
def test_the_answer_style_reaches_the_answer(path):
    client = app(legal_llm())
    guided = client.post(path, json={"question": QUESTION, "k": 2}).json()["answer"]
    brief = client.post(path, json={"question": QUESTION, "k": 2, "style": "brief"}).json()["answer"]
    assert guided.startswith("法律依据：") and not brief.startswith("法律依据：") and brief in guided


@pytest.mark.parametrize("path", ["/ask", "/consult"])
def test_force_answers_a_message_declined_as_off_scope(path):
    llm = legal_llm()
    client = app(llm)
    declined = client.post(path, json={"question": "红烧肉怎么做好吃？", "k": 2}).json()
    assert llm.calls == 0 and declined["answer"].startswith("legalrag 只回答中华人民共和国")
    forced = client.post(path, json={"question": "红烧肉怎么做好吃？", "k": 2, "force": True}).json()
    assert llm.calls >= 1 and not forced["answer"].startswith("legalrag")


@pytest.mark.parametrize("path", ["/ask", "/consult"])
def test_an_answer_searches_with_the_retriever_asked_for(path):
    client = app(legal_llm())
    assert client.post(path, json={"question": QUESTION, "k": 2, "retriever": "bm25"}).status_code == 200
    r = client.post(path, json={"question": QUESTION, "k": 2, "retriever": "dense"})
    assert r.status_code == 400 and "no 'dense' retriever" in r.json()["error"]["message"]


def test_the_consult_stream_retrieved_event_names_the_search(client):
    seq = events(client.post("/consult/stream", json={"question": QUESTION, "k": 2}).text)
    assert seq[0][1]["index_load"] == "held"
    (retrieved,) = [d for n, d in seq if n == "retrieved"]
    done = seq[-1][1]
    assert retrieved["query"] == done["query"] == done["searched"][0] and retrieved["searched"] == done["searched"]
    assert retrieved["carried"] == done["carried"] == []
    assert [h["id"] for h in retrieved["hits"]] == [h["id"] for h in done["retrieved"]]
    assert set(done["follow_up"]) == {"same_issue", "reason"}


def test_consult_reports_its_processor_and_follow_up():
    from legalrag.answer.processors import DEFAULT_PROCESSOR

    client = app(legal_llm())
    first = "公司一直不跟我签书面劳动合同，我可以要求公司支付双倍工资吗？"
    history = [{"role": "user", "content": first}, {"role": "assistant", "content": "可以要求。"}]
    default = client.post("/consult", json={"question": "那最多能要几个月？", "history": history, "k": 6}).json()
    assert default["processor"] == DEFAULT_PROCESSOR
    assert default["follow_up"]["same_issue"] is True and isinstance(default["follow_up"]["reason"], str)
    last = client.post("/consult", json={"question": "那最多能要几个月？", "history": history, "k": 6,
                                         "processor": "last"}).json()
    assert last["processor"] == "last" and last["searched"] == ["那最多能要几个月？"] and last["carried"] == []
    assert last["follow_up"] == {"same_issue": None, "reason": ""}
    assert last["query"] == "那最多能要几个月？"


@pytest.mark.parametrize("path", ["/ask", "/consult", "/ask/stream", "/consult/stream"])
def test_answers_check_k_and_the_evidence_budget_before_they_start(path):
    client = app(legal_llm(), max_k=5, evidence_tokens=100)
    r = client.post(path, json={"question": QUESTION, "k": 6})
    assert r.status_code == 400 and r.json()["error"]["message"] == "k=6 is above this server's limit of 5"
    r = client.post(path, json={"question": QUESTION, "k": 5, "evidence_tokens": 101})
    assert r.status_code == 400 and "evidence_tokens=101" in r.json()["error"]["message"]
    r = app(None).post(path, json={"question": QUESTION, "k": 5})
    what = "answering" if path.startswith("/ask") else "the consultation"
    assert r.status_code == 503 and r.json()["error"]["message"].startswith(f"{what} needs a language model")


@pytest.mark.parametrize("path", ["/ask/stream", "/consult/stream", "/draft/stream"])
def test_a_stream_is_refused_when_the_queue_is_full(path):
    client = app(legal_llm(), max_waiting=0)
    with client.app.state.context.gate.slot():
        r = client.post(path, json={"facts": FACTS} if "draft" in path else {"question": QUESTION, "k": 2})
    assert r.status_code == 503 and r.json()["error"]["type"] == "Busy"


# --- drafts ------------------------------------------------------------------------------------------------------

def test_the_free_drafter_streams_its_stages_and_returns_the_draft():
    llm = legal_llm()
    client = app(llm)
    seq = events(client.post("/draft/stream", json={"facts": FACTS}).text)
    assert names(seq)[:4] == ["started", "stage", "stage", "stage"] and names(seq)[-1] == "done"
    assert seq[0][1] == {"queue_s": 0.0}
    assert [d["stage"] for n, d in seq if n == "stage"] == ["retrieve_laws", "laws", "generate"]
    laws = [d for n, d in seq if n == "stage"][1]
    done = seq[-1][1]
    assert done["drafter"] == "free" and DRAFT in done["document"]
    assert [h["id"] for h in laws["hits"]] == [h["id"] for h in done["laws"]] and "decided" not in laws
    assert "".join(d["text"] for n, d in seq if n == "token") == DRAFT
    assert done["unresolved"] == sum(not c["resolved"] for c in done["citations"]) == 1
    assert all(isinstance(v, str) for v in done["sections"].values()) and "判处有期徒刑六个月" in done["sections"]["result"]
    assert done["timings"]["queue_s"] == 0.0 and set(done["law_versions"])
    assert set(done["timings"]) > {"queue_s"} and all(round(v, 4) == v for v in done["timings"].values())
    plain = client.post("/draft", json={"facts": FACTS}).json()
    assert plain["document"] == done["document"] and plain["drafter"] == "free"


@pytest.mark.parametrize("path", ["/draft", "/draft/stream", "/judgment/structure", "/cite"])
def test_a_bad_date_of_the_acts_is_a_400_naming_as_of_before_any_model_is_asked_for(path):
    r = app(None).post(path, json={"facts": FACTS, "as_of": "2020-13-01"})
    assert r.status_code == 400 and r.json()["error"]["fields"][0]["field"] == "as_of"
    r = app(None).post(path, json={"facts": FACTS, "as_of": ""})  # no date: none checked
    assert r.status_code == 503 and r.json()["error"]["type"] == "NoModel"


def test_drafting_without_a_model_is_a_503():
    for path in ("/draft", "/draft/stream"):
        r = app(None).post(path, json={"facts": FACTS})
        assert r.status_code == 503 and r.json()["error"]["type"] == "NoModel", path


def test_the_structure_drafter_decides_and_the_model_writes_only_the_reasoning(structure):
    llm = legal_llm()
    client = app(llm, structure=structure)
    seq = events(client.post("/draft/stream", json={"facts": FACTS}).text)
    stages = [d for n, d in seq if n == "stage"]
    assert seq[0] == ("started", {"queue_s": 0.0})
    assert [s["stage"] for s in stages] == ["predict", "laws", "generate"] and stages[1]["decided"] is True
    done = seq[-1][1]
    assert done["drafter"] == "structure" and llm.requests[-1].max_tokens == 500
    assert [h["id"] for h in stages[1]["hits"]] == [h["id"] for h in done["laws"]]
    assert [h["rank"] for h in done["laws"]] == list(range(1, len(done["laws"]) + 1))
    assert {"264"} <= {h["id"] for h in done["laws"]} and all(h["retriever"] == "structure" for h in done["laws"])
    assert done["unresolved"] == sum(not c["resolved"] for c in done["citations"])
    assert set(done["timings"]) >= {"predict", "queue_s"} and done["timings"]["queue_s"] == 0.0
    assert done["timings"]["predict"] > 0 and all(round(v, 4) == v for v in done["timings"].values())
    probs = {a["name"]: a["prob"] for a in done["structure"]["articles"]}
    assert [round(h["score"], 4) for h in done["laws"]] == [probs[h["id"]] for h in done["laws"]]
    assert isinstance(done["source"], str) and done["source"]
    assert done["structure"]["charges"] and isinstance(done["notes"], list) and "reasoning" in done
    assert all(isinstance(v, str) for v in done["sections"].values())
    plain = client.post("/draft", json={"facts": FACTS}).json()
    assert plain["drafter"] == "structure" and [h["id"] for h in plain["laws"]] == [h["id"] for h in done["laws"]]


# --- /cite and /judgment/structure -------------------------------------------------------------------------------

def test_cite_labels_each_provision_and_checks_the_scope(predictor):
    client = app(None, predictor=predictor)
    out = client.post("/cite", json={"facts": "公司一直未与我订立书面劳动合同"}).json()
    by_id = {p["id"]: p for p in out["provisions"]}
    assert by_id[REAL_ID]["citation"] == REAL and out["queue_s"] == 0.0
    assert out["scope"]["trained_laws"] == ["劳动合同法"] and out["scope"]["in_scope"] is True
    assert "law_versions" not in out  # no Criminal Law provision
    off = client.post("/cite", json={"facts": FACTS}).json()
    assert off["scope"]["in_scope"] is False
    r = app(None).post("/cite", json={"facts": FACTS})
    assert r.status_code == 503 and r.json()["error"]["message"] == (
        "citation prediction needs a citation model and this server has none; start it with `legalrag serve "
        "--cite-model-dir DIR` (written by `legalrag eval cite --out DIR`)")


def test_judgment_structure_resolves_its_articles(structure):
    client = app(None, structure=structure)
    out = client.post("/judgment/structure", json={"facts": FACTS}).json()
    labels = {a["article"]: a for a in out["articles"]}
    assert labels["264"] == {"article": "264", "resolved": True, "citation": "《中华人民共和国刑法》第二百六十四条"}
    assert out["unresolved"] == sum(not a["resolved"] for a in out["articles"]) and out["queue_s"] == 0.0
    assert out["structure"]["charges"][0]["name"] == "盗窃罪" and "盗窃罪" in out["document"]
    assert isinstance(out["law_versions"], dict)
    from legalrag.testing import ScriptedLLM

    discs = "被告人钱某未经著作权人许可，在其摊档出售非法出版的影视光盘1008张，被公安机关当场查获。"
    reader = ScriptedLLM(["侵犯著作权罪"])  # the charge check names the charge the model is unsure of
    plain = app(reader, structure=structure).post("/judgment/structure", json={"facts": discs}).json()
    assert plain["structure"]["low_confidence"] and reader.calls == 0
    checked = app(reader, structure=structure).post("/judgment/structure", json={"facts": discs, "check_charges": True})
    assert checked.status_code == 200 and reader.calls == 1
    assert [c["name"] for c in checked.json()["structure"]["charges"]] == ["侵犯著作权罪"]
    r = client.post("/judgment/structure", json={"facts": FACTS, "check_charges": True})
    assert r.status_code == 503 and "the charge check needs a language model" in r.json()["error"]["message"]
    r = app(None).post("/judgment/structure", json={"facts": FACTS})
    assert r.status_code == 503 and r.json()["error"]["message"] == (
        "the judgment structure needs a structure model and this server has none; start it with `legalrag serve "
        "--judgment-model-dir DIR --law-corpus FILE` (DIR from `legalrag judgment train`)")


# --- the documented routes ---------------------------------------------------------------------------------------

def test_the_openapi_schema_documents_each_routes_answers(client):
    paths = client.get("/openapi.json").json()["paths"]
    search = paths["/search"]["post"]["responses"]
    assert "which field" in search["400"]["description"] and "API key" in search["401"]["description"]
    assert "too large" in search["413"]["description"] and "not JSON" in search["415"]["description"]
    assert "schema" in search["422"]["description"] and "Retry-After" in search["429"]["description"]
    assert "401" not in paths["/health"]["get"]["responses"]
    stream = paths["/agents/search/stream"]["post"]["responses"]
    assert "step" in stream["200"]["description"] and "text/event-stream" in stream["200"]["content"]
    assert "no language model" in stream["503"]["description"]
    assert "no such document" in paths["/documents/{doc_id}"]["get"]["responses"]["404"]["description"]
    for path in ("/ask/stream", "/consult/stream", "/draft/stream"):
        r = paths[path]["post"]["responses"]
        assert "token" in r["200"]["description"] and "text/event-stream" in r["200"]["content"], path
        assert "index" in r["409"]["description"] and "no language model" in r["503"]["description"], path
    for path in ("/ask", "/consult"):
        r = paths[path]["post"]["responses"]
        assert "index" in r["409"]["description"] and "no language model" in r["503"]["description"], path
    assert "no language model" in paths["/draft"]["post"]["responses"]["503"]["description"]
    assert "structure model" in paths["/judgment/structure"]["post"]["responses"]["503"]["description"]
    assert "citation model" in paths["/cite"]["post"]["responses"]["503"]["description"]


@pytest.mark.parametrize("path, method, words", [
    ("/health", "get", "Liveness"), ("/index", "get", "index holds"), ("/capabilities", "get", "can do"),
    ("/laws", "get", "Law titles"), ("/documents/{doc_id}", "get", "corpus document"),
    ("/search", "post", "Ranked articles"), ("/citations/check", "post", "resolved against the corpus"),
    ("/agents/search", "post", "rewriting agents"), ("/agents/search/stream", "post", "each step streamed"),
    ("/ask", "post", "cited answer"), ("/ask/stream", "post", "streamed token by token"),
    ("/consult", "post", "consultation turn"), ("/consult/stream", "post", "/consult, streamed"),
    ("/draft", "post", "judgment drafted"), ("/draft/stream", "post", "/draft, streamed"),
    ("/judgment/structure", "post", "predicted verdict"), ("/cite", "post", "Predicted provisions")])
def test_each_route_has_its_summary(client, path, method, words):
    assert words in client.get("/openapi.json").json()["paths"][path][method]["summary"]


def test_predictions_without_the_language_model_do_not_wait_for_its_queue(predictor, structure):
    client = app(legal_llm(), predictor=predictor, structure=structure, max_waiting=0)
    with client.app.state.context.gate.slot():  # the model busy, nobody may wait
        cite = client.post("/cite", json={"facts": "公司一直未与我订立书面劳动合同"})
        verdict = client.post("/judgment/structure", json={"facts": FACTS})
        charged = client.post("/judgment/structure", json={"facts": FACTS, "check_charges": True})
    assert cite.status_code == 200 and cite.json()["queue_s"] == 0.0
    assert verdict.status_code == 200 and verdict.json()["queue_s"] == 0.0
    assert charged.status_code == 503 and charged.json()["error"]["type"] == "Busy"  # the charge check asks it


def test_cite_with_a_wrapped_predictor_labels_from_the_index_and_has_no_scope(predictor):
    """A predictor without its own statutes and training counts (the cross-fitted ``FoldedCite``): each
    provision is labelled from the server's index and the scope is unknown."""
    from legalrag.citepredict.crossfit import FoldedCite

    out = app(None, predictor=FoldedCite(predictor, {}, {})).post("/cite", json={"facts": "公司一直未与我订立书面劳动合同"})
    assert out.status_code == 200, out.text
    body = out.json()
    assert body["scope"] is None and {p["id"]: p["citation"] for p in body["provisions"]}[REAL_ID] == REAL


def test_cite_scope_is_unknown_when_the_model_was_trained_on_articles_the_corpus_lacks(tmp_path):
    from legalrag.citepredict.cocitation import CoCitationGraph
    from legalrag.citepredict.data import load_citation_sets
    from legalrag.citepredict.pipeline import CitationPredictor, CiteConfig
    from legalrag.citepredict.rules import learn_rules

    rows = [{"id": f"d{i}", "cited": ["elsewhere-1", "elsewhere-2"]} for i in range(6)]
    path = tmp_path / "train_citations.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    sets = load_citation_sets(path)
    foreign = CitationPredictor(INDEX.documents, INDEX.retriever(), learn_rules(sets, min_support=2),
                                CoCitationGraph.build(sets), config=CiteConfig(seen_only=False, core_k=2))
    assert foreign.counts  # it did learn counts, of articles this corpus does not hold
    out = app(None, predictor=foreign).post("/cite", json={"facts": "公司一直未与我订立书面劳动合同"})
    assert out.status_code == 200 and out.json()["scope"] is None
