"""The test doubles that ship with the package behave as documented (they stand in for external models)."""

from __future__ import annotations

import numpy as np

from legalrag.llm.base import ChatRequest
from legalrag.llm.structured import structured_call
from legalrag.retrieval.dense import DenseRetriever
from legalrag.testing import FakeEncoder, ScriptedLLM
from legalrag.types import Document


def test_scripted_llm_replays_and_records():
    llm = ScriptedLLM(["a", "b"])
    assert llm.chat(ChatRequest(messages=({"role": "user", "content": "x"},))).text == "a"
    assert llm.chat(ChatRequest(messages=({"role": "user", "content": "y"},))).text == "b"
    assert llm.chat(ChatRequest(messages=({"role": "user", "content": "z"},))).text == "b"  # the last repeats
    assert llm.calls == 3 and llm.last_prompt() == "z"
    cyc = ScriptedLLM(["1", "2"], cycle=True)
    assert [cyc.chat(ChatRequest(messages=())).text for _ in range(3)] == ["1", "2", "1"]


def test_scripted_llm_from_a_function_and_logprobs():
    llm = ScriptedLLM(lambda req: req.messages[-1]["content"].upper(), first_token_logprobs={"是": -0.1, "否": -2.0})
    r = llm.chat(ChatRequest(messages=({"role": "user", "content": "hi"},), logprobs=True, top_logprobs=2))
    assert r.text == "HI" and r.first_token_top() == {"是": -0.1, "否": -2.0} and llm.supports_logprobs


def test_scripted_llm_drives_the_structured_call_policy():
    from pydantic import BaseModel

    class Reply(BaseModel):
        n: int

    rep = structured_call(ScriptedLLM(["no", '{"n": 3}']), [{"role": "user", "content": "q"}], Reply)
    assert rep.value.n == 3 and rep.attempts == 2 and rep.record.usage.calls == 2


def test_fake_encoder_is_deterministic_and_ranks_by_shared_words():
    enc = FakeEncoder(dimension=32)
    docs = [Document("1", "盗窃公私财物 数额较大"), Document("2", "离婚 子女 抚养"), Document("3", "lease deposit refund")]
    a, b = enc.encode_documents([d.text for d in docs]), enc.encode_documents([d.text for d in docs])
    assert a.shape == (3, 32) and np.allclose(a, b) and np.allclose(np.linalg.norm(a, axis=1), 1.0)
    r = DenseRetriever.build(docs, enc)
    assert r.retrieve("离婚以后子女抚养", k=1)[0].id == "2"
    assert r.retrieve("deposit refund", k=1)[0].id == "3"
