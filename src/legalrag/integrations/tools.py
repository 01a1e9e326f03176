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
from typing import Any, Callable, Literal

from pydantic import Field

from legalrag.errors import InputError, LegalRagError
from legalrag.integrations.models import (Article, AskResult, CheckResult, CitationPrediction, Mark, MarkedCitation,
                                          Out, Provision, QuotedClause, ScoredName, StatuteSearchResult,
                                          UsageSummary, VerdictPrediction)
from legalrag.types import Citation, Document

MAX_K = 50


class LawVersion(Out):
    version: str | None = Field(description="the version's date (YYYY-MM-DD)")
    effective: str | None = Field(description="the date it took effect, as stated")
    effective_source: str = Field(description="where that date came from: header, last_article, table, unknown...")
    in_force_from: str | None
    in_force_until: str | None = Field(description="exclusive; null: still in force")
    ended_by: str = Field(description="superseded, repealed, or empty")
    articles: int
    files: list[str]
    merged: list[str] = Field(description="files of formatting-only duplicates merged into this version")
    selected: bool = Field(description="the version in force on as_of")


class Repeal(Out):
    by: str = Field(description="the law that repealed it")
    on: str | None
    source: str


class LawVersions(Out):
    law: str
    as_of: str | None
    note: str = Field(description="set when as_of falls outside the versions held")
    versions: list[LawVersion] = Field(description="oldest first")
    repealed: Repeal | None


class ArticleStep(Out):
    version: str | None
    in_force_from: str | None
    in_force_until: str | None
    article: str | None = Field(description="its number in this version (\"47\", \"133-1\"); null: no counterpart")
    text: str
    changed: bool = Field(description="its text differs from the previous version's")
    similarity: float | None = Field(description="of the text alignment that found it")


class ArticleHistory(Out):
    law: str
    article: str = Field(description="the number asked for, in the version in force on as_of (default: the latest)")
    as_of: str | None
    note: str
    versions: list[ArticleStep] = Field(description="oldest first")


class CurrencyMark(Out):
    status: Literal["current", "renumbered", "amended", "repealed", "not_in_force", "unknown"]
    label: str = Field(description="the short mark shown beside the support mark: amended 2023-12-29, current...")
    law: str
    article: str
    as_of: str
    dated: bool = Field(description="false: no date was given and the citation was read as of today")
    cited_version: str | None
    current_version: str | None
    changed_on: str | None
    in_force_from: str | None
    new_article: str | None = Field(description="where the article is now")
    diff: str
    text_now: str
    successor: str
    note: str = Field(description="the currency in words")


class CheckedCitations(CheckResult):
    currency: list[CurrencyMark | None] = Field(default_factory=list, description="with as_of: each citation's "
                                                "currency that day, in the order of citations (null: not a Chinese "
                                                "article)")


class ActDates(Out):
    earliest: str | None = Field(description="the earliest act date (YYYY-MM-DD); null: the facts state none")
    latest: str | None
    source: Literal["facts", "as_of", "none"] = Field(description="read from the facts, or the as_of given")
    spans: list[str] = Field(description="the date expressions read")


class AppliedVersion(Out):
    article: str = Field(description="the Criminal Law article number (\"165\", \"133-1\")")
    label: str = Field(description="the article with the version applied: 中华人民共和国刑法（2020-12-26修正）第一百六十五条")
    version: str | None = Field(description="the version applied")
    at_acts: str | None = Field(description="the version in force at the earliest act")
    current: str | None = Field(description="the version in force today")
    rule: str = Field(description="current, unchanged, old_law, current_milder, not_covered (the text at the acts "
                      "does not reach this defendant), straddle, unknown_date, not_held or missing")
    reason: str = Field(description="the 刑法第十二条 statement for this article (empty: nothing to decide)")
    text: str = Field(description="the text of the article applied")
    compared: dict[str, Any] = Field(description="the punishment tiers compared, where the texts differ")


class VersionsApplied(Out):
    acts: ActDates
    today: str
    notice: str = Field(description="set when no versions of the law are installed (nothing was decided)")
    articles: list[AppliedVersion]
    statement: str = Field(description="the paragraph a judgment states (刑法第十二条); empty when nothing differs")
    not_applied_changed: list[AppliedVersion] = Field(default_factory=list, description="articles the facts match "
                                                      "that the prediction does not apply, whose text changed since "
                                                      "the acts: a charge to review")


class DatedVerdictPrediction(VerdictPrediction):
    law_versions: VersionsApplied = Field(description="the version of each Criminal Law article applied: the law "
                                          "in force at the acts, or today's where it is milder (刑法第十二条)")


class Unavailable(LegalRagError):
    """The tool needs a collaborator this server was started without."""


def shipped_versions() -> Any:
    """The versions of the national law shipped with legalrag (None when they are not installed)."""
    from legalrag.national_versions import law_library

    try:
        return law_library()
    except InputError:
        return None


