"""Structured output: tolerant JSON extraction, re-asking with the error, typed final failure."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, field_validator

from legalrag.errors import StructuredOutputError
from legalrag.llm.structured import ask_structured, extract_json, structured_call
from legalrag.testing import ScriptedLLM


class Verdict(BaseModel):
    answer: Literal["yes", "no"]
    confidence: int


@pytest.mark.parametrize("text", [
    '{"answer": "yes", "confidence": 3}',
    'Sure! Here it is:\n```json\n{"answer": "yes", "confidence": 3}\n```\nHope that helps.',
    'The result is {"answer": "yes", "confidence": 3} as requested.',
    '```\n{"answer": "yes", "confidence": 3,}\n```',
    '[{"answer": "yes", "confidence": 3}]',
])
def test_tolerant_extraction(text):
    value = extract_json(text)
    value = value[0] if isinstance(value, list) else value
    assert Verdict.model_validate(value) == Verdict(answer="yes", confidence=3)


@pytest.mark.parametrize("text", ["", "no json here", "{broken"])
def test_extraction_failures(text):
    with pytest.raises(ValueError):
        extract_json(text)


def test_reasks_with_the_error_shown():
    llm = ScriptedLLM(['{"answer": "maybe", "confidence": 3}', 'ok: {"answer": "no", "confidence": 1}'])
    reply = structured_call(llm, [{"role": "user", "content": "Q?"}], Verdict)
    assert reply.value == Verdict(answer="no", confidence=1) and reply.attempts == 2
    second = llm.requests[1].messages
    assert second[1] == {"role": "assistant", "content": '{"answer": "maybe", "confidence": 3}'}
    assert "answer: Input should be 'yes' or 'no'" in second[2]["content"] and '"confidence"' in second[2]["content"]
    assert llm.requests[0].json_schema is None


def test_final_failure_carries_raw_replies():
    llm = ScriptedLLM(["nope", "still nope"])
    with pytest.raises(StructuredOutputError) as info:
        ask_structured(llm, [{"role": "user", "content": "Q?"}], Verdict, retries=1)
    assert info.value.raw == ["nope", "still nope"] and "after 2 attempts" in str(info.value)


@pytest.mark.llm
def test_real_model_with_schema(small_llm):
    reply = structured_call(small_llm, [{"role": "user", "content": "Is the sky blue? Answer yes or no with a "
                                                                   "confidence from 1 to 5, as JSON."}],
                            Verdict, max_tokens=24)
    assert reply.attempts == 1 and reply.value.answer in ("yes", "no")
    assert reply.results[0].completion_tokens <= 24


class Impossible(BaseModel):
    word: str

    @field_validator("word")
    @classmethod
    def never(cls, v: str) -> str:
        raise ValueError("this validator rejects every word")


@pytest.mark.llm
def test_real_model_final_failure(small_llm):
    with pytest.raises(StructuredOutputError) as info:
        ask_structured(small_llm, [{"role": "user", "content": "Give one word as JSON."}], Impossible, retries=1,
                       max_tokens=12)
    assert len(info.value.raw) == 2 and all(r.strip().startswith("{") for r in info.value.raw)
