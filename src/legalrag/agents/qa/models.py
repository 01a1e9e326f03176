"""The shapes the QA agents ask the model for (pydantic, extra fields forbidden)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

TargetSource = Literal["local", "web", "courtlistener", "any"]
Missing = Literal["authority", "jurisdiction", "date", "contradiction"]


class SearchIntent(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=300)
    source: TargetSource = "any"
    priority: int = Field(default=1, ge=1, le=3)  # 1 = most important


class QueryPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")
    intents: list[SearchIntent] = Field(min_length=1, max_length=4)


class SufficiencyVerdict(BaseModel):
    # the judge agent's verdict: whether the evidence gathered so far suffices to answer. No docstring, and the
    # schema keeps its old title: the schema is part of the prompt, so recorded calls still match
    model_config = ConfigDict(extra="forbid", title="JudgeVerdict")
    sufficient: bool
    reason: str = Field(max_length=400)
    missing: list[Missing] = Field(default_factory=list, max_length=4)
    next_query: str = Field(default="", max_length=300)


class ChoiceAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: Literal["A", "B", "C", "D", "E", "F"]
    rationale: str = Field(max_length=400)
