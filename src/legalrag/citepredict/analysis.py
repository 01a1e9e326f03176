"""Query analysis: the LLM maps the facts to structured fields used for the statute search.

``issues`` (legal issues or charges), ``codes`` (titles of the applicable laws, matched against the corpus's
law titles) and ``keywords`` (search terms in the corpus language). A reply that does not parse after the
bounded re-asks yields an empty analysis with the raw replies recorded, so the pipeline falls back to the
facts alone rather than failing the case.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from legalrag.llm.base import LLM
from legalrag.types import Step

_SCHEMA = {
    "type": "object",
    "properties": {
        "issues": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        "codes": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "keywords": {"type": "array", "items": {"type": "string"}, "maxItems": 6},
    },
    "required": ["issues", "codes", "keywords"],
}


@dataclass(frozen=True)
class Analysis:
    issues: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    calls: int = 0
    raw: tuple[str, ...] = field(default=(), compare=False)

    def search_text(self) -> str:
        return " ".join(self.issues + self.keywords)


def _strings(value: Any, limit: int) -> tuple[str, ...]:
    from legalrag.llm.structured import ReplyError

    if not isinstance(value, list):
        raise ReplyError("each field must be a JSON list of strings")
    # Small models pad lists with repeats; keep the first of each.
    return tuple(dict.fromkeys(str(v).strip() for v in value if str(v).strip()))[:limit]


def analyse_facts(llm: LLM, facts: str, law_titles: Sequence[str], *, language: str = "zh",
                  max_chars: int = 1200, case_first: bool = False) -> tuple[Analysis, Step]:
    """The analysis of ``facts``; ``case_first`` picks the prompt layout (``legalrag.citepredict.prompting``)."""
    from legalrag.citepredict.prompting import stage_prompt
    from legalrag.errors import StructuredOutputError
    from legalrag.llm.structured import CallRecord, ReplyError, structured_call

    def parse(obj: Any, _rec) -> Analysis:
        if not isinstance(obj, dict):
            raise ReplyError("expected a JSON object with issues, codes and keywords")
        return Analysis(_strings(obj.get("issues", []), 3), _strings(obj.get("codes", []), 2),
                        _strings(obj.get("keywords", []), 6))

    lang_name = {"zh": "Chinese", "en": "English", "de": "German", "fr": "French"}.get(language, language)
    messages = stage_prompt("analysis", facts, case_first=case_first, max_chars=max_chars, language=lang_name,
                            codes="; ".join(list(law_titles)[:30]))
    start = time.perf_counter()
    rec = CallRecord()
    try:  # no analysis is a usable outcome: the pipeline runs on without it (recorded in the step)
        value = structured_call(llm, messages, parse, schema=_SCHEMA, temperature=0.0, max_tokens=120, retries=1,
                                record=rec).value
    except StructuredOutputError:
        value = None
    result = value or Analysis()
    result = Analysis(result.issues, result.codes, result.keywords, calls=rec.attempts, raw=tuple(rec.raw))
    step = Step(agent="cite", action="analyse", input=facts[:200],
                output={"issues": list(result.issues), "codes": list(result.codes), "keywords": list(result.keywords)},
                seconds=time.perf_counter() - start, tokens=rec.usage.total_tokens,
                error=None if value is not None else "; ".join(rec.errors) or "no usable reply")
    return result, step
