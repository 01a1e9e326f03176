"""Routes that need no language model (search, documents, laws, citation checks) and the agents search (JSON,
or streamed as server-sent events: ``queued``, ``started``, one ``step`` per planner, rewriter or retrieval step as
it happens, then ``done`` with the JSON route's payload, or ``error``)."""

from __future__ import annotations

from typing import Any

from legalrag.server.bodies import AgentSearchBody, CheckBody, SearchBody
from legalrag.server.context import AppContext
from legalrag.server.render import document_to_dict, hit_to_dict, step_to_dict
from legalrag.server.streaming import Emit, sse_response

ERRORS = {400: {"description": "bad input (message says which field and why)"},
          401: {"description": "missing or wrong API key"}, 413: {"description": "body too large"},
          415: {"description": "body is not JSON"}, 422: {"description": "body does not fit the schema"},
          429: {"description": "rate limit; see Retry-After"}}


STEPS_DOC = {200: {"description": "server-sent events: queued, started, step... (each as it happens), then done or error",
                   "content": {"text/event-stream": {"schema": {"type": "string"}}}},
             503: {"description": "no language model, or too many requests waiting for it"}}


def agents_search(ctx: AppContext, body: AgentSearchBody, emit: Emit | None = None, cancel: Any = None) -> dict:
    from legalrag.agents.planner import PlannerConfig, PlannerLoop

    ctx.check_k(body.k)
    llm = ctx.need_agents_llm()
    config = PlannerConfig(lang=ctx.lang, max_rounds=body.max_rounds, pool_k=max(10, min(body.k, 30)),
                           first_stage_k=30, fused=body.fused)
    on_step = None if emit is None else (lambda step: emit("step", step_to_dict(step)))
    with ctx.gate.slot(cancel, None if emit is None else (lambda n: emit("queued", {"position": n}))) as queue_s:
        if emit is not None:  # before the retriever loads: on a cold server that alone takes seconds
            emit("started", {"queue_s": round(queue_s, 4), "max_rounds": body.max_rounds})
        pipe, flt = ctx.pipeline(body.retriever, body.laws)
        result = PlannerLoop(llm, pipe.retriever, config=config).run(body.query, filter=flt, on_step=on_step)
    return {"query": body.query, "retriever": f"mas({pipe.retriever.name})", "terms": ctx.terms(body.query),
            "hits": [hit_to_dict(h) for h in result.hits[: body.k]],
            "trajectory": [step_to_dict(s) for s in result.steps],
            "summary": {**result.summary(), "queue_s": round(queue_s, 4)}}


