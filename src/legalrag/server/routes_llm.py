"""Routes that generate: answers, consultation turns and judgment drafts (JSON, or streamed as server-sent
events), citation prediction and the judgment structure. Each is one library call (``answer_question``,
``Consultation.ask``, ``ReasonedDrafter.draft`` (``legalrag judgment draft``'s drafter: the structure model
decides, the LLM writes the reasoning; ``JudgmentDrafter.draft``, the free drafter, without a structure model),
``CitationPredictor.predict``, ``StructurePredictor.predict``) made while holding a slot of the model's queue
when it uses the model.

Streamed routes send ``queued`` (position), ``started`` (queue_s), ``retrieved`` (the query and the articles
found), ``token`` (text as generated), then ``done`` (the same payload as the JSON route) or ``error``; /ask and
/consult also send ``stage`` ``load_index`` (an index the request named is being opened), and their ``started``
says which index answers (``index``, ``index_load``: ``held`` or ``loaded`` now, ``index_load_s``); the
draft stream also sends ``stage`` (``predict`` and ``laws`` with the predicted articles, or ``retrieve_laws`` and
``laws`` with the articles found by the free drafter; then ``generate``) as each stage starts. ``/cite`` adds
``scope``: whether the facts fall within the laws the model was trained on.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from legalrag.server.bodies import AskBody, CiteBody, ConsultBody, DraftBody, StructureBody
from legalrag.server.context import AppContext
from legalrag.server.render import answer_payload, citation_label, citation_payload, hit_to_dict
from legalrag.server.routes_law import law_versions
from legalrag.server.routes_search import ERRORS
from legalrag.server.streaming import Emit, sse_response

SSE_DOC = {200: {"description": "server-sent events: queued, started, retrieved, token..., then done or error",
                 "content": {"text/event-stream": {"schema": {"type": "string"}}}},
           409: {"description": "the request names an index this server does not hold and may not open"},
           503: {"description": "no language model, or too many requests waiting for it"}}
NEEDS_LLM = {503: {"description": "no language model, or too many requests waiting for it"}}
ANSWERS = {409: {"description": "the request names an index this server does not hold and may not open"}, **NEEDS_LLM}


def _tokens(emit: Emit | None) -> Callable[[str], None] | None:
    return None if emit is None else (lambda piece: emit("token", {"text": piece}))


def _queued(emit: Emit | None) -> Callable[[int], None] | None:
    return None if emit is None else (lambda position: emit("queued", {"position": position}))


def _index(ctx: AppContext, path: str | None, emit: Emit | None, as_of: str | None = None) -> tuple[Any, dict]:
    """The request's index: the server's own unless it names another, opened now if allowed (streamed, a
    ``stage`` event ``load_index`` says so first), and what ``started`` says of it: which index answers and how
    it was had (``held``, or ``loaded`` now, with the seconds it took), read as of ``as_of`` (None: as held, the
    law in force today for an index of versions)."""
    def on_load(key: str) -> None:
        if emit is not None:
            emit("stage", {"stage": "load_index", "index": key})

    index, how, seconds = ctx.index_for(path, on_load)
    if as_of is not None:
        from legalrag.retrieval.dated import dated

        index = dated(index, as_of)
    return index, {"index": str(index.path), "index_load": how, "index_load_s": round(seconds, 3),
                   "as_of": getattr(index, "day", None)}


def ask(ctx: AppContext, body: AskBody, emit: Emit | None = None, cancel: threading.Event | None = None) -> dict:
    from legalrag.answer.question import answer_question

    ctx.check_k(body.k)
    budget = ctx.evidence_budget(body.evidence_tokens)
    llm = ctx.need_llm("answering") if body.cache else ctx.uncached_llm("answering")
    index, held = _index(ctx, body.index, emit, body.as_of)
    pipe, _ = ctx.pipeline(body.retriever, index=index)

    def search(question: str, k: int) -> list:
        hits = pipe.search(question, k=k)
        if emit is not None:
            emit("retrieved", {"query": question, "hits": [hit_to_dict(h) for h in hits]})
        return hits

    with ctx.gate.slot(cancel, _queued(emit)) as queue_s:
        if emit is not None:
            emit("started", {"queue_s": round(queue_s, 4), **held})
        from legalrag.answer.scope import answer_anyway  # body.force: answered even when declined as off-scope

        with answer_anyway(body.force):
            answer = answer_question(body.question, index, llm, k=body.k, max_tokens=body.max_tokens,
                                     support=ctx.support, evidence_tokens=budget, search=search, on_text=_tokens(emit), style=body.style,
                                     lang=body.lang, versions=lambda: law_versions(ctx, required=False))
    return answer_payload(body.question, answer, model=ctx.model or "", queue_s=queue_s)


def consult(ctx: AppContext, body: ConsultBody, emit: Emit | None = None,
            cancel: threading.Event | None = None) -> dict:
    from dataclasses import replace

    from legalrag.answer.consultation import Consultation
    from legalrag.answer.engine import DEFAULTS, engine_for, question_language
    from legalrag.answer.processors import DEFAULT_PROCESSOR
    from legalrag.types import Turn

    ctx.check_k(body.k)
    budget = ctx.evidence_budget(body.evidence_tokens)
    llm = ctx.need_llm("the consultation")
    index, held = _index(ctx, body.index, emit, body.as_of)
    pipe, flt = ctx.pipeline(body.retriever, body.laws, index=index)
    queries: list[str] = []

    def search(query: str, k: int) -> list:
        hits = pipe.search(query, k=k, filter=flt)
        queries.append(query)
        return hits

    def retrieved(query: str, hits: list) -> None:  # once per turn: the fused results, not each search behind them
        if emit is not None:
            trace = consultation.last_trace
            emit("retrieved", {"query": (trace.get("searched") or [query])[0], "hits": [hit_to_dict(h) for h in hits],
                               "searched": trace.get("searched", [query]), "carried": trace.get("carried", [])})

    settings = replace(DEFAULTS.but(k=body.k, max_tokens=body.max_tokens, style=body.style), evidence_tokens=budget)
    engine = engine_for(llm, index, search=search, lang=question_language(body.question, index), settings=settings,
                        support=ctx.support, versions=lambda: law_versions(ctx, required=False))
    processor = body.processor.value if body.processor is not None else DEFAULT_PROCESSOR  # the page sends none
    consultation = Consultation(engine=engine, processor=processor)
    consultation.turns = [Turn(t.role.value, t.content) for t in body.history]
    with ctx.gate.slot(cancel, _queued(emit)) as queue_s:
        if emit is not None:
            emit("started", {"queue_s": round(queue_s, 4), **held})
        from legalrag.answer.scope import answer_anyway  # body.force: answered even when declined as off-scope

        with answer_anyway(body.force):
            answer = consultation.ask(body.question, on_text=_tokens(emit), on_retrieved=retrieved)
    trace = consultation.last_trace
    searched = trace.get("searched") or queries[-1:]
    payload = answer_payload(body.question, answer, query=searched[0] if searched else None,
                             model=ctx.model or "", queue_s=queue_s)
    payload.update(processor=processor, searched=searched, carried=trace.get("carried", []),
                   follow_up={"same_issue": trace.get("same_issue"), "reason": trace.get("reason", "")})
    return payload


def acts_as_of(day: str | None) -> str | None:
    """A request's ``as_of`` (the date of the acts) checked: an InputError naming as_of (a 400); None: not given."""
    from legalrag.laws.versions import check_day

    return check_day(day) if day else None


