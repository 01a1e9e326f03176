"""The integration tools, free of any transport: each is one library call whose result is a typed model.

``LegalTools(Collaborators(...))`` receives zero-argument factories for the index, the answer model, the
citation predictor and the judgment structure model; each is called once, on the first tool call that needs it
(under a lock, so two concurrent first calls build it once). A missing collaborator raises ``Unavailable``,
whose message says which option provides it. ``slot``, when given, is the model queue of ``legalrag serve``:
the tools that generate hold a slot of it, as the HTTP routes do.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Callable

from legalrag.errors import InputError, LegalRagError
from legalrag.integrations.models import (Article, AskResult, CheckResult, CitationPrediction, Mark, MarkedCitation,
                                          Provision, QuotedClause, ScoredName, StatuteSearchResult, UsageSummary,
                                          VerdictPrediction)
from legalrag.types import Citation, Document

MAX_K = 50


class Unavailable(LegalRagError):
    """The tool needs a collaborator this server was started without."""


@dataclass(frozen=True)
class Collaborators:
    """Factories of what the tools use, each called at most once, on first need. ``None``: not available."""

    index: Callable[[], Any]
    llm: Callable[[], Any] | None = None
    predictor: Callable[[Any], Any] | None = None  # receives the opened index
    structure: Callable[[], Any] | None = None
    support: Callable[[], Any] | None = None  # a citations.support.SupportScorer (None: the one support model)
    slot: Callable[[], AbstractContextManager[Any]] | None = None


NEEDS = {
    "llm": "ask needs a language model and this server has none; start it without --no-llm (or with --model NAME "
           "or --endpoint URL --endpoint-model NAME)",
    "predictor": "predict_citations needs a citation model; start the server with --cite-model-dir DIR (written by "
                 "`legalrag eval cite --out DIR`) or use an index that has one (INDEX/citepred)",
    "structure": "predict_verdict needs a judgment structure model and its statutes; start the server with "
                 "--judgment-model-dir DIR and --law-corpus FILE (the statute corpus the model was trained with)",
}


def mark(c: Citation) -> Mark:
    """The citation's support mark (``citations.marks``); a citation checked for existence only is marked
    exists or not_found."""
    if c.mark:
        return c.mark  # type: ignore[return-value]
    return "exists" if c.resolved else "not_found"


def marked_citation(c: Citation) -> MarkedCitation:
    from legalrag.citecheck.marks import mark_line

    return MarkedCitation(text=c.text, canonical=c.canonical, mark=mark(c), mark_text=mark_line(c),
                          mark_reason=c.mark_reason or None, claim=c.claim or None, support=c.support,
                          successor=c.successor or None, resolved=c.resolved, document_id=c.document_id,
                          note=c.note or ("" if c.resolved else "no such article"),
                          article_text=c.document_text if c.resolved else None)


def article(doc: Document, score: float | None = None) -> Article:
    from legalrag.citecheck import citation_label

    law = doc.metadata.get("law")
    return Article(id=doc.id, citation=citation_label(doc), law=str(law) if law else None, text=doc.text,
                   score=None if score is None else round(float(score), 4))


class LegalTools:
    def __init__(self, collaborators: Collaborators, *, max_k: int = MAX_K, evidence_tokens: int | None | object = ...):
        self.collaborators = collaborators
        self.max_k = max_k
        self.evidence_tokens = evidence_tokens  # ...: the answer engine's default budget
        self._built: dict[str, Any] = {}
        self._lock = threading.Lock()

    # -- collaborators, built on first need -------------------------------------------------------------
    def _get(self, name: str) -> Any:
        with self._lock:
            if name not in self._built:
                factory = getattr(self.collaborators, name)
                if factory is None:
                    raise Unavailable(NEEDS[name])
                value = factory(self._built["index"]) if name == "predictor" else factory()
                if value is None and name in NEEDS:
                    raise Unavailable(NEEDS[name])
                self._built[name] = value
            return self._built[name]

    @property
    def index(self) -> Any:
        return self._get("index")

    def _slot(self) -> AbstractContextManager[Any]:
        return self.collaborators.slot() if self.collaborators.slot is not None else nullcontext()

    def _resolver(self) -> Any:
        from legalrag.answer.engine import resolver_for

        return resolver_for(self.index)

    # -- the tools ------------------------------------------------------------------------------------
    def search_statutes(self, query: str, k: int = 5) -> StatuteSearchResult:
        if not query.strip():
            raise InputError("query is empty; give the question or the facts to search for", field="query")
        if not 1 <= k <= self.max_k:
            raise InputError(f"k={k} is outside 1..{self.max_k}; ask for fewer articles", field="k")
        from legalrag.retrieval.pipeline import build_pipeline

        pipe = build_pipeline(self.index)
        hits = pipe.search(query, k=k)
        return StatuteSearchResult(query=query, retriever=pipe.name, hits=[article(h.document, h.score) for h in hits])

    def get_article(self, citation: str) -> Article:
        citation = citation.strip()
        if not citation:
            raise InputError("citation is empty; give one like 《中华人民共和国劳动合同法》第十条", field="citation")
        index = self.index
        if citation in index:  # a document id, as search_statutes returns
            return article(index.get(citation))
        from legalrag.citecheck import check_citations

        found = check_citations(citation, self._resolver())
        if not found:
            raise InputError(f"no citation found in {citation!r}; write the law's title and the article, e.g. "
                             "《中华人民共和国劳动合同法》第十条 (or pass a document id from search_statutes)",
                             field="citation")
        first = found[0]
        if not first.resolved:
            raise InputError(f"{first.canonical or first.text} is not in the corpus: {first.note or 'no such article'}"
                             "; search_statutes finds the article by its content", field="citation")
        return article(index.get(first.document_id))

    def check_citations(self, text: str) -> CheckResult:
        from legalrag.citecheck.checker import check_text

        support = self.collaborators.support() if self.collaborators.support is not None else None
        report = check_text(text, self._resolver(), support)
        cits = [marked_citation(c) for c in report.citations]
        return CheckResult(citations=cits, not_found=sum(c.mark == "not_found" for c in cits),
                           summary=dict(report.summary))

    def predict_citations(self, facts: str) -> CitationPrediction:
        if not facts.strip():
            raise InputError("facts is empty; give the facts of the case", field="facts")
        self.index
        predictor = self._get("predictor")
        with self._slot() if getattr(predictor, "llm", None) is not None else nullcontext():
            result = predictor.predict(facts)
        # the predictor's own statutes (it may decide over another index than the search one, e.g. the criminal law)
        docs = getattr(predictor, "documents", None)
        docs = docs if isinstance(docs, dict) else {}
        index = self.index
        provisions = []
        for c in result.predictions:
            doc = docs.get(c.provision) or (index.get(c.provision) if c.provision in index else None)
            provisions.append(Provision(id=c.provision, citation=article(doc).citation if doc is not None else c.title,
                                        score=round(float(c.score), 4), resolved=c.resolved,
                                        stages=list(dict.fromkeys(v.stage for v in c.provenance))))
        return CitationPrediction(provisions=provisions, unresolved=list(result.unresolved_corrections),
                                  scope=self._scope(predictor, facts))

    def _scope(self, predictor: Any, facts: str) -> dict[str, Any] | None:
        from legalrag.citepredict.scope import check_scope, trained_laws

        counts, docs = getattr(predictor, "counts", None), getattr(predictor, "documents", None)
        if not counts or not isinstance(docs, dict):
            return None
        laws = trained_laws(counts, docs)
        return check_scope(facts, predictor.retriever, laws).to_dict() if laws else None

    def predict_verdict(self, facts: str) -> VerdictPrediction:
        if not facts.strip():
            raise InputError("facts is empty; give the facts of the criminal case", field="facts")
        from legalrag.judgment.compose import result_section

        s = self._get("structure").predict(facts)
        return VerdictPrediction(charges=[ScoredName(name=c.name, probability=round(c.prob, 4)) for c in s.charges],
                                 articles=[ScoredName(name=a.name, probability=round(a.prob, 4)) for a in s.articles],
                                 prison_months=s.prison.value, fine_yuan=s.fine.value,
                                 probation=None if s.probation.value is None else bool(s.probation.value),
                                 low_confidence=s.low_confidence, notes=list(s.notes),
                                 result_section=result_section(s))

    def ask(self, question: str, k: int = 6) -> AskResult:
        if not question.strip():
            raise InputError("question is empty; ask a legal question", field="question")
        if not 1 <= k <= self.max_k:
            raise InputError(f"k={k} is outside 1..{self.max_k}", field="k")
        from legalrag.answer.question import answer_question

        index, llm = self.index, self._get("llm")
        with self._slot():
            answer = answer_question(question, index, llm, k=k, evidence_tokens=self.evidence_tokens)
        cits = [marked_citation(c) for c in answer.citations]
        u = answer.usage
        return AskResult(question=question, answer=answer.text, citations=cits,
                         not_found=sum(c.mark == "not_found" for c in cits),
                         sources=[article(h.document, h.score) for h in answer.sources],
                         model=str(getattr(llm, "model_id", "") or ""),
                         usage=UsageSummary(calls=u.calls, prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens),
                         basis=[QuotedClause(document_id=q.document_id, citation=q.citation, quote=q.text,
                                             probability=q.probability, role=q.role) for q in answer.basis],
                         fallback=bool(answer.fallback), not_from_law=list(answer.not_from_law))
