"""Request bodies of the HTTP API: closed pydantic models (unknown fields are a 422), with the size limits that
keep one request from tying up the server (question and facts length, history turns, k, max_tokens).

The limits are part of the OpenAPI schema, so clients (and the schemathesis fuzzer) see them; ``k`` is also
checked against the server's ``ServerSettings.max_k``, which may be lower, and ``evidence_tokens`` against the
server's ``ServerSettings.evidence_tokens`` (a request may lower the evidence budget, never raise it).
"""

from __future__ import annotations

import enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from legalrag.answer.processors import DEFAULT_PROCESSOR
from legalrag.answer.engine import DEFAULTS as ANSWER

MAX_QUESTION_CHARS = 4000
MAX_FACTS_CHARS = 20000
MAX_TEXT_CHARS = 50000
MAX_TURNS = 40
MAX_K = 1000
MAX_LAWS = 20
MAX_EVIDENCE_TOKENS = 8192
EVIDENCE_DOC = ("evidence budget of the prompt, in tokens: each retrieved article is cut to the clauses that match "
                "the question (a smaller budget gives a sooner first token, with fewer articles reaching the "
                "model). Default: the server's budget (GET /capabilities, evidence_tokens); a larger value than "
                "the server's is a 400; one too small for the first article's name and a clause is a 400 too (an "
                "error event on the /stream routes, which only know the articles once retrieval has run)")


INDEX_DOC = ("an index directory on the server's machine (default: the server's own); the server opens and keeps "
             "it when started with `-o max_indexes=N` (or the serve.max_indexes setting) (the `done` payload's server.index_load says `loaded` or "
             "`held`), else the request is a 409 IndexNotHeld")
STYLE_DOC = "guided (default: conclusion, legal basis, what to do, when to see a lawyer) or brief"
FORCE_DOC = ("true: answer even when the scope decision declines the question as outside the corpus (the web "
             "page's 'ask anyway', `legalrag ask --force`)")
CACHE_DOC = ("false: the model answers again even when the server's call cache holds this prompt's answer "
             "(`legalrag ask --no-cache`); the new answer is not stored either")


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Processor(str, enum.Enum):
    """How a conversation becomes the retrieval query of its last turn (``legalrag.answer.processors``)."""

    rewrite = "rewrite"
    last = "last"
    all_questions = "all_questions"
    full_context = "full_context"
    fused = "fused"
    carry = "carry"
    auto = "auto"


class Role(str, enum.Enum):
    user = "user"
    assistant = "assistant"


class SearchBody(Closed):
    query: str = Field(..., min_length=1, max_length=MAX_QUESTION_CHARS, description="question or facts")
    k: int = Field(10, ge=1, le=MAX_K, description="results wanted (at most the server's max_k)")
    retriever: str | None = Field(None, max_length=100, description="index component (default: the index's first)")
    laws: list[str] = Field(default_factory=list, max_length=MAX_LAWS, description="restrict to these law titles")
    as_of: str | None = Field(None, max_length=10, description="YYYY-MM-DD: only the versions in force that day")


class AgentSearchBody(SearchBody):
    max_rounds: int = Field(3, ge=1, le=6, description="planner rounds at most")
    fused: bool = Field(False, description="one LLM call per round: the planner writes the agent's queries")


MAX_CHECK_BYTES = 5 * 1024 * 1024  # a document sent to /citations/check (text or file)


class CheckBody(Closed):
    text: str | None = Field(None, max_length=MAX_CHECK_BYTES, description="text whose citations are checked")
    file: str | None = Field(None, max_length=MAX_CHECK_BYTES * 4 // 3 + 4,
                             description="instead of text: a .txt, .md, .pdf, .docx or .html file, base64-encoded "
                                         "(at most 5 MB)")
    filename: str | None = Field(None, max_length=255, description="the file's name (its extension gives the format)")
    annotate: Literal["md", "html"] | None = Field(None, description="also return an annotated copy of the text "
                                                   "(Markdown marks and notes, or highlighted HTML)")
    as_of: str | None = Field(None, max_length=10, description="YYYY-MM-DD, the date the text speaks of (`legalrag "
                              "check --as-of`): each citation's currency (current, amended, renumbered, repealed) "
                              "as of that day is returned in `currency`, beside its support mark")