# `legalrag judgment draft`'s --max-tokens default: the reasoning the LLM writes around the predicted structure
DRAFT_MAX_TOKENS = 500


def draft(ctx: AppContext, body: DraftBody, emit: Emit | None = None, cancel: threading.Event | None = None) -> dict:
    """The drafter of ``legalrag judgment draft``, with its defaults: when the server has a structure model, it
    decides the judgment and the LLM writes only the reasoning (``ReasonedDrafter``); without one the LLM drafts
    the whole judgment freely (``JudgmentDrafter``, the CLI's ``judgment draft -o free=true``).
    ``drafter`` in the payload says which. Each Criminal Law article the draft applies is read in the version in
    force at the acts (``as_of``, else the facts' dates; ``temporal.apply_to_draft``, as the CLI does), over the
    server's versions: ``law_versions`` in the payload, the 刑法第十二条 statement in the reasoning."""
    as_of = acts_as_of(body.as_of)
    if ctx.structure is None:
        return _free_draft(ctx, body, emit, cancel)
    from legalrag.judgment.draft import check_articles
    from legalrag.judgment.extract import extract_fields
    from legalrag.judgment.reasoned import ReasonedDrafter
    from legalrag.judgment.temporal import apply_to_draft
    from legalrag.types import Hit

    model = ctx.structure
    drafter = ReasonedDrafter(model, ctx.need_llm("drafting"), max_tokens=DRAFT_MAX_TOKENS)
    known = {d.id: d for d in model.statutes}
    with ctx.gate.slot(cancel, _queued(emit)) as queue_s:
        if emit is not None:
            emit("started", {"queue_s": round(queue_s, 4)})
            emit("stage", {"stage": "predict"})
        t0 = time.perf_counter()
        structure = model.predict(body.facts)
        predict_s = time.perf_counter() - t0
        laws = tuple(Hit(known[a.name], float(a.prob), i, "structure")
                     for i, a in enumerate((a for a in structure.articles if a.name in known), 1))
        if emit is not None:
            emit("stage", {"stage": "laws", "hits": [hit_to_dict(h) for h in laws], "decided": True})
            emit("stage", {"stage": "generate"})
        result = drafter.draft(body.facts, structure=structure)
    result = apply_to_draft(result, body.facts, law_versions(ctx, required=False), as_of=as_of)
    fields = extract_fields(result.document)
    citations = check_articles(fields, model.statutes, (h.document.id for h in laws))
    return {"drafter": "structure", "document": result.document,
            "sections": {k: v for k, v in fields.sections.to_dict().items() if isinstance(v, str)},
            "citations": [citation_payload(c) for c in citations], "laws": [hit_to_dict(h) for h in laws],
            "unresolved": sum(not c.resolved for c in citations), "structure": structure.to_dict(),
            "reasoning": result.reasoning, "source": result.source, "disagreement": result.disagreement,
            "notes": list(result.notes), "law_versions": result.law_versions.to_dict(),
            "timings": {**{k: round(float(v), 4) for k, v in dict(result.timings).items()},
                        "predict": round(predict_s, 4), "queue_s": round(queue_s, 4)}}