def router(ctx: AppContext) -> Any:
    from fastapi import APIRouter

    api = APIRouter(responses=ERRORS)
    open_api = APIRouter(responses={})  # routes that need no key and have no rate limit

    @open_api.get("/health", summary="Liveness and what this server runs (no API key needed): `legalrag ask` "
                  "and `chat` read it to decide whether to answer through this server")
    def health() -> dict[str, Any]:
        import os

        from legalrag import __version__

        return {"status": "ok", "service": "legalrag", "version": __version__, "build": ctx.build,
                "pid": os.getpid(), "llm": ctx.model, "index": str(ctx.index.path), "indexes": ctx.held_indexes(),
                "max_indexes": ctx.settings.max_indexes if ctx.open_index is not None else 0,
                "evidence_tokens": ctx.settings.evidence_tokens,
                "busy": {"active": ctx.gate.active, "waiting": ctx.gate.waiting}}

    @api.get("/index", summary="What the index holds")
    def index_info() -> dict[str, Any]:
        idx = ctx.index
        return {"path": str(idx.path), "components": idx.names, "default": idx.default,
                "corpus": idx.manifest.get("corpus", {}), "lang": ctx.lang}

    @api.get("/capabilities", summary="What this server can do (the pages read it)")
    def capabilities() -> dict[str, Any]:
        from legalrag.answer.processors import DEFAULT_PROCESSOR, PROCESSORS

        return {"lang": ctx.lang, "retrievers": ctx.index.names, "default_retriever": ctx.index.default,
                "processors": list(PROCESSORS), "default_processor": DEFAULT_PROCESSOR,  # chat's and /consult's
                "max_k": ctx.settings.max_k, "llm": ctx.model,
                "evidence_tokens": ctx.settings.evidence_tokens,  # null: whole articles
                "agents_llm": ctx.agents_model,
                "features": {"search": True, "ask": ctx.llm is not None, "agents": ctx.agents_model is not None,
                             "draft": ctx.llm is not None, "cite": ctx.predictor is not None,
                             "judgment_structure": ctx.structure is not None},
                "documents": len(ctx.index.documents)}

    @api.get("/laws", summary="Law titles in the corpus, for the law filter")
    def laws() -> dict[str, Any]:
        return {"laws": ctx.laws()}

    @api.get("/documents/{doc_id:path}", summary="One corpus document (an article's full text)",
             responses={404: {"description": "no such document"}})
    def document(doc_id: str) -> Any:
        from fastapi.responses import JSONResponse

        if doc_id not in ctx.index:
            return JSONResponse({"error": {"type": "NotFound", "message": f"no document {doc_id!r} in the index"}},
                                status_code=404)
        return document_to_dict(ctx.index.get(doc_id))

    @api.post("/search", summary="Ranked articles for a query, optionally restricted to some laws")
    def search(body: SearchBody) -> dict[str, Any]:
        ctx.check_k(body.k)
        pipe, flt = ctx.pipeline(body.retriever, body.laws)
        if body.as_of:  # the versions in force that day (legalrag.laws.select); unversioned documents are kept
            from legalrag.laws.select import both, in_force_filter
            flt = both(flt, in_force_filter(body.as_of))
        hits = pipe.search(body.query, k=body.k, filter=flt)
        out = {"query": body.query, "retriever": pipe.name, "terms": ctx.terms(body.query),
               "hits": [hit_to_dict(h) for h in hits]}
        if body.as_of:  # where a law's oldest version held answered for an earlier day, a note says so
            from legalrag.laws.select import held_notes

            out["notes"] = list(held_notes((h.document for h in hits), body.as_of))
        return out

    @api.post("/citations/check", summary="Every citation in a text, resolved against the corpus and marked "
              "supported / exists / not found / repealed / no corpus")
    def check(body: CheckBody) -> dict[str, Any]:
        """Each citation keeps the fields this route always had (text, canonical, resolved, document_id, note,
        reason) and adds its mark, mark_reason, claim, support, successor, start/end and document_text;
        ``summary`` counts the marks (``no_citations`` when the text cites nothing); ``annotated``: the
        annotated copy when ``annotate`` is md or html; ``currency``, with ``as_of``: each citation's currency
        that day (``citecheck.currency``), in the order of ``citations``."""
        from legalrag.answer.per_index import resolver_for
        from legalrag.citecheck.checker import annotate_html, annotate_markdown, check_text
        from legalrag.laws.versions import check_day
        from legalrag.serialize import check_report_to_dict
        from legalrag.server.routes_law import currency_marks

        if body.as_of is not None:  # a bad date is a 400 (field as_of) before the text is checked
            check_day(body.as_of)
        text, name = check_input(body)
        from legalrag.retrieval.dated import dated  # as of a past day: the texts in force that day answer

        report = check_text(text, resolver_for(dated(ctx.index, body.as_of) if body.as_of else ctx.index), ctx.support,
                            source=name)
        out = check_report_to_dict(report)
        if body.annotate == "md":
            out["annotated"] = annotate_markdown(report)
        elif body.annotate == "html":
            out["annotated"] = annotate_html(report)
        if body.as_of is not None:  # the currency marks, one per citation, as `check --as-of --json` prints them
            out["currency"] = currency_marks(ctx, report, body.as_of)
        return out

    @api.post("/agents/search", summary="Search with the planner's rewriting agents; returns the trajectory",
              responses={503: {"description": "no language model"}})
    def agents_route(body: AgentSearchBody) -> dict[str, Any]:
        return agents_search(ctx, body)

    @api.post("/agents/search/stream", summary="/agents/search with each step streamed as it happens",
              responses=STEPS_DOC)
    def agents_stream(body: AgentSearchBody) -> Any:
        ctx.check_k(body.k)
        ctx.need_agents_llm()
        ctx.gate.refuse_if_full()
        return sse_response(lambda emit, cancel: agents_search(ctx, body, emit, cancel))

    return api, open_api


def check_input(body: Any) -> tuple[str, str]:
    """The text of a /citations/check request: ``text``, or ``file`` (base64) read by the document reader."""
    import base64
    import binascii
    from pathlib import Path

    from legalrag.corpora.extract import FORMATS, extract
    from legalrag.errors import InputError

    if (body.text is None) == (body.file is None):
        raise InputError("give either text or file (base64) with filename", field="text")
    if body.text is not None:
        return body.text, "the text"
    name = body.filename or ""
    if Path(name).suffix.lower() not in FORMATS:
        raise InputError(f"unsupported file type {Path(name).suffix or '(none)'!r} for {name or 'the file'}; send "
                         f"one of {', '.join(sorted(FORMATS))}", field="filename")
    try:
        data = base64.b64decode(body.file, validate=True)
    except (binascii.Error, ValueError):
        raise InputError("file is not valid base64", field="file") from None
    return extract(Path(name), data).text, name
