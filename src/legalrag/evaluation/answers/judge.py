"""An LLM judge of yes/no agreement: any ``LLM`` (the embedded model, a user's OpenAI-compatible endpoint)
reads the question, the lawyer's answer and the response and says which conclusion each states (prompt
``answer_yesno_judge``), parsed through ``llm.structured`` with bounded re-asks; a reply that never parses is
a counted failure (``None``), never a guess."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from legalrag.errors import StructuredOutputError
from legalrag.llm.base import LLM

Polarity = Literal["yes", "no", "unclear"]
MAX_CHARS = 1200  # of each answer shown to the judge: the conclusion is stated early


class YesNoVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    lawyer: Polarity
    response: Polarity


@dataclass(frozen=True)
class YesNoJudgement:
    lawyer: str | None  # "yes" / "no", None when unclear or when the judge failed
    response: str | None
    failed: bool = False
    error: str = ""

    @property
    def agrees(self) -> bool | None:
        """Whether the response reaches the lawyer's conclusion (None when the lawyer's is not known)."""
        if self.lawyer is None:
            return None
        return self.response == self.lawyer


def judge_yes_no(llm: LLM, question: str, reference: str, response: str, *, retries: int = 2) -> YesNoJudgement:
    from legalrag.llm.structured import structured_call
    from legalrag.prompts import load_prompt

    messages = load_prompt("answer_yesno_judge").render(question=question, reference=reference[:MAX_CHARS],
                                                        response=(response or "（空回答）")[:MAX_CHARS])
    try:
        reply = structured_call(llm, messages, YesNoVerdict, retries, max_tokens=40)
    except StructuredOutputError as exc:
        return YesNoJudgement(None, None, failed=True, error=str(exc)[:300])
    v = reply.value
    return YesNoJudgement(None if v.lawyer == "unclear" else v.lawyer,
                          None if v.response == "unclear" else v.response)