def _free_draft(ctx: AppContext, body: DraftBody, emit: Emit | None, cancel: threading.Event | None) -> dict:
    from legalrag.judgment.temporal import apply_to_draft

    drafter = ctx.judgment_drafter()
    with ctx.gate.slot(cancel, _queued(emit)) as queue_s:
        if emit is not None:  # each stage as it starts: the prompt's prefill can take tens of seconds on a CPU
            emit("started", {"queue_s": round(queue_s, 4)})
            emit("stage", {"stage": "retrieve_laws"})
            laws = drafter.retrieve_laws(body.facts)  # the drafter retrieves again: cached index, milliseconds
            emit("stage", {"stage": "laws", "hits": [hit_to_dict(h) for h in laws]})
            emit("stage", {"stage": "generate"})
        result = drafter.draft(body.facts, on_text=_tokens(emit))
    result = apply_to_draft(result, body.facts, law_versions(ctx, required=False), as_of=acts_as_of(body.as_of))
    sections = result.sections.to_dict() if hasattr(result.sections, "to_dict") else dict(result.sections)
    return {"drafter": "free", "document": result.document,
            "sections": {k: v for k, v in sections.items() if isinstance(v, str)},
            "citations": [citation_payload(c) for c in result.citations],
            "laws": [hit_to_dict(h) for h in result.law_hits],
            "unresolved": sum(not c.resolved for c in result.citations),
            "law_versions": result.law_versions.to_dict(),
            "timings": {**{k: round(float(v), 4) for k, v in dict(result.timings).items()},
                        "queue_s": round(queue_s, 4)}}


def cite(ctx: AppContext, body: CiteBody) -> dict:
    from legalrag.citepredict.service import result_to_dict
    from legalrag.server.streaming import NoModel
    from legalrag.laws.versions import check_day

    if body.as_of:
        check_day(body.as_of)  # a bad date is a 400 naming as_of, before the model runs
    if ctx.predictor is None:
        raise NoModel("citation prediction needs a citation model and this server has none; start it with "
                      "`legalrag serve --cite-model-dir DIR` (written by `legalrag eval cite --out DIR`)")
    if getattr(ctx.predictor, "llm", None) is not None:
        with ctx.gate.slot() as queue_s:
            result = ctx.predictor.predict(body.facts)
    else:
        queue_s, result = 0.0, ctx.predictor.predict(body.facts)
    out = result_to_dict(result)
    out["scope"] = cite_scope(ctx, body.facts)
    docs = getattr(ctx.predictor, "documents", None)  # the predictor's own statutes (the criminal law by default)
    for p in out["provisions"]:
        doc = docs.get(p["id"]) if isinstance(docs, dict) else (ctx.index.get(p["id"]) if p["id"] in ctx.index else None)
        p["citation"] = citation_label(doc) if doc is not None else p["title"]
    from legalrag.national import CRIMINAL_LAW
    from legalrag.server.routes_law import law_versions
    from legalrag.judgment.temporal import provision_versions

    criminal = [p["id"] for p in out["provisions"] if p["resolved"] and CRIMINAL_LAW in p["citation"]]
    if criminal:  # the version of each Criminal Law provision in force at the acts (刑法第十二条)
        out["law_versions"] = provision_versions(criminal, body.facts, law_versions(ctx, required=False),
                                                 as_of=body.as_of).to_dict()
    out["queue_s"] = round(queue_s, 4)
    return out