@dataclass(frozen=True)
class Collaborators:
    """Factories of what the tools use, each called at most once, on first need. ``None``: not available."""

    index: Callable[[], Any]
    llm: Callable[[], Any] | None = None
    predictor: Callable[[Any], Any] | None = None  # receives the opened index
    structure: Callable[[], Any] | None = None
    support: Callable[[], Any] | None = None  # a citations.support.SupportScorer (None: the lexical model)
    slot: Callable[[], AbstractContextManager[Any]] | None = None
    versions: Callable[[], Any] | None = shipped_versions  # a laws.Library for law_show, law_history, check's as_of


NEEDS = {
    "llm": "ask needs a language model and this server has none; start it without --no-llm (or with --model NAME "
           "or --endpoint URL --endpoint-model NAME)",
    "predictor": "predict_citations needs a citation model; start the server with --cite-model-dir DIR (written by "
                 "`legalrag eval cite --out DIR`) or use an index that has one (INDEX/citepred)",
    "versions": "law_show, law_history and check_citations' as_of need the versions of the national law, and "
                "this server has none; install legalrag with its shipped data, or start the server with the versions "
                "folder it should read",
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

    def _resolver(self, as_of: str | None = None) -> Any:
        """The citation resolver of the index, read as of ``as_of`` (the texts in force that day) when given."""
        from legalrag.answer.per_index import resolver_for
        from legalrag.retrieval.dated import dated

        return resolver_for(dated(self.index, as_of) if as_of else self.index)

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

    def check_citations(self, text: str, as_of: str | None = None) -> CheckedCitations:
        from legalrag.citecheck.checker import check_text
        from legalrag.citecheck.currency import citation_currency, currency_to_dict
        from legalrag.laws.versions import check_day

        day = check_day(as_of) if as_of else None  # a bad date fails before the text is checked
        support = self.collaborators.support() if self.collaborators.support is not None else None
        report = check_text(text, self._resolver(day), support)
        cits = [marked_citation(c) for c in report.citations]
        currency = []
        if day and report.items:
            lib = self._get("versions")
            currency = [currency_to_dict(citation_currency(lib, item.citation, day)) for item in report.items]
        return CheckedCitations(citations=cits, not_found=sum(c.mark == "not_found" for c in cits),
                                summary=dict(report.summary), currency=currency)

    def law_show(self, title: str, as_of: str | None = None) -> LawVersions:
        from legalrag.laws.report import law_report

        return LawVersions.model_validate(law_report(self._get("versions"), title, as_of or None))

    def law_history(self, citation: str, as_of: str | None = None) -> ArticleHistory:
        from legalrag.laws.report import history_report

        return ArticleHistory.model_validate(history_report(self._get("versions"), citation, as_of or None))

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

    def predict_verdict(self, facts: str, as_of: str | None = None) -> DatedVerdictPrediction:
        """The verdict, each article read in the version in force at the acts (``as_of``, else the facts' dates;
        ``judgment.temporal.predict_dated``) over the versions collaborator (none: the notice, nothing decided)."""
        if not facts.strip():
            raise InputError("facts is empty; give the facts of the criminal case", field="facts")
        from legalrag.judgment.compose import result_section
        from legalrag.judgment.temporal import predict_dated
        from legalrag.laws.versions import check_day

        try:  # a bad date fails before the model runs; the message names the argument, as a tool error shows it
            day = check_day(as_of) if as_of else None
        except InputError as exc:
            raise InputError(f"as_of {exc}", field="as_of") from None
        model = self._get("structure")
        try:
            library = self._get("versions")
        except Unavailable:  # no versions: the prediction's law_versions says so and decides nothing
            library = None
        dated = predict_dated(model, facts, library, as_of=day)
        s = dated.structure
        return DatedVerdictPrediction(
            charges=[ScoredName(name=c.name, probability=round(c.prob, 4)) for c in s.charges],
            articles=[ScoredName(name=a.name, probability=round(a.prob, 4)) for a in s.articles],
            prison_months=s.prison.value, fine_yuan=s.fine.value,
            probation=None if s.probation.value is None else bool(s.probation.value),
            low_confidence=s.low_confidence, notes=list(s.notes), result_section=result_section(s),
            law_versions=VersionsApplied.model_validate(dated.law_versions.to_dict()))

    def ask(self, question: str, k: int = 6) -> AskResult:
        if not question.strip():
            raise InputError("question is empty; ask a legal question", field="question")
        if not 1 <= k <= self.max_k:
            raise InputError(f"k={k} is outside 1..{self.max_k}", field="k")
        from legalrag.answer.question import answer_question

        index, llm = self.index, self._get("llm")
        with self._slot():
            support = self.collaborators.support() if self.collaborators.support is not None else None
            answer = answer_question(question, index, llm, k=k, evidence_tokens=self.evidence_tokens, support=support)
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