AS_OF_DOC = ("YYYY-MM-DD: answer from the versions of the law in force that day (default: today; a day before "
             "a law's oldest version held reads that oldest)")


class AskBody(Closed):
    question: str = Field(..., min_length=1, max_length=MAX_QUESTION_CHARS)
    k: int = Field(ANSWER.k, ge=1, le=MAX_K)
    max_tokens: int = Field(ANSWER.max_tokens, ge=16, le=4096)
    retriever: str | None = Field(None, max_length=100)
    evidence_tokens: int | None = Field(None, ge=1, le=MAX_EVIDENCE_TOKENS, description=EVIDENCE_DOC)
    index: str | None = Field(None, min_length=1, max_length=1000, description=INDEX_DOC)
    style: Literal["guided", "brief"] | None = Field(None, description=STYLE_DOC)
    lang: Literal["zh", "en"] | None = Field(None, description="answer language (default: the index's)")
    cache: bool = Field(True, description=CACHE_DOC)
    force: bool = Field(False, description=FORCE_DOC)
    as_of: str | None = Field(None, max_length=10, description=AS_OF_DOC)


class TurnBody(Closed):
    role: Role
    content: str = Field(..., max_length=MAX_QUESTION_CHARS * 4)


class ConsultBody(Closed):
    question: str = Field(..., min_length=1, max_length=MAX_QUESTION_CHARS)
    history: list[TurnBody] = Field(default_factory=list, max_length=MAX_TURNS,
                                    description="earlier turns, oldest first (the server keeps no state)")
    processor: Processor | None = Field(None, description="how the dialogue becomes the search of this turn "
                                        f"(default: the server's, GET /capabilities default_processor: {DEFAULT_PROCESSOR})")
    retriever: str | None = Field(None, max_length=100)
    laws: list[str] = Field(default_factory=list, max_length=MAX_LAWS)
    k: int = Field(ANSWER.k, ge=1, le=MAX_K)
    max_tokens: int = Field(ANSWER.max_tokens, ge=16, le=4096)
    evidence_tokens: int | None = Field(None, ge=1, le=MAX_EVIDENCE_TOKENS, description=EVIDENCE_DOC)
    index: str | None = Field(None, min_length=1, max_length=1000, description=INDEX_DOC)
    style: Literal["guided", "brief"] | None = Field(None, description=STYLE_DOC)
    force: bool = Field(False, description=FORCE_DOC)
    as_of: str | None = Field(None, max_length=10, description=AS_OF_DOC)


ACTS_AS_OF_DOC = ("YYYY-MM-DD, the date of the acts (`legalrag judgment draft|predict --as-of`; default: the dates "
                  "the facts state): each Criminal Law article applied is read in the version in force then, or "
                  "today's where it is milder (Criminal Law art. 12); `law_versions` says which version each "
                  "article takes and why; a bad date is a 400 naming as_of")


class DraftBody(Closed):
    facts: str = Field(..., min_length=1, max_length=MAX_FACTS_CHARS, description="the facts of the case")
    as_of: str | None = Field(None, max_length=10, description=ACTS_AS_OF_DOC)


class StructureBody(Closed):
    facts: str = Field(..., min_length=1, max_length=MAX_FACTS_CHARS, description="the facts of the case")
    check_charges: bool = Field(False, description="let the server's LLM name the charge where the structure model "
                                "is not confident (needs a language model)")
    as_of: str | None = Field(None, max_length=10, description=ACTS_AS_OF_DOC)


class CiteBody(Closed):
    facts: str = Field(..., min_length=1, max_length=MAX_FACTS_CHARS)
    as_of: str | None = Field(None, max_length=10, description=ACTS_AS_OF_DOC.replace(
        "judgment draft|predict --as-of", "cite --as-of").replace("article applied", "provision predicted"))