def cite_scope(ctx: AppContext, facts: str) -> dict | None:
    """The law-area check of the facts against the laws the citation model was trained on (None: unknown)."""
    from legalrag.citepredict.scope import check_scope, trained_laws

    counts, docs = getattr(ctx.predictor, "counts", None), getattr(ctx.predictor, "documents", None)
    if not counts or not isinstance(docs, dict):
        return None
    laws = trained_laws(counts, docs)
    pipe, _ = ctx.pipeline(None)
    return check_scope(facts, pipe.retriever, laws).to_dict() if laws else None


def judgment_structure(ctx: AppContext, body: StructureBody) -> dict:
    """The structure model's verdict (``judgment predict``), with ``law_versions``: the version of each Criminal
    Law article applied at the acts (``as_of``, else the facts' dates; ``temporal.apply_to_structure``)."""
    from legalrag.judgment.compose import compose_document, template_reasoning
    from legalrag.judgment.temporal import apply_to_structure
    from legalrag.server.streaming import NoModel

    as_of = acts_as_of(body.as_of)
    model = ctx.structure
    if model is None:
        raise NoModel("the judgment structure needs a structure model and this server has none; start it with "
                      "`legalrag serve --judgment-model-dir DIR --law-corpus FILE` (DIR from `legalrag judgment "
                      "train`)")
    if body.check_charges:
        from legalrag.judgment.charge_llm import ChargeReader

        reader = ChargeReader(ctx.need_llm("the charge check"))
        with ctx.gate.slot() as queue_s:
            s = model.predict(body.facts, charge_reader=reader)
    else:
        queue_s, s = 0.0, model.predict(body.facts)
    known = {d.id: d for d in model.statutes}
    articles = [{"article": a.name, "resolved": a.name in known,
                 "citation": citation_label(known[a.name]) if a.name in known else f"第{a.name}条"}
                for a in s.articles]
    return {"structure": s.to_dict(), "document": compose_document(body.facts, template_reasoning(s), s),
            "articles": articles, "unresolved": sum(not a["resolved"] for a in articles),
            "law_versions": apply_to_structure(s, body.facts, law_versions(ctx, required=False), as_of=as_of).to_dict(),
            "queue_s": round(queue_s, 4)}


def router(ctx: AppContext) -> Any:
    from fastapi import APIRouter

    api = APIRouter(responses=ERRORS)

    @api.post("/ask", summary="A cited answer from the retrieved articles (citations checked)", responses=ANSWERS)
    def ask_route(body: AskBody) -> dict:
        return ask(ctx, body)

    @api.post("/ask/stream", summary="/ask, streamed token by token", responses=SSE_DOC)
    def ask_stream(body: AskBody) -> Any:
        ctx.check_k(body.k)
        ctx.evidence_budget(body.evidence_tokens)
        ctx.need_llm("answering")
        ctx.gate.refuse_if_full()
        return sse_response(lambda emit, cancel: ask(ctx, body, emit, cancel))

    @api.post("/consult", summary="One consultation turn: the history in, the answer with checked citations out",
              responses=ANSWERS)
    def consult_route(body: ConsultBody) -> dict:
        return consult(ctx, body)

    @api.post("/consult/stream", summary="/consult, streamed token by token", responses=SSE_DOC)
    def consult_stream(body: ConsultBody) -> Any:
        ctx.check_k(body.k)
        ctx.evidence_budget(body.evidence_tokens)
        ctx.need_llm("the consultation")
        ctx.gate.refuse_if_full()
        return sse_response(lambda emit, cancel: consult(ctx, body, emit, cancel))

    @api.post("/draft", summary="A judgment drafted from the facts, its statute citations checked",
              responses=NEEDS_LLM)
    def draft_route(body: DraftBody) -> dict:
        return draft(ctx, body)

    @api.post("/draft/stream", summary="/draft, streamed token by token", responses=SSE_DOC)
    def draft_stream(body: DraftBody) -> Any:
        acts_as_of(body.as_of)  # a bad date is a 400 before the stream starts
        ctx.judgment_drafter()
        ctx.gate.refuse_if_full()
        return sse_response(lambda emit, cancel: draft(ctx, body, emit, cancel))

    @api.post("/judgment/structure", summary="The predicted verdict (charges, articles, term, fine, probation) with "
              "its evidence, and the result section in the court's format",
              responses={503: {"description": "no structure model, or check_charges without a language model"}})
    def structure_route(body: StructureBody) -> dict:
        return judgment_structure(ctx, body)

    @api.post("/cite", summary="Predicted provisions for the facts, with the stages that proposed each",
              responses={503: {"description": "no citation model"}})
    def cite_route(body: CiteBody) -> dict:
        return cite(ctx, body)

    return api
