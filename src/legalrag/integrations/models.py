"""The typed results of the integration tools (``tools.LegalTools``): pydantic models, so an MCP host receives
their JSON schema as each tool's output schema and the results as structured content."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Mark = Literal["supported", "exists", "not_found", "repealed", "no_corpus"]
MARKS: dict[str, str] = {
    "supported": "the article exists and its text supports the sentence that cites it",
    "exists": "the article exists, but is not shown to support the sentence (mark_reason says why)",
    "not_found": "no such article in the corpus: the law, the article number or the title is wrong",
    "repealed": "the law was repealed (successor names the law in force)",
    "no_corpus": "a jurisdiction the corpus does not cover: not checked, not an error",
}


class Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Article(Out):
    id: str = Field(description="corpus document id")
    citation: str = Field(description="the article's citation, e.g. 《中华人民共和国劳动合同法》第十条")
    law: str | None = Field(None, description="the law's title")
    text: str = Field(description="the article's text")
    score: float | None = Field(None, description="retrieval score (search results only)")


class StatuteSearchResult(Out):
    query: str
    retriever: str = Field(description="the index component that ranked the articles")
    hits: list[Article]


class MarkedCitation(Out):
    text: str = Field(description="the citation as written")
    canonical: str = Field(description="its normalised form")
    mark: Mark = Field(description="; ".join(f"{k}: {v}" for k, v in MARKS.items()))
    mark_text: str = Field(description="the mark and why, in words")
    mark_reason: str | None = Field(None, description="why an existing article is only marked exists "
                                    "(not_retrieved, does_not_bear, no_claim...)")
    claim: str | None = Field(None, description="the words of the text the article was checked against")
    support: float | None = Field(None, description="the support model's probability that the article supports "
                                  "the claim")
    successor: str | None = Field(None, description="for a repealed law: the law in force")
    resolved: bool = Field(description="whether it names an article of the corpus")
    document_id: str | None = None
    note: str = Field("", description="why it did not resolve, or what it resolved to")
    article_text: str | None = Field(None, description="the cited article's text, when it resolved")


class CheckResult(Out):
    citations: list[MarkedCitation]
    not_found: int = Field(description="citations that name no article of the corpus")
    summary: dict[str, Any] = Field(description="how many citations have each mark; no_citations when the text "
                                    "cites nothing")


class Provision(Out):
    id: str
    citation: str
    score: float
    resolved: bool
    stages: list[str] = Field(description="the pipeline stages that proposed it (retrieval, rules, co-citation...)")


class CitationPrediction(Out):
    provisions: list[Provision]
    unresolved: list[str] = Field(description="corrections that named no provision of the corpus")
    scope: dict[str, Any] | None = Field(None, description="whether the facts fall within the laws the model knows")


class ScoredName(Out):
    name: str
    probability: float


class VerdictPrediction(Out):
    charges: list[ScoredName]
    articles: list[ScoredName] = Field(description="Criminal Law article numbers applied")
    prison_months: int | None
    fine_yuan: int | None
    probation: bool | None
    low_confidence: bool
    notes: list[str]
    result_section: str = Field(description="the judgment's result section in the court's format")


class UsageSummary(Out):
    calls: int
    prompt_tokens: int
    completion_tokens: int


class QuotedClause(Out):
    document_id: str
    citation: str = Field(description="the article's name as the corpus names it")
    quote: str = Field(description="its decisive clause, verbatim, with the rule's exceptions")
    probability: float | None = Field(None, description="the selector's probability that it decides the question")
    role: str = Field("decisive", description="decisive, limitation (the limitation period of a claim) or related")


class AskResult(Out):
    question: str
    answer: str
    citations: list[MarkedCitation]
    not_found: int
    sources: list[Article] = Field(description="the retrieved articles the answer was grounded on")
    model: str
    usage: UsageSummary
    basis: list[QuotedClause] = Field(default_factory=list, description="the legal basis printed at the answer's "
                                      "head: each article with its decisive clause quoted verbatim")
    fallback: bool = Field(False, description="the answer is the honest fallback: the most relevant articles and "
                           "what to check, no conclusion")
    not_from_law: list[str] = Field(default_factory=list, description="periods or amounts the answer states that "
                                    "no quoted clause gives (marked in the answer)")
