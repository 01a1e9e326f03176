"""What the web-application tests share: the bundled statute sample's index, a scripted model that answers like
a consultation assistant (one real and one non-existent citation, plus markup that must stay text), a
streaming variant that records when its stream is closed, and a small citation model learned from toy
citation sets over the sample."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from legalrag.llm.base import ChatRequest
from legalrag.llm.stream import ChatStream
from legalrag.testing import ScriptedLLM

REAL = "《劳动合同法》第十条"  # in the sample (document 13506)
REAL_ID = "13506"
MISSING = "《劳动合同法》第九百九十九条"  # the law is in the corpus, the article is not
INJECTION = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>'
ANSWER = (f"根据{REAL}，建立劳动关系应当订立书面劳动合同。{MISSING}另有规定。{INJECTION}")
DRAFT = ("本院认为，被告人张某以非法占有为目的，秘密窃取他人财物，数额较大，其行为已构成盗窃罪。依照《中华人民共和国刑法》"
         "第二百六十四条之规定，判决如下：\n被告人张某犯盗窃罪，判处有期徒刑六个月，并处罚金人民币二千元。")


def reply(request: ChatRequest) -> str:
    """Planner, rewriter, drafter or consultation answer, told apart by the schema or the prompt."""
    props = (request.json_schema or {}).get("properties", {})
    if "action" in props:
        done = any("1. single_element" in m.get("content", "") for m in request.messages)  # second round
        return json.dumps({"action": "exit" if done else "single_element", "reason": "查询已改写为法律术语"})
    if "queries" in props:
        return json.dumps({"queries": ["用人单位 未订立 书面劳动合同 二倍工资"]}, ensure_ascii=False)
    if "本院认为" in request.messages[0].get("content", "") + request.messages[-1].get("content", ""):
        return DRAFT
    return ANSWER


def legal_llm(**options: Any) -> ScriptedLLM:
    return ScriptedLLM(reply, **options)


class StreamingLLM(ScriptedLLM):
    """A scripted model that streams its reply piece by piece (``delay`` seconds apart), like the embedded model,
    and records how many pieces it produced and whether its stream was closed before the end."""

    def __init__(self, pieces: int = 200, delay: float = 0.02, **options: Any):
        super().__init__(reply, **options)
        self.pieces, self.delay = pieces, delay
        self.produced = 0
        self.closed = threading.Event()

    def stream(self, request: ChatRequest) -> ChatStream:
        self.requests.append(request)
        text = reply(request)

        def lines():
            try:
                for i in range(self.pieces):
                    piece = text[i % len(text)]
                    self.produced += 1
                    yield "data: " + json.dumps({"choices": [{"delta": {"content": piece}}]})
                    time.sleep(self.delay)
                yield "data: " + json.dumps({"choices": [{"delta": {}, "finish_reason": "stop"}]})
            finally:
                self.closed.set()

        return ChatStream(lines(), self.model_id)


def sample_index(directory: Path) -> Any:
    from legalrag.demo import demo_index

    return demo_index(directory)


def sample_predictor(index: Any, directory: Path) -> Any:
    """A citation predictor over the sample, its rules and co-citation graph learned from toy citation sets."""
    from legalrag.citepredict.cocitation import CoCitationGraph
    from legalrag.citepredict.data import load_citation_sets
    from legalrag.citepredict.pipeline import CitationPredictor, CiteConfig
    from legalrag.citepredict.rules import learn_rules

    labour = [d.id for d in index.documents if d.metadata.get("law") == "劳动合同法"][:12]
    rows = [{"id": f"d{i}", "cited": [labour[i % 6], labour[(i + 1) % 6], REAL_ID]} for i in range(12)]
    path = directory / "train_citations.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    sets = load_citation_sets(path)
    return CitationPredictor(index.documents, index.retriever(), learn_rules(sets, min_support=2),
                             CoCitationGraph.build(sets), config=CiteConfig(seen_only=False, core_k=2))


def sample_structure() -> Any:
    """A judgment structure model trained on the tiny labelled cases of ``test_judgment_structure`` (None
    without LightGBM)."""
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        return None
    from legalrag.judgment.labels import label_cases
    from legalrag.judgment.predict import StructurePredictor
    from unit.judgment.test_structure import STATUTES, _cases

    facts, gold = _cases()
    return StructurePredictor(label_cases(facts, gold).cases, STATUTES, select=False).train()
